// matmul / lm_head (vulkan:qmatvec_direct): y[T, N] = x[T, K] w[N, K]^T for decode, w in ggml blocks
// (quant_blocks.glsl), x in f32 and f32 accumulation: the exact products of vulkan:qmatvec, with the weight
// stream read differently.
//
// Why: qmatvec stages a workgroup's rows in shared memory behind a barrier, so a workgroup has one round of
// loads in flight and then computes; at the decode projections' sizes (2 to 10 MB) that serialises load
// latency and arithmetic (q4_K 2048 -> 8192: 20 us on the H200, 2.1 us of bytes). Here nothing waits on a
// barrier after x is staged: each subgroup takes R rows per pass, every lane the same 32-value units of
// each row (UPL of them per step, unrolled), and all R x UPL units' words are independent loads the
// compiler issues before the arithmetic. Q4_K/Q5_K fields are 16-byte loads (HLQ_UVEC4); Q6_K and Q8_0
// blocks are only 2-byte aligned and read as words.
// x sits in shared memory (K floats): one 16-byte read of x serves R rows. Subgroups walk passes
// grid-stride, so any subgroup size works.
#version 450
#include "qmatvec_direct.glsl"
