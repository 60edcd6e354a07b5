// The quantized GEMM on cooperative matrices or scalar FMAs (ops/shaders/qgemm_cm.glsl): matmul's and lm_head's
// vulkan:qgemm_coopmat over a prompt chunk's rows (qgemm_cm.comp: each subgroup 64 x 64 outputs), and moe_experts'
// vulkan:route_pack_coopmat over route-packed rows (qgemm_gate_cm.comp: 32 x 32 of gate and of up;
// qgemm_down_cm.comp: 32 x 64); the same on scalar FMAs (qgemm*_sc.comp) as matmul's and lm_head's vulkan:qgemm and
// moe_experts' vulkan:route_pack_qgemm. Tunables <prefix>warp_rows, warp_cols (the grid of subgroups per workgroup: the
// tile is that many subgroup blocks), k_units (32-value units of K per step), prefetch (what the next step holds in
// registers: bit 0 A, bit 1 the weight units), cm_emulate (1: the same kernels with emulated matrices, *_emul.comp: the test
// hook that runs them on devices without cooperative matrices).
#pragma once
#include "ops/moe_experts/route_pack.h"

namespace hl::gpu {

// A weight as the kernel reads it: raw rows (ggml blocks, or f32/f16 values) on the device, its type and row bytes;
// columns (routed only, K-quants): t holds the blocks in chunk columns of one expert's rows instead
// (WeightStore::device_chunk_columns), row_bytes unused.
struct QgemmWeight {
  Tensor t;
  uint32_t type = 0, row_bytes = 0;
  bool columns = false;
};
QgemmWeight qgemm_weight(VariantCtx& c, const WeightRef& w, const std::string& what);
// The same for a dense pass on cooperative matrices: a K-quant weight from its chunk columns (all its rows one group)
// where <prefix>columns asks.
QgemmWeight qgemm_dense_weight(VariantCtx& c, const WeightRef& w, const std::string& prefix, const std::string& what);

// Which kernel: dense rows, route_pack's gate/up with SwiGLU, its down pass, or two weights of dense rows (the gated
// kernel's tiles, both products written as they are).
enum class QgemmKernel { Dense, Gate, Down, Pair };
struct QgemmTile {
  uint32_t sr, sc;      // subgroup grid
  uint32_t rows, cols;  // the tile: 16 MR SR x 16 MC SC
  uint32_t wg;
  uint32_t units;       // 32-value units of K per step (<prefix>k_units)
};
// The tile on d: the tunables' subgroup grid, narrowed where shared memory is short.
// scalar: the kernel on scalar FMAs (qgemm*_sc.comp), its grid <prefix>thread_rows x thread_cols invocations.
QgemmTile qgemm_tile(const Device& d, const std::string& prefix, QgemmKernel k, bool scalar = false);
// Whether gate and up can share one pass: the same order of values within a 32-value unit.
bool qgemm_same_unit_order(uint32_t type0, uint32_t type1);
// "" where it can run (emulated too; scalar: wherever there is shaderFloat16).
std::string qgemm_unavailable(const Device& d, const std::string& prefix, bool scalar = false);
// Its relative-L2 bound against the f32 reference (Variant::precision_tolerance): A and the weights rounded to
// f16 (each product off by up to 2^-11 relative, independent over K terms), f32 accumulation: ~5e-4 expected.
inline constexpr double kQgemmTolerance = 3e-3;

// Dense: y [T, N] = x [T, K] w^T.
Tensor qgemm_dense(Device& d, const std::string& prefix, const Tensor& x, const QgemmWeight& w, uint32_t N,
                   bool scalar = false);
// Two weights of one input in one pass: the partial products of w0 and w1 as `part` [2 ks T, N]: slices [0, ks) w0's
// (x w0^T summed over them), slices [ks, 2 ks) w1's, each a split of K (ks from the same plan as qgemm_dense's). The
// weights must share their order of values within a unit (qgemm_same_unit_order); the caller adds the slices up.
struct QgemmPair {
  Tensor part;
  uint32_t ks = 1;
};
QgemmPair qgemm_dense_pair(Device& d, const std::string& prefix, const Tensor& x, const QgemmWeight& w0,
                           const QgemmWeight& w1, uint32_t N, bool scalar = false);
// Routed over p (packed in tiles of qgemm_tile(..., Gate).rows rows): gated, h [T k, N] (packed order) =
// silu(x w0_e^T) * (x w1_e^T) with x's row of each entry's token; else ye [T k, N] (entry order) = a w0_e^T with a
// the packed rows. K = the weights' columns. half_h (matrix kernels): h in f16, two values per float of its tensor
// ([T k, N / 2]): gate/up writes it so, down reads its A so. split_k (gated, at least 1): gate/up's K in that many
// parts (at most steps / 2, each a workgroup), both products' partial sums added and SwiGLU applied by a second pass.
// Gate and up are both in chunk columns or neither.
void qgemm_routed(Device& d, const std::string& prefix, const route_pack::Packed& p, bool gated, const Tensor& a,
                  const QgemmWeight& w0, const QgemmWeight& w1, Tensor& out, uint32_t K, uint32_t N, bool scalar = false,
                  bool half_h = false, uint32_t split_k = 1);

}  // namespace hl::gpu
