// The quantized GEMM on 8-bit integer dot products (ops/shaders/qgemm_i8.glsl), for devices without matrix units:
// matmul's and lm_head's vulkan:qgemm_i8 over a prompt chunk's rows (qgemm_i8.comp: 4 x 8 outputs per invocation), and
// moe_experts' vulkan:route_pack_i8 over route-packed rows (qgemm_i8_gate.comp: 4 x 4 of gate and of up, SwiGLU in the
// epilogue; qgemm_i8_down.comp: 4 x 4). A is rounded to 8 bits per 32 values first (quantize_x8). Tunables
// <prefix>thread_rows, thread_cols (the grid of invocations), slots (64-value slots, q8_0 32, per K step: fewer where the
// row's slots or shared memory need), prefetch (1: the next step's A and Q4_K / Q5_K words in registers during the
// products).
#pragma once
#include "ops/matmul/qgemm_cm.h"
#include "ops/matmul/quant_rows.h"

namespace hl::gpu {

// The block types it reads: q8_0, q4_K, q5_K, q6_K.
bool qgemm_i8_reads(quant::Type t);
// "" where it can run: shader integer dot product.
std::string qgemm_i8_unavailable(const Device& d);
// Rows of A per tile (4 thread_rows): what route_pack packs its tiles in.
uint32_t qgemm_i8_tile_rows(const Device& d, const std::string& prefix);
// x rounded to 8 bits per 32 values (quantize_x8) and each run's products from the weight's bytes: ~0.5% relative L2 of
// y on Gaussian data (the derivation at vulkan:qmatvec_i8_staged's registration); 2e-2.
inline constexpr double kQgemmI8Tolerance = 2e-2;

// Dense: y [T, N] = x [T, K] w^T, x as quantize_x8 gives it.
Tensor qgemm_i8_dense(Device& d, const std::string& prefix, const X8& x, const QgemmWeight& w, uint32_t N, uint32_t K);
// Routed over p (packed in tiles of qgemm_i8_tile_rows rows): gated, h [T k, N] (packed order) = silu(x w0_e^T) *
// (x w1_e^T) with x's row of each entry's token (w0 and w1 of one type); else ye [T k, N] (entry order) = a w0_e^T with a
// the packed rows. K = the weights' columns.
void qgemm_i8_routed(Device& d, const std::string& prefix, const route_pack::Packed& p, bool gated, const X8& a,
                     const QgemmWeight& w0, const QgemmWeight& w1, Tensor& out, uint32_t K, uint32_t N);

}  // namespace hl::gpu
