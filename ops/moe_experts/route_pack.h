// The stages of moe_experts = vulkan:route_pack (ops/moe_experts/vulkan_route_pack.cpp), exposed for their own tests.
// Stage 1, the routes expert/weight [T, k], is the moe_router op. Entries are i = t * k + j (token, slot).
#pragma once
#include "ops/vulkan_variant.h"

namespace hl::gpu::route_pack {

// Stage 2: entries per expert in each block of moe_experts.route_pack.block consecutive entries of
// expert [T, k] (i32): [blocks, E] (i32). Integer atomics only, so deterministic.
Tensor block_counts(Device& d, const Tensor& expert, int64_t E);

// Stage 3: the entries grouped by expert.
struct Packed {
  Tensor offsets;  // [1, E + 1] i32: first packed row of each expert; offsets[E] = T * k
  Tensor tiles;    // [1, E + 1] i32: first row tile of each expert, tiles of tile_rows rows; tiles[E] = all
  Tensor rows;     // [1, T * k] i32: entry ids by expert, in (token, slot) order within an expert
  int64_t E = 0, k = 0, tile_rows = 0;
};
// tile_rows: rows per tile of the tile list (0: moe_experts.route_pack.rows, the scalar GEMM's; the
// cooperative-matrix GEMM takes cm_tile_rows).
Packed pack(Device& d, const Tensor& expert, int64_t E, uint32_t tile_rows = 0);

// Stage 4: each entry's expert output down_e(silu(gate_e x_t) * up_e x_t), unweighted, [T * k, H] by entry
// id; experts stacked in gate, up [E*F, H] and down [E*H, F]: f32, or quantized (GGUF blocks decoded in the
// kernel) where the quantized kernels read the type (ops/matmul/vulkan_quant.cpp), else dequantized to f32.
// The GEMM: Tiled, route_gemm.comp (f32, or blocks decoded into its tiles; long chunks dequantize the stacks
// first), exact f32; Coopmat, the quantized GEMM of ops/shaders/qgemm_cm.glsl on cooperative matrices (needs
// coopmat_unavailable(d) == "" and p packed in tiles of tile_rows(d, Gemm::Coopmat)), A and the weights rounded to
// f16, f32 accumulation; Qgemm, that GEMM on scalar FMAs (A in f32, the weights rounded to f16); I8, the GEMM on 8-bit
// integer dot products (ops/matmul/qgemm_i8.h: x and h rounded to 8 bits per 32 values; q8_0 and K-quant experts, gate
// and up of one type).
enum class Gemm { Tiled, Qgemm, Coopmat, I8 };
Tensor grouped_swiglu(VariantCtx& c, const Packed& p, const Tensor& x, const WeightRef& gate, const WeightRef& up,
                      const WeightRef& down, Gemm gemm = Gemm::Tiled);

// Why the cooperative-matrix GEMM cannot run on d ("" = it can): VK_KHR_cooperative_matrix with a 16x16x16
// f16 x f16 + f32 subgroup shape, shaderFloat16, the Vulkan memory model, full subgroups. With the tunable
// moe_experts.route_pack_coopmat.cm_emulate = 1 (a test hook) the kernel runs with emulated matrices
// (qgemm_cm_emul.comp) wherever there is shaderFloat16.
std::string coopmat_unavailable(const Device& d);
// Why vulkan:route_pack_warp cannot run on d ("" = it can): coopmat_unavailable's reasons (with its own cm_emulate,
// moe_experts.route_pack_warp.cm_emulate) and 16-bit storage (A is read as f16 rows).
std::string warp_unavailable(const Device& d);
// vulkan:route_pack_coopmat's grouped GEMM is the quantized GEMM on cooperative matrices (ops/matmul/qgemm_cm.h),
// its tunables under this prefix.
inline constexpr const char* kCmTune = "moe_experts.route_pack_coopmat.";
// vulkan:route_pack_qgemm's: the same GEMM on scalar FMAs.
inline constexpr const char* kQgemmTune = "moe_experts.route_pack_qgemm.";
// vulkan:route_pack_i8's: the GEMM on 8-bit integer dot products.
inline constexpr const char* kI8Tune = "moe_experts.route_pack_i8.";
// Its relative-L2 bound against the f32 reference: x rounded to 8 bits per 32 values (~0.5% of gate's and up's products,
// ~0.7% of h through SwiGLU), then h rounded so too, whose products of near-Gaussians put a 32-value block's largest at
// ~5 sigma: a step of 5 sigma / 127, ~1.1% of down's product. Measured 1.16e-2 to 1.2e-2 on lavapipe (q4_K/q6_K,
// q5_K/q4_K, q8_0; H 192 to 2048): 3e-2.
inline constexpr double kI8Tolerance = 3e-2;
// Whether that GEMM takes these experts: types it reads, gate and up of one type.
bool i8_takes(const WeightRef& gate, const WeightRef& up, const WeightRef& down);
// Rows per packed tile that a GEMM takes (Tiled: moe_experts.route_pack.rows).
uint32_t tile_rows(const Device& d, Gemm gemm);
// Why the scalar qgemm cannot run on d ("" = it can): shaderFloat16.
std::string qgemm_unavailable(const Device& d);
// Whether that GEMM (either math) takes these experts: whole steps of two 32-value units, decodable types, gate and up in one order
// of values within a unit.
bool coopmat_takes(const WeightRef& gate, const WeightRef& up, const WeightRef& down);  // moe_experts.route_pack_coopmat.rows, as the shared memory allows
// Its relative-L2 bound against the f32 reference (Variant::precision_tolerance): f16 rounding of the GEMM
// inputs, ~5e-4 expected (ops/moe_experts/test_route_pack.cpp derives it), with margin.
inline constexpr double kCoopmatTolerance = 3e-3;

// Stage 5: y [T, H] = sum over slots j, in slot order, of weight[t, j] * ye[t * k + j].
Tensor scatter(Device& d, const Tensor& ye, const Tensor& weight);

}  // namespace hl::gpu::route_pack
