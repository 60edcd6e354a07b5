// matmul / lm_head (vulkan:qmatvec_i8): y[T, N] = x[T, K] wq[N, K]^T for decode, with w in ggml blocks
// (Q4_K, Q5_K, Q6_K, Q8_0) and x as 8-bit integers (quantize_x8.comp): the products are 4-way integer dot
// products (SPIR-V OpSDot, core in Vulkan 1.3), so decoding a weight costs a mask and a shift per 4 values
// instead of a conversion and a multiply-add per value; on the H200 the float kernel (qmatvec) is bound by
// exactly that arithmetic, not by the weight stream.
//
// Layout: a row is cut into slots of 64 values (K-quants: a quarter of a 256-value block; Q8_0: one 32-value
// block), each slot four (Q8_0: two) runs of 16 values with one multiplier and one offset per run. C lanes
// of a subgroup share a row (C = the next power of two of the slots per row, at most the subgroup size),
// each reading its slots' bytes straight from memory, 16 at a time, with no staging; the C partial sums meet
// through subgroup shuffles. Rows are walked grid-stride, so any subgroup size works (8, 32, 64).
// The weights of a slot are decoded once and serve COLS tokens.
#version 450
#extension GL_EXT_spirv_intrinsics : require
#extension GL_KHR_shader_subgroup_shuffle : require
layout(local_size_x_id = 0) in;
layout(constant_id = 0) const uint WG = 128;
layout(constant_id = 1) const uint TYPE = 14;  // ggml type id
layout(constant_id = 2) const uint COLS = 4;   // tokens per pass over the weights
layout(constant_id = 3) const uint SPL = 1;    // slots a lane decodes per step (their loads in flight together)
#include "common.glsl"

layout(std430, binding = 0) readonly buffer XQ { uvec4 xq4[]; };  // [T, K / 16]: 16 int8 values each
layout(std430, binding = 1) readonly buffer XD { float xd[]; };   // [T, K / 32]: scale per 32 values
layout(std430, binding = 2) readonly buffer XS { float xs[]; };   // [T, K / 16]: scale * sum(q) per 16
layout(std430, binding = 3) readonly buffer W { uint wq[]; };      // raw rows (WeightStore::device_raw)
layout(std430, binding = 4) writeonly buffer Y { float y[]; };    // [T, N]
layout(push_constant) uniform Push { uint T, K, N, row_bytes, slots, slots_p2; } pc;
#define HLQ_WORD(buf, i) wq[i]
#include "quant_blocks.glsl"

// OpSDot with PackedVectorFormat4x8Bit: the dot product of four signed bytes by four signed bytes.
spirv_instruction(extensions = ["SPV_KHR_integer_dot_product"], capabilities = [6019, 6018], id = 4450) int sdot4x8(int a, int b, spirv_literal int format);
int dot16(uvec4 q, uvec4 x) {
  return sdot4x8(int(q.x), int(x.x), 0) + sdot4x8(int(q.y), int(x.y), 0) + sdot4x8(int(q.z), int(x.z), 0) +
         sdot4x8(int(q.w), int(x.w), 0);
}

const uint RUNS = TYPE == HLQ_Q8_0 ? 2u : 4u;

// 16 bytes from a 2-byte aligned offset (Q6_K and Q8_0 blocks are 210 and 34 bytes; rows carry a spare word).
uvec4 load16(uint b) { return hlq_load16(TYPE, 0u, b); }

// Slot s of the row starting at byte `row`: the quantized values of its runs as bytes (q[r]), each run's
// multiplier and offset (value = mul * q - off), and where each run starts in the row.
void decode(uint row, uint s, out uvec4 q[4], out vec4 mul, out vec4 off, out uvec4 start) {
  if (TYPE == HLQ_Q8_0) {  // { f16 d; i8 qs[32] }: value d * q, signed bytes as they are
    const uint b = row + 34u * s;
    const float d = hlq_f16(0u, b);
    q[0] = load16(b + 2u);
    q[1] = load16(b + 18u);
    q[2] = q[3] = uvec4(0u);
    mul = vec4(d);
    off = vec4(0.0);
    start = uvec4(32u * s, 32u * s + 16u, 0u, 0u);
    return;
  }
  const uint blk = s >> 2u, j = s & 3u;
  if (TYPE == HLQ_Q4_K || TYPE == HLQ_Q5_K) {
    // { f16 d, dmin; u8 scales[12]; (Q5_K: u8 qh[32];) u8 qs[128] }: slot j holds values 64j .. 64j + 63 of
    // the block, sub-block 2j (low nibbles of qs[32j ..]) then 2j + 1 (high nibbles); Q5_K adds bit 2j (2j + 1)
    // of qh[l] as bit 4.
    const uint b = row + (TYPE == HLQ_Q5_K ? 176u : 144u) * blk;
    const vec2 dm = unpackHalf2x16(wq[b >> 2u]);
    const uvec3 sc = uvec3(wq[(b >> 2u) + 1u], wq[(b >> 2u) + 2u], wq[(b >> 2u) + 3u]);
    const uvec2 lo = hlq_scale_min_k4(sc, 2u * j), hi = hlq_scale_min_k4(sc, 2u * j + 1u);
    const uint qs = b + (TYPE == HLQ_Q5_K ? 48u : 16u) + 32u * j;
    const uvec4 a = uvec4(wq[qs >> 2u], wq[(qs >> 2u) + 1u], wq[(qs >> 2u) + 2u], wq[(qs >> 2u) + 3u]);
    const uvec4 c = uvec4(wq[(qs >> 2u) + 4u], wq[(qs >> 2u) + 5u], wq[(qs >> 2u) + 6u], wq[(qs >> 2u) + 7u]);
    q[0] = a & 0x0F0F0F0Fu;
    q[1] = c & 0x0F0F0F0Fu;
    q[2] = (a >> 4u) & 0x0F0F0F0Fu;
    q[3] = (c >> 4u) & 0x0F0F0F0Fu;
    if (TYPE == HLQ_Q5_K) {
      const uint qh = (b >> 2u) + 4u;
      const uvec4 h0 = uvec4(wq[qh], wq[qh + 1u], wq[qh + 2u], wq[qh + 3u]);
      const uvec4 h1 = uvec4(wq[qh + 4u], wq[qh + 5u], wq[qh + 6u], wq[qh + 7u]);
      q[0] |= ((h0 >> (2u * j)) & 0x01010101u) << 4u;
      q[1] |= ((h1 >> (2u * j)) & 0x01010101u) << 4u;
      q[2] |= ((h0 >> (2u * j + 1u)) & 0x01010101u) << 4u;
      q[3] |= ((h1 >> (2u * j + 1u)) & 0x01010101u) << 4u;
    }
    mul = vec4(dm.x * float(lo.x), dm.x * float(lo.x), dm.x * float(hi.x), dm.x * float(hi.x));
    off = vec4(dm.y * float(lo.y), dm.y * float(lo.y), dm.y * float(hi.y), dm.y * float(hi.y));
    start = 256u * blk + 64u * j + uvec4(0u, 16u, 32u, 48u);
    return;
  }
  // Q6_K { u8 ql[128]; u8 qh[64]; i8 scales[16]; f16 d }: value 128h + 32k + l = d * sc[8h + 2k + l/16] * (q - 32),
  // q = nibble (k >= 2) of ql[64h + 32(k%2) + l] | bits 2k, 2k+1 of qh[32h + l] as bits 4, 5. Slot j = 2h + (l >= 16):
  // the four runs k = 0..3 of 16 values l .. l + 15.
  const uint b = row + 210u * blk, h = j >> 1u, l0 = 16u * (j & 1u);
  const uvec4 qa = load16(b + 64u * h + l0), qb = load16(b + 64u * h + 32u + l0), qh = load16(b + 128u + 32u * h + l0);
  q[0] = (qa & 0x0F0F0F0Fu) | ((qh & 0x03030303u) << 4u);
  q[1] = (qb & 0x0F0F0F0Fu) | (((qh >> 2u) & 0x03030303u) << 4u);
  q[2] = ((qa >> 4u) & 0x0F0F0F0Fu) | (((qh >> 4u) & 0x03030303u) << 4u);
  q[3] = ((qb >> 4u) & 0x0F0F0F0Fu) | (((qh >> 6u) & 0x03030303u) << 4u);
  const float d = hlq_f16(0u, b + 208u);
  const uint si = b + 192u + 8u * h + (j & 1u);
  for (uint k = 0u; k < 4u; ++k) mul[k] = d * hlq_i8(0u, si + 2u * k);
  off = 32.0 * mul;
  start = 256u * blk + 128u * h + l0 + uvec4(0u, 32u, 64u, 96u);
}

void main() {
  // Lanes per row (a power of two for the shuffles): the row's slots over about SPL per lane, at most the
  // subgroup; rows per subgroup R.
  const uint C = min(gl_SubgroupSize, max(1u, pc.slots_p2 >> findMSB(SPL))), R = gl_SubgroupSize / C;
  const uint cl = gl_SubgroupInvocationID % C, sub = gl_SubgroupInvocationID / C;
  const uint nsg = hl_num_subgroups(), first = hl_group_index() * nsg + gl_SubgroupID;
  const uint stride = gl_NumWorkGroups.x * gl_NumWorkGroups.y * nsg * R;
  for (uint r0 = first * R; r0 < pc.N; r0 += stride) {  // uniform per subgroup
    const uint row = r0 + sub;
    const bool live = row < pc.N;
    for (uint t0 = 0u; t0 < pc.T; t0 += COLS) {
      float acc[COLS];
      for (uint c = 0u; c < COLS; ++c) acc[c] = 0.0;
      for (uint s0 = cl; live && s0 < pc.slots; s0 += C * SPL) {
        uvec4 q[4 * SPL], start[SPL];  // SPL slots decoded (their loads in flight) before any product
        vec4 mul[SPL], off[SPL];
        for (uint j = 0u; j < SPL; ++j) {
          uvec4 qj[4];
          const uint s = min(s0 + j * C, pc.slots - 1u);  // past the row's slots: a repeat, weighted 0 below
          decode(row * pc.row_bytes, s, qj, mul[j], off[j], start[j]);
          for (uint r = 0u; r < 4u; ++r) q[4u * j + r] = qj[r];
          if (s0 + j * C >= pc.slots) mul[j] = off[j] = vec4(0.0);
        }
        for (uint c = 0u; c < COLS; ++c) {
          const uint t = t0 + c;
          if (t >= pc.T) break;
          const uint x16 = t * (pc.K >> 4u);
          for (uint j = 0u; j < SPL; ++j)
            for (uint r = 0u; r < RUNS; ++r) {
              const uint i = x16 + (start[j][r] >> 4u);
              acc[c] += mul[j][r] * xd[i >> 1u] * float(dot16(q[4u * j + r], xq4[i])) - off[j][r] * xs[i];
            }
        }
      }
      for (uint c = 0u; c < COLS; ++c)
        for (uint o = C >> 1u; o > 0u; o >>= 1u) acc[c] += subgroupShuffleXor(acc[c], o);
      if (live && cl == 0u)
        for (uint c = 0u; c < COLS && t0 + c < pc.T; ++c) y[(t0 + c) * pc.N + row] = acc[c];
    }
  }
}
