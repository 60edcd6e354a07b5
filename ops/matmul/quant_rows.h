// Quantized weights read as ggml blocks on the device (ops/matmul/vulkan_quant.cpp), for every variant that
// decodes blocks in its kernels (matmul, lm_head, moe_experts, shared_expert).
#pragma once
#include "ops/vulkan_variant.h"

namespace hl::gpu {

// Whether the shaders (ops/shaders/quant_blocks.glsl) decode this weight's storage type.
bool vk_quant_decodes(const WeightRef& w);
// Its raw rows on the device, checked: a decodable type, whole 32-value units per row, offsets within 32 bits,
// bindable as one storage buffer.
Tensor vk_quant_rows(VariantCtx& c, const WeightRef& w, const std::string& what);
// Its K-quant blocks in chunk columns of `group` rows (WeightStore::device_chunk_columns), checked likewise.
Tensor vk_quant_chunk_columns(VariantCtx& c, const WeightRef& w, int64_t group, const std::string& what);

}  // namespace hl::gpu

namespace hl::gpu {

// The residual add and rmsnorm in front of a mat-vec, folded into it (qmatvec_direct_norm*.comp): the kernel's x is
// the residual stream, its products read rmsnorm(x + a) * gain, and it writes s = x + a.
struct HeadAddNorm {
  Tensor a, gain;  // the addend [T, K]; the gain [K], on the device
  float eps;
  Tensor s;        // written by the call
};

// A per-head 1 / rms in front of a mat-vec, folded into it (qmatvec_direct_rms*.comp): its products read x_h / sqrt(sum of
// head h's partial sums of squares / dv + eps) for each head h of dv columns (the Gated DeltaNet's gated output, whose norm
// gdn_decode leaves to the output projection).
struct HeadRmsScale {
  Tensor sumsq;     // [T, K / dv * parts], on the device
  uint32_t dv, parts;  // dv: a multiple of the widest span of x a weight unit reads (head_scale_fits)
  float eps;
};
// Whether a head of dv columns holds whole units of w (a K-quant unit reads values up to 64 (Q4_K, Q5_K) or 128 (Q6_K)
// columns apart, within an aligned group of that many), so that each unit's products take one head's factor.
bool head_scale_fits(const WeightRef& w, int64_t dv);

// y_s = x w_s^T for up to four weights that share x, as one dispatch of qmatvec_direct.comp (each weight a segment
// with its own block type): matmul's and lm_head's vulkan:qmatvec_direct (one weight) and matmul_group's. Tunables
// "<tune_op>.qmatvec_direct.*"; `what` names the caller in errors. With `head`: qmatvec_direct_norm.comp, x the residual
// and the products on rmsnorm(x + head.a) * head.gain (add_rmsnorm_matmul_group's vulkan:fused_decode). With `rms`:
// qmatvec_direct_rms.comp, each head's products times its 1 / rms (rms_scaled_matmul's vulkan:fused_decode).
std::vector<Tensor> qmatvec_direct_group(VariantCtx& c, const Tensor& x, const std::vector<WeightRef>& ws,
                                         const std::string& tune_op, const std::string& what, HeadAddNorm* head = nullptr,
                                         const HeadRmsScale* rms = nullptr);

// Rows per subgroup pass for a qmatvec_direct call over n weight rows: the most, up to `rows`, that still leave at least
// `min_passes` passes (0: `rows`); at least 1. More rows per pass keep more loads in flight per subgroup; fewer leave
// more subgroups where the rows are few.
uint32_t qmatvec_pass_rows(uint32_t rows, uint32_t min_passes, int64_t n);

// x [T, K] rounded to 8 bits per block of 32 values (quantize_x8.comp), for the integer dot-product kernels: the values
// q [T, K / 4] (four per word), the block scales d [T, K / 32], and d * sum(q) per 16 values s [T, K / 16].
struct X8 {
  Tensor q, d, s;
};
X8 quantize_x8(Device& d, const Tensor& x);

// The relative L2 held to by kernels that take x as 16-bit fixed point (ops/shaders/x16.glsl; tunables "*.x16"): each x
// value within 2^-16 of its run's largest, up to ~10x more on a row through K-quants' offsets (mul q - sub: the two
// terms cancel); measured 1.5e-5 (q4_K) to 3.7e-5 (q6_K) at full shapes.
extern const double kX16Tolerance;

}  // namespace hl::gpu
