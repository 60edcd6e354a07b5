// Vulkan variants of ssm_scan in the chunk-parallel form of SPEC 5: vulkan:chunked (f32 everywhere), and
// vulkan:chunked_coopmat: the same passes with every product on cooperative matrices (16x16x16 f16 x f16 + f32
// per subgroup; operands rounded to f16 in shared memory, f32 accumulation): the three ssm_chunk_gemm stages
// (ssm_chunk_gemm_cm.comp) and the state pass's W S_c and Kbar^T V' (ssm_chunk_state_cm.comp: S itself stays
// f32 across chunks, its f16 copy per chunk is only an operand; where d_k is not a multiple of 16 or its
// shared memory does not fit, the f32 state pass); the gamma cumsum and the forward substitution in f32; on
// devices with VK_KHR_cooperative_matrix and that shape (coopmat_unavailable). Its tunables:
// ssm_scan.chunked_coopmat.chunk (default: ssm_scan.chunked.chunk), .rows / .cols (tile, 64 x 64), .cm_emulate
// (test hook: ssm_chunk_gemm_cm_emul.comp, emulated matrices, runs on lavapipe); the rest: ssm_scan.chunked.*.
//
// Fewer than ssm_scan.chunked.min_tokens tokens (decode) go to vulkan:block_resident, one dispatch. Longer
// sequences go in passes of at most ssm_scan.chunked.segment tokens, cut in chunks of C. Per pass:
//   ssm_chunk_gemm MODE 0  gamma; A = (beta K) K^T * Gamma; P = Q K^T * Gamma   parallel over (head, chunk, tile)
//   ssm_chunk_wy           [U | W] = (I + strictly-lower A)^-1 [beta V | beta e^gamma K] by forward
//                          substitution, a column per invocation               parallel over (head, chunk)
//   ssm_chunk_state        V' = U - W S, S_c, S <- e^gamma_last S + Kbar^T V'   sequential over chunks, parallel
//                                                                               over (head, value-column block)
//   ssm_chunk_gemm MODE 2  o = diag(e^gamma) Q S_c + P V'                       parallel over (head, chunk, tile)
//
// The work at T = 4096, C = 64, 32 value heads, d_k = d_v = 128 (2048 (head, chunk) pairs; MAC = multiply-add):
//   parallel over chunks: K K^T, Q K^T (lower halves) 2 x 0.27M, the substitution 0.5M, Q S_c 1M, P V'
//     0.27M: 2.3M MAC per pair, 4.8 GMAC in all;
//   sequential: W S_c 1M + Kbar^T V' 1M: 2M MAC per pair, 4.3 GMAC in all, as 64 dependent steps, each
//     spread over only 32 heads x 128 / cols column blocks (128 workgroups at cols = 32).
// In all 18.4 GFLOP, 1.2x the recurrence's ~7 d_k d_v flops per token and head (15 GFLOP), but as products
// that reuse every operand from registers and shared memory (RM x RN or MV x RN per invocation) rather
// than a reduction per token. So f32 FMA throughput bounds it,
// then the scratch traffic (U, W, A, P, T, S_c: ~0.2 GB written and read per 2048-token pass, ~0.2 ms at
// 4.4 TB/s over 4096 tokens); the sequential state pass holds 4.3 of the 9.2 GMAC and bounds the time
// when the heads' column blocks do not fill the GPU (few heads, or short passes).
#include <bit>

#include "ops/ssm_scan/vulkan_common.h"

namespace hl::gpu {

namespace {

constexpr uint32_t kSlice = 16;  // BK of the shaders: the k slice staged in shared memory

// vulkan:chunked_coopmat's relative-L2 bound against the f32 reference (Variant::precision_tolerance). Each
// product rounds both operands to f16 (unit roundoff 2^-11, a relative error of RMS ~2.8e-4 per operand) and
// accumulates in f32, so a dot of random terms is off by ~4e-4 of its size whatever its length. A and P
// (from K, Q) carry that into the substitution (|A| < 1 for unit keys: U and W move by about as much; the
// substitution itself is f32), V' = U - W S_c inherits ~5e-4 plus W S_c's own
// roundings (W and an f16 copy of S_c), and o = [e^gamma Q | P] [S_c ; V'] rounds once more: ~7e-4 to 1e-3
// by this estimate for o; the state gets Kbar^T V' with f16 Kbar and V' added in f32 to the f32 S (S itself
// is never rounded to f16), so ~4e-4 relative in each chunk's update. The errors do not build up along T:
// each chunk's update contracts the older state (beta in (0, 1), unit keys) and the roundings of different
// chunks are independent. Measured with the emulated kernels (the same roundings) on lavapipe, 1 key / 2
// value heads of 128, T = 256 and 4096, chunks of 16, 64 (and 128: the f32 state pass there, lavapipe's 32 KB
// of shared memory), decays as the tests' and slow (g in (-0.02, 0), long memory): o 4.3e-4..5.0e-4, state
// 3.5e-4..4.1e-4 (2.2e-4..2.4e-4 with the f32 state pass), no growth from T = 256 to 4096.
// 3e-3: ~6x margin, while a wrong layout, stride or missed barrier gives errors of order 0.1..1.
constexpr double kSsmCoopmatTolerance = 3e-3;

struct Push {
  uint32_t t0, T, nk, nv, dk, dv, nch, tiled;
};

bool pow2(uint32_t x) { return std::has_single_bit(x); }

// A launch shape of ssm_chunk_gemm.comp: BM x BN tiles (BM <= C, BN <= the columns rounded up), RM x RN
// outputs per invocation, so (BM / RM) * (BN / RN) invocations. Cooperative matrices (ssm_chunk_gemm_cm.comp):
// rm = rn = 0, one subgroup per 16 x 32 strip.
struct Gemm {
  uint32_t wg, bm, bn, rm, rn;
};

const char* const kCm = "ssm_scan.chunked_coopmat.";
// Test hook: ssm_chunk_gemm_cm_emul.comp, the same kernel with emulated matrices (runs on lavapipe).
bool cm_emulated(const Device& d) { return d.profile().get(std::string(kCm) + "cm_emulate", 0) != 0; }

std::string cm_unavailable(const Device& d) { return coopmat_unavailable(d, cm_emulated(d)); }

// Cooperative-matrix tiles: BM rows (ssm_scan.chunked_coopmat.rows, capped at C), BN columns (.cols, capped
// at the columns rounded up to 32); counted at the largest subgroup size so every strip has its subgroup.
Gemm gemm_cm_shape(const Device& d, uint32_t C, uint32_t cols) {
  const uint32_t rows = d.profile().get(std::string(kCm) + "rows", 64), bn = d.profile().get(std::string(kCm) + "cols", 64);
  if (!pow2(rows) || rows < 16 || !pow2(bn) || bn < 32)
    fail("ssm_scan: ssm_scan.chunked_coopmat.rows = {} and .cols = {} must be powers of two, at least 16 and 32", rows,
         bn);
  Gemm g{0, std::min(rows, C), std::min(bn, std::max(32u, std::bit_ceil(cols))), 0, 0};
  g.wg = (g.bm / 16) * (g.bn / 32) * d.info().max_subgroup_size;
  // f16 slices 32 deep (rows padded by 8), f32 accumulators (rows padded by 4), the chunk's gamma, e^gamma, beta
  const uint64_t shared = 2 * 40 * uint64_t(g.bm + g.bn) + 4 * uint64_t(g.bm) * (g.bn + 4) + 16 * C;
  if (g.wg > d.info().max_workgroup_invocations || shared > d.info().max_shared_memory)
    fail("ssm_scan: a {} x {} cooperative-matrix tile needs {} invocations and {} bytes of shared memory; the "
         "device has {} and {}",
         g.bm, g.bn, g.wg, shared, d.info().max_workgroup_invocations, d.info().max_shared_memory);
  return g;
}

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

void ssm_chunked(VariantCtx& c, OpArgs& a, bool coopmat) {
  Device& d = c.device();
  const Tensor &q = a.in("q"), &k = a.in("k"), &v = a.in("v"), &beta = a.in("beta"), &g = a.in("g");
  Tensor& state = a.state("state");
  const ScanShape sh = ssm_scan_shape(a);  // not a structured binding: clang 14 cannot capture one
  const int64_t T = sh.T, nk = sh.nk, nv = sh.nv, dk = sh.dk, dv = sh.dv;
  Tensor o = Tensor::device(d, T, v.cols());
  if (T == 0) return a.set("o", o);

  // The coopmat build has its own chunk tunable (so the experiment sweeps it apart), the f32 build's by default.
  const uint32_t tuned_chunk =
      coopmat ? d.profile().get(std::string(kCm) + "chunk", d.tune("ssm_scan.chunked.chunk")) : d.tune("ssm_scan.chunked.chunk");
  if (!pow2(tuned_chunk) || tuned_chunk < kSlice || tuned_chunk > 128)
    fail("ssm_scan: ssm_scan.{}.chunk = {} must be 16, 32, 64 or 128", coopmat ? "chunked_coopmat" : "chunked", tuned_chunk);
  // Any chunking gives the same function: a sequence shorter than a chunk (decode: T = 1) takes the
  // smallest chunk that holds it rather than computing mostly padding.
  const uint32_t C = std::min(tuned_chunk, std::max(kSlice, std::bit_ceil(u32(T))));
  const auto shape = [&](uint32_t cols) { return coopmat ? gemm_cm_shape(d, C, cols) : gemm_shape(d, C, cols); };
  const Gemm g0 = shape(C), g2 = shape(u32(dv));

  // The state pass: column blocks of `cb` (a power of two, at most 4 columns per invocation) and W / Kbar slices
  // `slice` deep (each a round trip to memory the chunk waits for), the slice then the block halved until its
  // shared memory fits (S block, V' block, a staged slice, the chunk's decays).
  const uint32_t wg = d.tune("ssm_scan.chunked.wg");
  uint32_t cb = std::min(d.tune("ssm_scan.chunked.cols"), std::bit_ceil(u32(dv)));
  uint32_t slice = std::min(d.tune("ssm_scan.chunked.slice"), C);
  if (!pow2(wg) || !pow2(cb) || wg < 32 || wg > d.info().max_workgroup_invocations || !pow2(slice) || slice < kSlice)
    fail("ssm_scan: ssm_scan.chunked.wg = {}, .cols = {} and .slice = {} must be powers of two (wg from 32 to {}, "
         "slice at least {})",
         wg, cb, slice, d.info().max_workgroup_invocations, kSlice);
  const auto state_shared = [&](uint64_t n, uint64_t bk) {
    const uint64_t dkp = (dk + bk - 1) / bk * bk;
    return 4 * ((dkp + C) * n + bk * std::max<uint64_t>(C + 1, dk) + C);
  };
  cb = std::min(cb, 4 * wg);  // every column needs a lane
  while (slice > kSlice && state_shared(cb, slice) > d.info().max_shared_memory) slice /= 2;
  while (cb > 1 && state_shared(cb, slice) > d.info().max_shared_memory) cb /= 2;
  if (state_shared(cb, slice) > d.info().max_shared_memory)
    fail("ssm_scan: d_k = {} with chunks of {} needs {} bytes of shared memory, the device has {}", dk, C,
         state_shared(cb, slice), d.info().max_shared_memory);
  const uint64_t dkp = (dk + slice - 1) / slice * slice;
  const uint32_t rn = std::min(4u, cb);

  // The coopmat build's state pass (ssm_chunk_state_cm.comp) where d_k is a multiple of 16 and its shared
  // memory fits (f32 S block and V' sums, f16 copies of S_c and V', the staged W or Kbar slice), else the f32
  // one. NSG subgroups (>= C/16: one per V' row tile) of the largest subgroup size; 16 value columns each.
  const uint32_t nsg = std::max(4u, C / 16), cm_wg = nsg * d.info().max_subgroup_size;
  const uint64_t cm_shared = 4 * (dk * 16 + C * 20 + C) + 2 * (dk * 24 + C * 24 + std::max<uint64_t>(C * 40, 32 * (dk + 8)));
  const bool cm_state = coopmat && dk % 16 == 0 && cm_shared <= d.info().max_shared_memory &&
                        cm_wg <= d.info().max_workgroup_invocations;
  const uint32_t blocks = u32(cm_state ? (dv + 15) / 16 : (dv + cb - 1) / cb);

  // Chunks per pass: the tunable, each scratch buffer within the device's storage buffer range, and
  // lavapipe's limit of 65535 loop iterations per invocation for the state pass (its inner loops unroll:
  // (dkp + C) / 16 slices and a few more per chunk).
  const int64_t chunks = (T + C - 1) / C;
  const uint64_t widest = 4 * uint64_t(nv) * std::max({2 * uint64_t(C) * C, uint64_t(C) * (dv + dk), uint64_t(dk * dv)});
  uint64_t per_chunk_loops = (dkp + C) / slice + 4;
  if (cm_state) {  // its loops as if none were unrolled; emulated matrix operations loop over 256 / subgroup
    const uint64_t e = 256 / d.info().min_subgroup_size, w = cm_wg;
    per_chunk_loops = 16 * (dk + C) / w + 4 + dk / 32 * (C * 32 / w + 2 * e + 2) + e + 16 * (C + dk) / w +
                      (C + 31) / 32 * (32 * dk / w + 2 + (dk / 16 + nsg - 1) / nsg * 4 * e);
  }
  const int64_t seg = int64_t(std::min<uint64_t>({uint64_t(chunks), std::max(1u, d.tune("ssm_scan.chunked.segment") / C),
                                                   d.info().max_storage_buffer_range / widest, 60000 / per_chunk_loops}));
  if (seg < 1) fail("ssm_scan: one chunk of {} heads needs {} bytes of scratch, more than a storage buffer", nv, widest);

  const uint64_t nb = uint64_t(nv) * seg;  // (head, chunk) pairs of a pass
  const std::vector<BufferPtr> bufs{q.buffer(d), k.buffer(d), v.buffer(d), beta.buffer(d), g.buffer(d),
                                    state.buffer_mut(d), o.buffer_mut(d), d.alloc(8 * nb * C),
                                    d.alloc(4 * nb * 2 * C * C), d.alloc(4 * nb * C * (dv + dk)),
                                    d.alloc(4 * nb * dk * dv)};
  const auto gemm = [&](uint32_t mode, const Gemm& s) -> const vk::Pipeline& {
    if (coopmat)
      return d.pipeline(cm_emulated(d) ? "ssm_chunk_gemm_cm_emul" : "ssm_chunk_gemm_cm",
                        {{0, s.wg}, {1, mode}, {2, C}, {3, s.bm}, {4, s.bn}}, 11, sizeof(Push),
                        d.info().subgroup_size_control && d.info().compute_full_subgroups);
    return d.pipeline("ssm_chunk_gemm", {{0, s.wg}, {1, mode}, {2, C}, {3, s.bm}, {4, s.bn}, {5, s.rm}, {6, s.rn}}, 11,
                      sizeof(Push));
  };
  const auto& p0 = gemm(0, g0);
  const auto& p2 = gemm(2, g2);
  // The substitution: an invocation per column of [U | W], so no wider than those columns.
  const auto& pwy = d.pipeline("ssm_chunk_wy", {{0, std::min(wg, std::max(32u, std::bit_ceil(u32(dv + dk))))}, {1, C}}, 11,
                               sizeof(Push));
  const auto& pst =
      cm_state ? d.pipeline(cm_emulated(d) ? "ssm_chunk_state_cm_emul" : "ssm_chunk_state_cm",
                            {{0, cm_wg}, {1, nsg}, {2, C}, {3, u32(dk)}}, 11, sizeof(Push),
                            d.info().subgroup_size_control && d.info().compute_full_subgroups)
               : d.pipeline("ssm_chunk_state", {{0, wg}, {1, cb}, {2, C}, {3, u32(dk)}, {4, rn}, {5, slice},
                                                       {6, d.profile().get("ssm_scan.chunked.diag", 0)}},
                                 11, sizeof(Push));
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
    run(pwy, n);
    run(pst, uint64_t(nv) * blocks);
    run(p2, n * tiles(g2, C, dv));
  }
  a.set("o", o);
}

void ssm_chunked_coopmat(VariantCtx& c, OpArgs& a) {
  // The registry's availability check is not on every path that can run a variant (tests, plans): say why here.
  if (auto why = cm_unavailable(c.device()); !why.empty())
    fail("ssm_scan vulkan:chunked_coopmat cannot run on {}: {}", c.device().info().name, why);
  ssm_chunked(c, a, true);
}

}  // namespace

// Decode (fewer than min_tokens tokens): one dispatch of vulkan:block_resident, not five.
std::string decode_to_block_resident(VariantCtx& c, const OpArgs& a) {
  return a.in("q").rows() < int64_t(c.device().tune("ssm_scan.chunked.min_tokens")) ? "vulkan:block_resident" : "";
}

std::string prompt_to_two_pass(VariantCtx& c, const OpArgs& a);  // vulkan_two_pass.cpp

void register_ssm_scan_vulkan_chunked(Registry& r) {
  Variant ch = vulkan_variant("ssm_scan", "vulkan:chunked",
                              "chunk-parallel (SPEC 5): per (head, chunk) tiled f32 products and a forward substitution, "
                              "then a state pass over the chunks per (head, column block), then the outputs; "
                              "decode: block_resident",
                              [](VariantCtx& c, OpArgs& a) { ssm_chunked(c, a, false); }, true);
  // Prompt chunks of at least ssm_scan.chunked.two_pass tokens (0: none) to vulkan:chunked_two_pass where it runs and
  // takes the heads; else decode to block_resident.
  ch.delegate = [](VariantCtx& c, const OpArgs& a) {
    if (auto to = prompt_to_two_pass(c, a); !to.empty()) return to;
    return decode_to_block_resident(c, a);
  };
  // C tokens per chunk (16, 32, 64 or 128); output tile (BM = BN, capped at C) of the per-chunk products; outputs per
  // invocation along each side of a tile; value columns per workgroup of the state pass and the depth of its staged
  // W / Kbar slices (capped at C, halved to fit shared memory before the columns are); tokens per pass (scratch
  // grows with it); fewer tokens than min_tokens: block_resident; invocations per workgroup of the state pass (the
  // most on Hopper: its products wait on shared memory and more invocations keep more in flight) and, up to the
  // columns of [U | W], of the substitution.
  // On Hopper the recurrent block_resident kernel outruns this chunked form up to 4096 tokens (and beyond: it is linear
  // in T like the chunked one), and chunked_two_pass outruns block_resident from about 192 tokens (between 64 and 256).
  ch.tunables = {{"ssm_scan.chunked.chunk", 64}, {"ssm_scan.chunked.tile", 64},       {"ssm_scan.chunked.micro", 4},
                 {"ssm_scan.chunked.cols", 32},  {"ssm_scan.chunked.slice", 64}, {"ssm_scan.chunked.segment", 2048},
                 {"ssm_scan.chunked.wg", 128, {{"lavapipe", 64}, {"nvidia-hopper", 1024}, {"amd-rdna4", 256}}},
                 {"ssm_scan.chunked.min_tokens", 2, {{"nvidia-hopper", 1u << 30}}},
                 {"ssm_scan.chunked.two_pass", 0, {{"nvidia-hopper", 192}}}};
  r.add_variant(std::move(ch));
  Variant cm = vulkan_variant("ssm_scan", "vulkan:chunked_coopmat",
                              "vulkan:chunked with its products (K K^T, Q K^T, [Q | P] [S_c ; V'], W S_c, Kbar^T V') "
                              "on cooperative matrices (16x16x16 f16 x f16 + f32 per subgroup); gamma, the forward "
                              "substitution and the carried state in f32",
                              ssm_chunked_coopmat, false, false, cm_unavailable);
  cm.delegate = decode_to_block_resident;
  cm.cooperative_matrices = true;
  cm.precision_tolerance = kSsmCoopmatTolerance;  // f16 matrix inputs: ~5e-4 measured (derivation above)
  r.add_variant(std::move(cm));
}

}  // namespace hl::gpu
