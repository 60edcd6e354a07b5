// ssm_scan vulkan:chunked_two_pass, pass 2 of 2: sequential over the pass's chunks, a workgroup per (value head h,
// block of CT = 32 value columns j0..), its slice of the state S [d_k x CT] carried in f32 accumulators (registers)
// from the first chunk to the last. Per chunk b (ssm_two_pass_prep's outputs):
//   S_c -> shared f16 (the products' operand; S itself never passes through f16)
//   V' = U - W S_c           U loaded as the accumulator, -W from memory as A          -> shared f16
//   O  = Qbar S_c + P V'     written to o (rows past T through the subgroup's scratch)
//   S  = e^{gamma_last} S_c + Kbar^T V'     Kbar read column-major as A = Kbar^T
// NSG subgroups of the device's largest subgroup size compute (full subgroups; spare ones idle); every operand
// offset and stride a multiple of 16 bytes.
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
#include "coopmat.glsl"
const uint C = 64u, NSG = 4u, CT = 32u, SP = CT + 8u;
const uint SB = DK / 16u * (CT / 16u);  // state blocks: at most 16, 4 per subgroup

layout(std430, binding = 5) readonly buffer Gam_ { float gam[]; };
layout(std430, binding = 6) readonly buffer Wn_ { float16_t wn[]; };
layout(std430, binding = 7) readonly buffer U_ { float u[]; };
layout(std430, binding = 8) readonly buffer Qbar_ { float16_t qbar[]; };
layout(std430, binding = 9) readonly buffer Kbar_ { float16_t kbar[]; };
layout(std430, binding = 10) readonly buffer P_ { float16_t pm[]; };
layout(std430, binding = 11) buffer State_ { float state[]; };  // [nv][DK * DV], S[i][j] at i * DV + j
layout(std430, binding = 12) writeonly buffer O_ { float o[]; };   // [T][nv * DV]
layout(push_constant) uniform Push { uint t0, T, nk, nv, nch, tiled; } pc;

shared float16_t sS[DK * SP], sV[C * SP];
shared float scr[NSG * 256u];

#ifdef HL_CM_EMULATE
const uint HL_CM_ID_sS = 0u, HL_CM_ID_sV = 1u, HL_CM_ID_wn = 2u, HL_CM_ID_qbar = 3u, HL_CM_ID_kbar = 4u, HL_CM_ID_pm = 5u;
float hl_cm_read(uint id, uint i) {
  return float(id == 0u ? sS[i] : id == 1u ? sV[i] : id == 2u ? wn[i] : id == 3u ? qbar[i] : id == 4u ? kbar[i] : pm[i]);
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
    if (computes && t < SB) HL_CM_LOAD_ACC(st[qi], state, sbase + t / 2u * 16u * DV + j0 + t % 2u * 16u, HL_CM_ROW_MAJOR, DV);
  }

  for (uint c = 0u; c < pc.nch; ++c) {
    const uint b = h * pc.nch + c, row0 = pc.t0 + c * C;
    const float lam = exp(gam[b * C + C - 1u]);
    barrier();  // the previous chunk's reads of sS and sV done
    [[unroll]] for (uint qi = 0u; qi < 4u; ++qi) {
      const uint t = s + NSG * qi;
      if (computes && t < SB) HL_CM_STORE_F16(sS, t / 2u * 16u * SP + t % 2u * 16u, st[qi], HL_CM_ROW_MAJOR, SP);
    }
    barrier();

    // V' = U - W S_c: 4 x 2 blocks, two per subgroup
    [[unroll]] for (uint qi = 0u; qi < 2u; ++qi) {
      const uint t = s + NSG * qi, rb = t / 2u, cb = t % 2u;
      if (!computes) continue;
      hl_cm_acc acc;
      HL_CM_LOAD_ACC(acc, u, (b * C + rb * 16u) * DV + j0 + cb * 16u, HL_CM_ROW_MAJOR, DV);
      [[unroll]] for (uint kk = 0u; kk < DK; kk += HL_CM) {
        hl_cm_a am;
        hl_cm_b bm;
        HL_CM_LOAD_A(am, wn, (b * C + rb * 16u) * DK + kk, HL_CM_ROW_MAJOR, DK);
        HL_CM_LOAD_B(bm, sS, kk * SP + cb * 16u, HL_CM_ROW_MAJOR, SP);
        acc = hl_cm_muladd(am, bm, acc);
      }
      HL_CM_STORE_F16(sV, rb * 16u * SP + cb * 16u, acc, HL_CM_ROW_MAJOR, SP);
    }
    barrier();

    // O = Qbar S_c + P V' (P is zero above the diagonal: its blocks there are neither written nor read)
    [[unroll]] for (uint qi = 0u; qi < 2u; ++qi) {
      const uint t = s + NSG * qi, rb = t / 2u, cb = t % 2u;
      if (!computes) continue;
      hl_cm_acc acc = hl_cm_fill(0.0);
      [[unroll]] for (uint kk = 0u; kk < DK; kk += HL_CM) {
        hl_cm_a am;
        hl_cm_b bm;
        HL_CM_LOAD_A(am, qbar, (b * C + rb * 16u) * DK + kk, HL_CM_ROW_MAJOR, DK);
        HL_CM_LOAD_B(bm, sS, kk * SP + cb * 16u, HL_CM_ROW_MAJOR, SP);
        acc = hl_cm_muladd(am, bm, acc);
      }
      [[unroll]] for (uint kb = 0u; kb < C / 16u; ++kb)
        if (kb <= rb) {
          hl_cm_a am;
          hl_cm_b bm;
          HL_CM_LOAD_A(am, pm, (b * C + rb * 16u) * C + kb * 16u, HL_CM_ROW_MAJOR, C);
          HL_CM_LOAD_B(bm, sV, kb * 16u * SP + cb * 16u, HL_CM_ROW_MAJOR, SP);
          acc = hl_cm_muladd(am, bm, acc);
        }
      const uint r0 = row0 + rb * 16u, col = h * DV + j0 + cb * 16u;
      if (r0 + 16u <= pc.T) {
        HL_CM_STORE(o, r0 * ldo + col, acc, HL_CM_ROW_MAJOR, ldo);
      } else {
        HL_CM_STORE(scr, s * 256u, acc, HL_CM_ROW_MAJOR, 16u);
        subgroupMemoryBarrierShared();
        subgroupBarrier();
        for (uint e = gl_SubgroupInvocationID; e < 256u; e += gl_SubgroupSize)
          if (r0 + e / 16u < pc.T) o[(r0 + e / 16u) * ldo + col + e % 16u] = scr[s * 256u + e];
        subgroupMemoryBarrierShared();
        subgroupBarrier();
      }
    }

    // S = e^{gamma_last} S_c + Kbar^T V'
    [[unroll]] for (uint qi = 0u; qi < 4u; ++qi) {
      const uint t = s + NSG * qi, rb = t / 2u, cb = t % 2u;
      if (!computes || t >= SB) continue;
      HL_CM_SCALE(st[qi], lam);
      [[unroll]] for (uint kk = 0u; kk < C; kk += HL_CM) {
        hl_cm_a am;
        hl_cm_b bm;
        HL_CM_LOAD_A(am, kbar, (b * C + kk) * DK + rb * 16u, HL_CM_COL_MAJOR, DK);
        HL_CM_LOAD_B(bm, sV, kk * SP + cb * 16u, HL_CM_ROW_MAJOR, SP);
        st[qi] = hl_cm_muladd(am, bm, st[qi]);
      }
    }
  }

  [[unroll]] for (uint qi = 0u; qi < 4u; ++qi) {
    const uint t = s + NSG * qi;
    if (computes && t < SB) HL_CM_STORE(state, sbase + t / 2u * 16u * DV + j0 + t % 2u * 16u, st[qi], HL_CM_ROW_MAJOR, DV);
  }
}

#endif
