// ssm_scan vulkan:chunked_two_pass, pass 2 of 2: sequential over the pass's chunks, a workgroup per (value head h,
// block of CT = 16 or 32 value columns j0..), its slice of the state S [d_k x CT] carried in f32 accumulators (registers)
// from the first chunk to the last. Per chunk b (ssm_two_pass_prep's outputs):
//   S_c -> shared f16 (the products' operand; S itself never passes through f16)
//   V' = U - W S_c           U loaded as the accumulator, -W from memory as A          -> shared f16
//   O  = Qbar S_c + P V'     written to o (rows past T through the subgroup's scratch)
//   S  = e^{gamma_last} S_c + Kbar^T V'     Kbar read column-major as A = Kbar^T
// NSG subgroups of the device's largest subgroup size compute (full subgroups; spare ones idle). Every f16 matrix
// operand lives in an array of f16vec4 (offsets and strides in 8-byte units, each a multiple of 16 bytes), so a
// matrix load or store moves whole vectors.
#ifndef HL_SSM_TWO_PASS_SCAN_GLSL
#define HL_SSM_TWO_PASS_SCAN_GLSL
#extension GL_EXT_control_flow_attributes : require
#extension GL_EXT_shader_16bit_storage : require
#extension GL_KHR_shader_subgroup_basic : require
layout(local_size_x_id = 0) in;
layout(constant_id = 0) const uint WG = 128;  // NSG * the largest subgroup size
layout(constant_id = 1) const uint DK = 128;  // a multiple of 32, at most 128
layout(constant_id = 2) const uint DV = 128;  // a multiple of 32
#include "common.glsl"
#define HL_CM_VEC 4u
#include "coopmat.glsl"
layout(constant_id = 3) const uint CT = 32;   // value columns per workgroup: 16 or 32
layout(constant_id = 4) const uint NSG = 4;  // subgroups that compute: 4, or 8 (with CT = 32)
const uint C = 64u, CB = CT / 16u, SP = CT + 8u;
const uint SB = DK / 16u * CB;  // state blocks: at most 16, at most 4 per subgroup
const uint VB = C / 16u * CB;   // blocks of V' and of O: at most 8, at most 2 per subgroup
const uint KB = 8u;                     // 16-deep slices of d_k: at most 128 / 16

layout(std430, binding = 5) restrict readonly buffer Gam_ { float gam[]; };
layout(std430, binding = 6) restrict readonly buffer Wn_ { f16vec4 wn[]; };
layout(std430, binding = 7) restrict readonly buffer U_ { float u[]; };
layout(std430, binding = 8) restrict readonly buffer Qbar_ { f16vec4 qbar[]; };
layout(std430, binding = 9) restrict readonly buffer Kbar_ { f16vec4 kbar[]; };
layout(std430, binding = 10) restrict readonly buffer P_ { f16vec4 pm[]; };
layout(std430, binding = 11) restrict buffer State_ { float state[]; };  // [nv][DK * DV], S[i][j] at i * DV + j
layout(std430, binding = 12) restrict writeonly buffer O_ { float o[]; };   // [T][nv * DV]
layout(push_constant) uniform Push { uint t0, T, nk, nv, nch, tiled; } pc;

shared f16vec4 sS[DK * SP / 4u];
shared f16vec4 sV[C * SP / 4u];
shared float scr[NSG * 256u];

#ifdef HL_CM_EMULATE
const uint HL_CM_ID_sS = 0u, HL_CM_ID_sV = 1u, HL_CM_ID_wn = 2u, HL_CM_ID_qbar = 3u, HL_CM_ID_kbar = 4u, HL_CM_ID_pm = 5u;
float hl_cm_read(uint id, uint i) {
  const uint e = i / 4u;
  const f16vec4 x = id == 0u ? sS[e] : id == 1u ? sV[e] : id == 2u ? wn[e] : id == 3u ? qbar[e] : id == 4u ? kbar[e] : pm[e];
  return float(x[i % 4u]);
}
void hl_cm_write(uint id, uint i, float16_t x) {
  if (id == 0u) sS[i / 4u][i % 4u] = x;
  else sV[i / 4u][i % 4u] = x;
}
#endif

void main() {
  const uint blocks = DV / CT, grp = hl_group_index(), h = grp / blocks;
  if (h >= pc.nv) return;  // uniform per workgroup
  const uint j0 = grp % blocks * CT, s = gl_SubgroupID, ldo = pc.nv * DV, sbase = h * DK * DV;
  const bool computes = s < NSG;

  hl_cm_acc st[4];  // state blocks t = s + NSG q: rows 16 (t / 2).., columns j0 + 16 (t % 2)..
  [[unroll]] for (uint qi = 0u; qi < 4u; ++qi) {
    const uint t = s + NSG * qi;
    if (computes && t < SB) HL_CM_LOAD_ACC(st[qi], state, sbase + t / CB * 16u * DV + j0 + t % CB * 16u, HL_CM_ROW_MAJOR, DV);
  }

  // Each product's operands from memory are loaded a phase ahead of it (they do not depend on the state), so their
  // round trips overlap the barriers and products before it: V''s (U, W) for the next chunk under this chunk's
  // update, O's (Qbar, P) under the staging of V', the update's (Kbar) under O's products.
  hl_cm_a wf[2u * KB];  // [qi * KB + kb]
  hl_cm_acc acc[2];
#define SSM_LOAD_V_OPERANDS(bb)                                                                              \
  [[unroll]] for (uint qi = 0u; qi < 2u; ++qi) {                                                             \
    const uint t = s + NSG * qi, rb = t / CB, cb = t % CB;                                                   \
    if (!computes || t >= VB) continue;                                                                      \
    HL_CM_LOAD_ACC(acc[qi], u, ((bb) * C + rb * 16u) * DV + j0 + cb * 16u, HL_CM_ROW_MAJOR, DV);             \
    [[unroll]] for (uint kb = 0u; kb < KB; ++kb)                                                             \
      if (kb < DK / 16u) HL_CM_LOAD_A(wf[qi * KB + kb], wn, (((bb) * C + rb * 16u) * DK + 16u * kb) / 4u, HL_CM_ROW_MAJOR, (DK) / 4u); \
  }
  SSM_LOAD_V_OPERANDS(h * pc.nch)

  for (uint c = 0u; c < pc.nch; ++c) {
    const uint b = h * pc.nch + c, row0 = pc.t0 + c * C;
    const float lam = exp(gam[b * C + C - 1u]);
    barrier();  // the previous chunk's reads of sS and sV done
    [[unroll]] for (uint qi = 0u; qi < 4u; ++qi) {
      const uint t = s + NSG * qi;
      if (computes && t < SB) HL_CM_STORE_F16(sS, (t / CB * 16u * SP + t % CB * 16u) / 4u, st[qi], HL_CM_ROW_MAJOR, (SP) / 4u);
    }
    barrier();

    // V' = U - W S_c: 4 x 2 blocks, two per subgroup
    [[unroll]] for (uint qi = 0u; qi < 2u; ++qi) {
      const uint t = s + NSG * qi, rb = t / CB, cb = t % CB;
      if (!computes || t >= VB) continue;
      [[unroll]] for (uint kb = 0u; kb < KB; ++kb)
        if (kb < DK / 16u) {
          hl_cm_b bm;
          HL_CM_LOAD_B(bm, sS, (16u * kb * SP + cb * 16u) / 4u, HL_CM_ROW_MAJOR, (SP) / 4u);
          acc[qi] = hl_cm_muladd(wf[qi * KB + kb], bm, acc[qi]);
        }
      HL_CM_STORE_F16(sV, (rb * 16u * SP + cb * 16u) / 4u, acc[qi], HL_CM_ROW_MAJOR, (SP) / 4u);
    }
    // O's operands from memory (Qbar, P: zero above the diagonal, its blocks there neither written nor read)
    hl_cm_a qf[2u * KB];  // one declarator per declaration: glslang types a second one wrongly
    hl_cm_a pf[2u * (C / 16u)];
    [[unroll]] for (uint qi = 0u; qi < 2u; ++qi) {
      const uint t = s + NSG * qi, rb = t / CB;
      if (!computes || t >= VB) continue;
      [[unroll]] for (uint kb = 0u; kb < KB; ++kb)
        if (kb < DK / 16u) HL_CM_LOAD_A(qf[qi * KB + kb], qbar, ((b * C + rb * 16u) * DK + 16u * kb) / 4u, HL_CM_ROW_MAJOR, (DK) / 4u);
      [[unroll]] for (uint kb = 0u; kb < C / 16u; ++kb)
        if (kb <= rb) HL_CM_LOAD_A(pf[qi * (C / 16u) + kb], pm, ((b * C + rb * 16u) * C + kb * 16u) / 4u, HL_CM_ROW_MAJOR, (C) / 4u);
    }
    barrier();  // sV written
    // The update's Kbar^T blocks, loaded under O's products
    hl_cm_a kf[4u * (C / 16u)];
    [[unroll]] for (uint qi = 0u; qi < 4u; ++qi) {
      const uint t = s + NSG * qi, rb = t / CB;
      if (!computes || t >= SB) continue;
      [[unroll]] for (uint kb = 0u; kb < C / 16u; ++kb)
        HL_CM_LOAD_A(kf[qi * (C / 16u) + kb], kbar, ((b * C + 16u * kb) * DK + rb * 16u) / 4u, HL_CM_COL_MAJOR, (DK) / 4u);
    }

    // O = Qbar S_c + P V'
    [[unroll]] for (uint qi = 0u; qi < 2u; ++qi) {
      const uint t = s + NSG * qi, rb = t / CB, cb = t % CB;
      if (!computes || t >= VB) continue;
      hl_cm_acc oa = hl_cm_fill(0.0);
      [[unroll]] for (uint kb = 0u; kb < KB; ++kb)
        if (kb < DK / 16u) {
          hl_cm_b bm;
          HL_CM_LOAD_B(bm, sS, (16u * kb * SP + cb * 16u) / 4u, HL_CM_ROW_MAJOR, (SP) / 4u);
          oa = hl_cm_muladd(qf[qi * KB + kb], bm, oa);
        }
      [[unroll]] for (uint kb = 0u; kb < C / 16u; ++kb)
        if (kb <= rb) {
          hl_cm_b bm;
          HL_CM_LOAD_B(bm, sV, (kb * 16u * SP + cb * 16u) / 4u, HL_CM_ROW_MAJOR, (SP) / 4u);
          oa = hl_cm_muladd(pf[qi * (C / 16u) + kb], bm, oa);
        }
      const uint r0 = row0 + rb * 16u, col = h * DV + j0 + cb * 16u;
      if (r0 + 16u <= pc.T) {
        HL_CM_STORE(o, r0 * ldo + col, oa, HL_CM_ROW_MAJOR, ldo);
      } else {
        HL_CM_STORE(scr, s * 256u, oa, HL_CM_ROW_MAJOR, 16u);
        subgroupMemoryBarrierShared();
        subgroupBarrier();
        for (uint e = gl_SubgroupInvocationID; e < 256u; e += gl_SubgroupSize)
          if (r0 + e / 16u < pc.T) o[(r0 + e / 16u) * ldo + col + e % 16u] = scr[s * 256u + e];
        subgroupMemoryBarrierShared();
        subgroupBarrier();
      }
    }

    if (c + 1u < pc.nch) SSM_LOAD_V_OPERANDS(b + 1u)

    // S = e^{gamma_last} S_c + Kbar^T V'
    [[unroll]] for (uint qi = 0u; qi < 4u; ++qi) {
      const uint t = s + NSG * qi, cb = t % CB;
      if (!computes || t >= SB) continue;
      HL_CM_SCALE(st[qi], lam);
      [[unroll]] for (uint kb = 0u; kb < C / 16u; ++kb) {
        hl_cm_b bm;
        HL_CM_LOAD_B(bm, sV, (16u * kb * SP + cb * 16u) / 4u, HL_CM_ROW_MAJOR, (SP) / 4u);
        st[qi] = hl_cm_muladd(kf[qi * (C / 16u) + kb], bm, st[qi]);
      }
    }
  }

  [[unroll]] for (uint qi = 0u; qi < 4u; ++qi) {
    const uint t = s + NSG * qi;
    if (computes && t < SB) HL_CM_STORE(state, sbase + t / CB * 16u * DV + j0 + t % CB * 16u, st[qi], HL_CM_ROW_MAJOR, DV);
  }
}

#endif
