// vulkan:chunked_two_pass: ssm_scan's chunked form (SPEC 5, C = 64) in two dispatches per pass, every product on
// cooperative matrices (16x16x16, f16 operands, f32 accumulation):
//   ssm_two_pass_prep   per (value head, chunk), all chunks at once: gamma, K K^T and Q K^T, A and P, T = (I + A)^-1
//                       (16 x 16 diagonal blocks by f32 substitution, the rest on matrices), [U | -W] = T [beta V |
//                       -beta e^gamma K], Qbar, Kbar
//   ssm_two_pass_scan   per (value head, 16 or 32 value columns), sequential over the chunks with the state slice in f32
//                       accumulators: V' = U - W S, O = Qbar S + P V', S = e^{gamma_last} S + Kbar^T V'
// Against vulkan:chunked (five f32 passes) and vulkan:chunked_coopmat (the same passes on matrices): the state
// never leaves registers between chunks, the triangular solve runs once per chunk (T, then one product) rather than
// on the 256 columns of [U | W], and P, W, Qbar, Kbar reach the state pass as f16 operands that its
// matrices load straight from memory.
//
// Work at T = 512, 32 value heads of 128: prep 256 workgroups, each 2 x 10 products of 16 x 16 blocks 128 deep
// (K K^T, Q K^T), 6 + 6 for T's blocks, 64 for [U | W] (64 deep over 256 columns); scan 128 workgroups (cols 32) x 8
// chunks, each chunk at most 56 matrix products per subgroup behind three barriers.
//
// Precision: as vulkan:chunked_coopmat (the derivation in vulkan_chunked.cpp: f16 operands, f32 sums, each
// chunk contracting the older state), plus A and T rounded to f16 (T's blocks below the diagonal through one more
// f16 sum): one or two more roundings of entries |x| < ~1 in U and W; measured 3-6e-4 on lavapipe's emulated
// matrices and on the H100 / H200: the same 3e-3 bound.
#include <algorithm>

#include "ops/ssm_scan/vulkan_common.h"

namespace hl::gpu {

namespace {

constexpr uint32_t kC = 64, kNsg = 4;  // the shaders' C, NSG
constexpr double kTolerance = 3e-3;
const char* const kKey = "ssm_scan.chunked_two_pass.";

struct Push {
  uint32_t t0, T, nk, nv, nch, tiled;
};

// The heads the kernels take: d_k a multiple of 32 up to 128 (the prep pass stages 32-column pieces; the scan pass
// holds at most 16 state blocks per workgroup), d_v a multiple of 32 (the scan pass's widest column block).
bool takes_heads(int64_t dk, int64_t dv) { return dk % 32 == 0 && dk <= 128 && dv % 32 == 0; }

bool emulated(const Device& d) { return d.profile().get(std::string(kKey) + "cm_emulate", 0) != 0; }

std::string unavailable(const Device& d) {
  if (auto why = coopmat_unavailable(d, emulated(d)); !why.empty()) return why;
  if (!d.info().storage_buffer_16bit) return "no storageBuffer16BitAccess (its f16 operands live in memory)";
  // prep: K and Q pieces (of up to 64 columns), A / T, the scratch, four rows of scalars
  const uint64_t prep = 2 * 2 * kC * 72 + 2 * kC * 72 + 4 * kNsg * 256 + 4 * 4 * kC;
  if (prep > d.info().max_shared_memory) return "less than " + std::to_string(prep) + " bytes of shared memory";
  return "";
}

void two_pass(VariantCtx& c, OpArgs& a) {
  Device& d = c.device();
  if (auto why = unavailable(d); !why.empty())
    fail("ssm_scan vulkan:chunked_two_pass cannot run on {}: {}", d.info().name, why);
  const Tensor &q = a.in("q"), &k = a.in("k"), &v = a.in("v"), &beta = a.in("beta"), &g = a.in("g");
  Tensor& state = a.state("state");
  const ScanShape sh = ssm_scan_shape(a);
  const int64_t T = sh.T, nk = sh.nk, nv = sh.nv, dk = sh.dk, dv = sh.dv;
  if (!takes_heads(dk, dv))
    fail("ssm_scan vulkan:chunked_two_pass: heads of d_k = {}, d_v = {}; it takes d_k a multiple of 32 up to 128 "
         "and d_v a multiple of 32",
         dk, dv);
  Tensor o = Tensor::device(d, T, v.cols());
  if (T == 0) return a.set("o", o);

  // Chunks per pass: the tunable, every scratch buffer within the storage buffer range (U is the widest), and on
  // lavapipe (emulated matrices loop over 256 / subgroup elements per operation) the state pass's per-invocation
  // loop iterations under its limit of 65535.
  const int64_t chunks = (T + kC - 1) / kC;
  const uint64_t widest = 4ull * nv * kC * std::max(dv, dk);
  int64_t seg = std::min<int64_t>(chunks, std::max<uint32_t>(1, d.tune("ssm_scan.chunked.segment") / kC));
  seg = std::min<int64_t>(seg, int64_t(d.info().max_storage_buffer_range / widest));
  if (emulated(d)) {
    const uint64_t e = 256 / d.info().min_subgroup_size, per_chunk = 4 * e + 2 * (10 * e) + 2 * (14 * e) + 4 * 5 * e + 8;
    seg = std::min<int64_t>(seg, int64_t(60000 / per_chunk));
  }
  if (seg < 1) fail("ssm_scan: one chunk of {} heads needs {} bytes of scratch, more than a storage buffer", nv, widest);

  const uint64_t nb = uint64_t(nv) * seg;  // (head, chunk) pairs of a pass
  const std::vector<BufferPtr> bufs{q.buffer(d),         k.buffer(d),         v.buffer(d),
                                    beta.buffer(d),      g.buffer(d),         d.alloc(4 * nb * kC),
                                    d.alloc(2 * nb * kC * dk), d.alloc(4 * nb * kC * dv), d.alloc(2 * nb * kC * dk),
                                    d.alloc(2 * nb * kC * dk), d.alloc(2 * nb * kC * kC), state.buffer_mut(d),
                                    o.buffer_mut(d)};
  const bool full = d.info().subgroup_size_control && d.info().compute_full_subgroups;
  const uint32_t sg = d.info().max_subgroup_size;
  const std::string sfx = emulated(d) ? "_cm_emul" : "_cm";
  const uint32_t piece = d.tune(std::string(kKey) + "piece"), cols = d.tune(std::string(kKey) + "cols"),
                 nsg = d.tune(std::string(kKey) + "scan_subgroups"), prefetch = d.tune(std::string(kKey) + "prefetch");
  if (piece != 32 && piece != 64) fail("ssm_scan: ssm_scan.chunked_two_pass.piece = {} must be 32 or 64", piece);
  if (cols != 16 && cols != 32) fail("ssm_scan: ssm_scan.chunked_two_pass.cols = {} must be 16 or 32", cols);
  if (nsg != 4 && nsg != 8) fail("ssm_scan: ssm_scan.chunked_two_pass.scan_subgroups = {} must be 4 or 8", nsg);
  const uint32_t wg = std::max({kNsg * sg, nsg * sg, kC});
  if (wg > d.info().max_workgroup_invocations)
    fail("ssm_scan vulkan:chunked_two_pass: {} invocations per workgroup, the device allows {}", wg,
         d.info().max_workgroup_invocations);
  // Pieces of 64 columns only where they divide d_k.
  const uint32_t kw = dk % piece == 0 ? piece : 32;
  const auto& prep = d.pipeline("ssm_two_pass_prep" + sfx,
                                {{0, std::max(kNsg * sg, kC)}, {1, u32(dk)}, {2, u32(dv)}, {3, kw}, {4, prefetch != 0}},
                                u32(int64_t(bufs.size())), sizeof(Push), full);
  const auto& scan = d.pipeline("ssm_two_pass_scan" + sfx,
                                {{0, nsg * sg}, {1, u32(dk)}, {2, u32(dv)}, {3, cols}, {4, nsg}},
                                u32(int64_t(bufs.size())), sizeof(Push), full);
  Push pc{0, u32(T), u32(nk), u32(nv), 0, a.p.count("tiled") && a.param("tiled") != 0};
  for (int64_t c0 = 0; c0 < chunks; c0 += seg) {
    pc.t0 = u32(c0 * kC), pc.nch = u32(std::min(seg, chunks - c0));
    const auto run = [&](const vk::Pipeline& p, uint64_t groups) {
      const Grid gr = grid(groups);
      d.dispatch(p, bufs, pc, gr.x, gr.y);
    };
    run(prep, uint64_t(nv) * pc.nch);
    run(scan, uint64_t(nv) * (dv / cols));
  }
  a.set("o", o);
}

// The heads of a's call, where its shapes are consistent ({0, 0} where not: ssm_scan_shape says why when it runs).
std::pair<int64_t, int64_t> heads(const OpArgs& a) {
  const int64_t nv = a.in("g").cols();
  if (nv <= 0 || a.in("v").cols() % nv != 0 || a.in("v").cols() == 0) return {0, 0};
  const int64_t dv = a.in("v").cols() / nv;
  if (a.in("state").cols() % dv != 0) return {0, 0};
  return {a.in("state").cols() / dv, dv};
}

}  // namespace

std::string prompt_to_two_pass(VariantCtx& c, const OpArgs& a) {
  const Device& d = c.device();
  const auto [dk, dv] = heads(a);
  const int64_t from = d.tune("ssm_scan.chunked.two_pass"), T = a.in("q").rows();
  const bool fits = from != 0 && T >= from && T >= int64_t(d.tune(std::string(kKey) + "min_tokens")) &&
                    takes_heads(dk, dv) && dk > 0 && unavailable(d).empty();
  return fits ? "vulkan:chunked_two_pass" : "";
}

void register_ssm_scan_vulkan_two_pass(Registry& r) {
  Variant v = vulkan_variant("ssm_scan", "vulkan:chunked_two_pass",
                             "chunked (C = 64) in two dispatches on cooperative matrices: per (head, chunk) gamma, "
                             "K K^T, Q K^T, T = (I + A)^-1 (diagonal blocks by f32 substitution), [U | W] = T [beta V | "
                             "beta e^gamma K]; then per (head, cols columns) the chunks in order with the state in f32 "
                             "accumulators",
                             two_pass, false, false, unavailable);
  // Fewer than min_tokens tokens (decode) to block_resident; heads the kernels do not take to vulkan:chunked.
  v.delegate = [](VariantCtx& c, const OpArgs& a) -> std::string {
    if (a.in("q").rows() < int64_t(c.device().tune(std::string(kKey) + "min_tokens"))) return "vulkan:block_resident";
    const auto [dk, dv] = heads(a);
    return dk == 0 || takes_heads(dk, dv) ? "" : "vulkan:chunked";
  };
  v.cooperative_matrices = true;
  v.precision_tolerance = kTolerance;
  // below min_tokens, block_resident; columns of K, Q, V per staged piece of the prep pass (32 or 64: half the
  // round trips, twice the shared tile); value columns per workgroup of the scan pass (16 or 32: each workgroup
  // reads its head's W, Qbar, Kbar and P, so 32 halves that traffic; with 4 subgroups it needs 255 registers and
  // spills on Hopper) and its computing subgroups (4, or 8 to hold 32 columns in the registers 4 hold 16 in);
  // prefetch 1: the prep's global loads issued a phase ahead, into registers (0: after the barrier that stages them)
  v.tunables = {{std::string(kKey) + "min_tokens", 2},
                {std::string(kKey) + "piece", 32},
                {std::string(kKey) + "prefetch", 1},
                {std::string(kKey) + "cols", 16},
                {std::string(kKey) + "scan_subgroups", 4}};
  r.add_variant(std::move(v));
}

}  // namespace hl::gpu
