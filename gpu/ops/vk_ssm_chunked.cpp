// Vulkan variant of ssm_scan in the chunk-parallel form of SPEC 5: vulkan:chunked (f32 everywhere).
//
// Fewer than ssm_scan.chunked.min_tokens tokens (decode) go to vulkan:block_resident, one dispatch. Longer
// sequences go in passes of at most ssm_scan.chunked.segment tokens, cut in chunks of C. Per pass:
//   ssm_chunk_gemm MODE 0  gamma; A = (beta K) K^T * Gamma; P = Q K^T * Gamma   parallel over (head, chunk, tile)
//   ssm_chunk_solve        T = (I + strictly-lower A)^-1                        parallel over (head, chunk)
//   ssm_chunk_gemm MODE 1  [U | W] = T [beta V | beta e^gamma K]                parallel over (head, chunk, tile)
//   ssm_chunk_state        V' = U - W S, S_c, S <- e^gamma_last S + Kbar^T V'   sequential over chunks, parallel
//                                                                               over (head, value-column block)
//   ssm_chunk_gemm MODE 2  o = diag(e^gamma) Q S_c + P V'                       parallel over (head, chunk, tile)
//
// The work at T = 4096, C = 64, 32 value heads, d_k = d_v = 128 (2048 (head, chunk) pairs; MAC = multiply-add):
//   parallel over chunks: K K^T, Q K^T (lower halves) 2 x 0.27M, T 0.04M, T [V | K] 0.5M (T is lower
//     triangular), Q S_c 1M, P V' 0.27M: 2.4M MAC per pair, 4.9 GMAC in all;
//   sequential: W S_c 1M + Kbar^T V' 1M: 2M MAC per pair, 4.3 GMAC in all, as 64 dependent steps, each
//     spread over only 32 heads x 128 / cols column blocks (128 workgroups at cols = 32).
// In all 18.4 GFLOP, 1.2x the recurrence's ~7 d_k d_v flops per token and head (15 GFLOP), but as products
// that reuse every operand from registers and shared memory (RM x RN or MV x RN per invocation) rather
// than a reduction per token. So f32 FMA throughput bounds it (0.33 ms at the H200's measured 55 TFLOP/s),
// then the scratch traffic (U, W, A, P, T, S_c: ~0.2 GB written and read per 2048-token pass, ~0.2 ms at
// 4.4 TB/s over 4096 tokens); the sequential state pass holds 4.3 of the 9.2 GMAC and bounds the time
// when the heads' column blocks do not fill the GPU (few heads, or short passes).
#include <bit>

#include "gpu/ops/vk_op.h"

namespace hl::gpu {

namespace {

constexpr uint32_t kSlice = 16;  // BK of the shaders: the k slice staged in shared memory

struct Push {
  uint32_t t0, T, nk, nv, dk, dv, nch, tiled;
};

bool pow2(uint32_t x) { return std::has_single_bit(x); }

// A launch shape of ssm_chunk_gemm.comp: BM x BN tiles (BM <= C, BN <= the columns rounded up), RM x RN
// outputs per invocation, so (BM / RM) * (BN / RN) invocations.
struct Gemm {
  uint32_t wg, bm, bn, rm, rn;
};

Gemm gemm_shape(const Device& d, uint32_t C, uint32_t cols) {
  const uint32_t tile = d.tune("ssm_scan.chunked.tile"), micro = d.tune("ssm_scan.chunked.micro");
  if (!pow2(tile) || !pow2(micro) || micro > tile)
    fail("ssm_scan: ssm_scan.chunked.tile = {} and .micro = {} must be powers of two, micro <= tile", tile, micro);
  Gemm g{0, std::min(tile, C), std::min(tile, std::bit_ceil(cols)), 0, 0};
  g.rm = std::min(micro, g.bm), g.rn = std::min(micro, g.bn);
  // Small tiles (C = 16, narrow heads): fewer outputs per invocation rather than tiny workgroups.
  while ((g.bm / g.rm) * (g.bn / g.rn) < 64 && (g.rm > 1 || g.rn > 1)) (g.rm >= g.rn ? g.rm : g.rn) /= 2;
  g.wg = (g.bm / g.rm) * (g.bn / g.rn);
  const uint64_t shared = 4 * (uint64_t(kSlice) * (g.bm + g.bn + 2) + 4 * C);
  if (g.wg > d.info().max_workgroup_invocations || shared > d.info().max_shared_memory)
    fail("ssm_scan: a {} x {} tile with {} x {} outputs per invocation needs {} invocations and {} bytes of shared "
         "memory; the device has {} and {}",
         g.bm, g.bn, g.rm, g.rn, g.wg, shared, d.info().max_workgroup_invocations, d.info().max_shared_memory);
  return g;
}

void ssm_chunked(VariantCtx& c, OpArgs& a) {
  Device& d = c.device();
  if (a.in("q").rows() < int64_t(d.tune("ssm_scan.chunked.min_tokens")))  // decode: one dispatch, not five
    return Registry::get().variant("ssm_scan", "vulkan:block_resident").run(c, a);
  const Tensor &q = a.in("q"), &k = a.in("k"), &v = a.in("v"), &beta = a.in("beta"), &g = a.in("g");
  Tensor& state = a.state("state");
  const ScanShape sh = ssm_scan_shape(a);  // not a structured binding: clang 14 cannot capture one
  const int64_t T = sh.T, nk = sh.nk, nv = sh.nv, dk = sh.dk, dv = sh.dv;
  Tensor o = Tensor::device(d, T, v.cols());
  if (T == 0) return a.set("o", o);

  const uint32_t tuned_chunk = d.tune("ssm_scan.chunked.chunk");
  if (!pow2(tuned_chunk) || tuned_chunk < kSlice || tuned_chunk > 128)
    fail("ssm_scan: ssm_scan.chunked.chunk = {} must be 16, 32, 64 or 128", tuned_chunk);
  // Any chunking gives the same function: a sequence shorter than a chunk (decode: T = 1) takes the
  // smallest chunk that holds it rather than computing mostly padding.
  const uint32_t C = std::min(tuned_chunk, std::max(kSlice, std::bit_ceil(u32(T))));
  const Gemm g0 = gemm_shape(d, C, C), g1 = gemm_shape(d, C, u32(dv + dk)), g2 = gemm_shape(d, C, u32(dv));

  // The state pass: column blocks of `cb` (a power of two, at most 4 columns per invocation), halved
  // until its shared memory fits (S block, V' block, a staged slice, the chunk's decays).
  const uint32_t wg = d.tune("ssm_scan.chunked.wg");
  uint32_t cb = std::min(d.tune("ssm_scan.chunked.cols"), std::bit_ceil(u32(dv)));
  if (!pow2(wg) || !pow2(cb) || wg < 32 || wg > d.info().max_workgroup_invocations)
    fail("ssm_scan: ssm_scan.chunked.wg = {} and .cols = {} must be powers of two (wg from 32 to {})", wg, cb,
         d.info().max_workgroup_invocations);
  const uint64_t dkp = (dk + kSlice - 1) / kSlice * kSlice;
  const auto state_shared = [&](uint64_t n) { return 4 * ((dkp + C) * n + kSlice * std::max<uint64_t>(C + 1, dk) + C); };
  cb = std::min(cb, 4 * wg);  // every column needs a lane
  while (cb > 1 && state_shared(cb) > d.info().max_shared_memory) cb /= 2;
  if (state_shared(cb) > d.info().max_shared_memory)
    fail("ssm_scan: d_k = {} with chunks of {} needs {} bytes of shared memory, the device has {}", dk, C,
         state_shared(cb), d.info().max_shared_memory);
  const uint32_t rn = std::min(4u, cb), blocks = u32((dv + cb - 1) / cb);

  // Chunks per pass: the tunable, each scratch buffer within the device's storage buffer range, and
  // lavapipe's limit of 65535 loop iterations per invocation for the state pass (its inner loops unroll:
  // (dkp + C) / 16 slices and a few more per chunk).
  const int64_t chunks = (T + C - 1) / C;
  const uint64_t widest = 4 * uint64_t(nv) * std::max({2 * uint64_t(C) * C, uint64_t(C) * (dv + dk), uint64_t(dk * dv)});
  const uint64_t per_chunk_loops = (dkp + C) / kSlice + 4;
  const int64_t seg = int64_t(std::min<uint64_t>({uint64_t(chunks), std::max(1u, d.tune("ssm_scan.chunked.segment") / C),
                                                   d.info().max_storage_buffer_range / widest, 60000 / per_chunk_loops}));
  if (seg < 1) fail("ssm_scan: one chunk of {} heads needs {} bytes of scratch, more than a storage buffer", nv, widest);

  const uint64_t nb = uint64_t(nv) * seg;  // (head, chunk) pairs of a pass
  const std::vector<BufferPtr> bufs{q.buffer(d), k.buffer(d), v.buffer(d), beta.buffer(d), g.buffer(d),
                                    state.buffer_mut(d), o.buffer_mut(d), d.alloc(8 * nb * C),
                                    d.alloc(4 * nb * 2 * C * C), d.alloc(4 * nb * C * C),
                                    d.alloc(4 * nb * C * (dv + dk)), d.alloc(4 * nb * dk * dv)};
  const auto gemm = [&](uint32_t mode, const Gemm& s) -> const vk::Pipeline& {
    return d.pipeline("ssm_chunk_gemm", {{0, s.wg}, {1, mode}, {2, C}, {3, s.bm}, {4, s.bn}, {5, s.rm}, {6, s.rn}}, 12,
                      sizeof(Push));
  };
  const auto& p0 = gemm(0, g0);
  const auto& p1 = gemm(1, g1);
  const auto& p2 = gemm(2, g2);
  const auto& ps = d.pipeline("ssm_chunk_solve", {{0, wg}, {1, C}}, 12, sizeof(Push));
  const auto& pst = d.pipeline("ssm_chunk_state", {{0, wg}, {1, cb}, {2, C}, {3, u32(dk)}, {4, rn}}, 12, sizeof(Push));
  const auto tiles = [&](const Gemm& s, uint64_t rows, uint64_t cols) {
    return rows / s.bm * ((cols + s.bn - 1) / s.bn);
  };
  Push pc{0, u32(T), u32(nk), u32(nv), u32(dk), u32(dv), 0, a.p.count("tiled") && a.param("tiled") != 0};
  for (int64_t c0 = 0; c0 < chunks; c0 += seg) {
    pc.t0 = u32(c0 * C), pc.nch = u32(std::min(seg, chunks - c0));
    const uint64_t n = uint64_t(nv) * pc.nch;
    const auto run = [&](const vk::Pipeline& p, uint64_t groups) {
      const Grid gr = grid(groups);
      d.dispatch(p, bufs, pc, gr.x, gr.y);
    };
    run(p0, n * tiles(g0, 2 * C, C));
    run(ps, n);
    run(p1, n * tiles(g1, C, dv + dk));
    run(pst, uint64_t(nv) * blocks);
    run(p2, n * tiles(g2, C, dv));
  }
  a.set("o", o);
}

}  // namespace

void register_vk_ssm_chunked(Registry& r) {
  r.add_variant(vulkan_variant("ssm_scan", "vulkan:chunked",
                               "chunk-parallel (SPEC 5): per (head, chunk) tiled f32 products and a triangular solve, "
                               "then a state pass over the chunks per (head, column block), then the outputs; "
                               "decode: block_resident",
                               ssm_chunked, true));
}

}  // namespace hl::gpu
