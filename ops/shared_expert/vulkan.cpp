// shared_expert on Vulkan: vulkan:fused, the sigmoid gate (shared_expert_gate.comp), then the routed experts'
// kernels as a one-expert route: moe_experts' per-token SwiGLU pair for decode, route_pack's grouped GEMM for
// prompt chunks (ops/moe_experts/); vulkan:fused_coopmat, the same with that GEMM on cooperative matrices
// (route_pack_coopmat's), and vulkan:fused_qgemm, on its scalar form (route_pack_qgemm's); vulkan:dense_coopmat,
// prompt chunks as three dense GEMMs on matmul's qgemm_coopmat (which splits K where its tiles are few) and a SwiGLU
// pass between them, and vulkan:dense_qgemm, the same on matmul's scalar vulkan:qgemm. vulkan:fused hands prompt
// chunks to the dense ones (shared_expert.fused.dense), on cooperative matrices where the device has them, else on
// the scalar GEMMs where route_pack takes those (moe_experts.route_pack.qgemm), or on 8-bit integer dot products where
// asked (vulkan:dense_i8, shared_expert.fused.i8: matmul's qgemm_i8 kernel).
#include "ops/matmul/qgemm_cm.h"
#include "ops/matmul/qgemm_i8.h"
#include "ops/moe_experts/route_pack.h"
#include "ops/moe_experts/swiglu.h"

namespace hl::gpu {

namespace {

// The sigmoid gate per token (shared_expert_gate.comp) as a one-expert route: expert [T] (all 0), weight [T].
std::pair<Tensor, Tensor> gate_route(VariantCtx& c, const OpArgs& a) {
  Device& d = c.device();
  const Tensor& x = a.in("x");
  const Tensor gate_w = c.weights->device(a.weight("gate_w"));
  if (gate_w.numel() != x.cols()) fail("shared_expert: gate_w has {} values for {} columns", gate_w.numel(), x.cols());
  struct {
    uint32_t T, H;
  } pc{u32(x.rows()), u32(x.cols())};
  Tensor expert = Tensor::device(d, pc.T, 1, Tensor::Type::I32), weight = Tensor::device(d, pc.T, 1);
  const auto& p = d.pipeline("shared_expert_gate", {{0, d.tune("shared_expert.fused.wg")}}, 4, sizeof pc);
  const Grid g = grid(pc.T);
  d.dispatch(p, {x.buffer(d), gate_w.buffer(d), expert.buffer_mut(d), weight.buffer_mut(d)}, pc, g.x, g.y);
  return {expert, weight};
}

void fused(VariantCtx& c, OpArgs& a, route_pack::Gemm kind) {
  Device& d = c.device();
  const Tensor& x = a.in("x");
  const auto [expert, weight] = gate_route(c, a);
  // A prompt chunk: every token routes to the one expert, so route_pack's grouped GEMM makes it a tiled GEMM
  // (each weight tile serves a tile of tokens); the per-token kernels re-read the weights for every token. On
  // cooperative matrices where the device has them (as moe_experts' route_pack_coopmat, tunable .coopmat).
  if (x.rows() >= int64_t(d.tune("shared_expert.fused.gemm_tokens"))) {
    const WeightRef &gw = a.weight("gate"), &uw = a.weight("up"), &dw = a.weight("down");
    if (kind != route_pack::Gemm::Tiled && !route_pack::coopmat_takes(gw, uw, dw))
      fail("shared_expert: the quantized GEMM does not take these weights (width {} / {})", gw.cols, dw.cols);
    const route_pack::Packed p = route_pack::pack(d, expert, 1, route_pack::tile_rows(d, kind));
    a.set("y", route_pack::scatter(d, route_pack::grouped_swiglu(c, p, x, gw, uw, dw, kind), weight));
    return;
  }
  a.set("y", swiglu_experts(c, "shared_expert", "shared_expert.fused", x, expert, weight, a.weight("gate"), a.weight("up"),
                            a.weight("down"), 1));
}

// Whether the coopmat GEMM runs this prompt chunk: enough tokens, weights it takes, real cooperative matrices (the
// emulated ones only by name).
bool coopmat_chunk(const Device& d, const OpArgs& a) {
  return a.in("x").rows() >= int64_t(d.tune("shared_expert.fused.gemm_tokens")) &&
         route_pack::coopmat_takes(a.weight("gate"), a.weight("up"), a.weight("down"));
}

// The dense GEMM's tunables: matmul's (cooperative matrices; scalar: vulkan:qgemm's).
constexpr const char* kDensePrefix = "matmul.qgemm_coopmat.";
constexpr const char* kDenseScalarPrefix = "matmul.qgemm.";

// Whether vulkan:dense_coopmat runs this call: a prompt chunk whose reductions (H for gate and up, F for down) are
// whole 64-value steps.
bool dense_chunk(const Device& d, const OpArgs& a) {
  return a.in("x").rows() >= int64_t(d.tune("shared_expert.fused.gemm_tokens")) && a.in("x").cols() % 64 == 0 &&
         a.weight("down").cols % 64 == 0;
}

// The dense variants' shapes: gate and up [F, H], down [H, F] for x [T, H].
void check_dense(const OpArgs& a) {
  const Tensor& x = a.in("x");
  const WeightRef &gw = a.weight("gate"), &uw = a.weight("up"), &dw = a.weight("down");
  if (gw.cols != x.cols() || uw.cols != x.cols() || uw.rows != gw.rows || dw.rows != x.cols() || dw.cols != gw.rows)
    fail("shared_expert: gate [{}, {}], up [{}, {}] and down [{}, {}] do not fit x [{}, {}]", gw.rows, gw.cols, uw.rows,
         uw.cols, dw.rows, dw.cols, x.rows(), x.cols());
}

// h [T, F] = silu(g) * u * sigma_t, g and u each the sum of ks slices (the gate/up GEMMs' splits of K), u's from uoff.
Tensor swiglu(Device& d, const Tensor& g, const Tensor& u, const Tensor& sigma, uint32_t T, uint32_t F, uint32_t ks,
              uint32_t uoff) {
  Tensor h = Tensor::device(d, T, F);
  const struct {
    uint32_t n, F, uoff;
  } pc{T * F, F, uoff};
  const uint32_t wg = 256, per = 4;
  const Grid gr = grid((uint64_t(T) * F + wg * per - 1) / (wg * per));
  d.dispatch(d.pipeline("shared_expert_swiglu", {{0, wg}, {1, ks}, {2, per}}, 4, sizeof pc),
             {g.buffer(d), u.buffer(d), sigma.buffer(d), h.buffer_mut(d)}, pc, gr.x, gr.y);
  return h;
}

// y = down(silu(x gate^T) * (x up^T) * sigma): gate and up as two dense GEMMs, the SwiGLU with the token's gate folded
// in, down as a third; on cooperative matrices, or (scalar) on vulkan:qgemm's scalar FMAs.
void dense(VariantCtx& c, OpArgs& a, bool scalar) {
  Device& d = c.device();
  const std::string prefix = scalar ? kDenseScalarPrefix : kDensePrefix;
  const std::string what = scalar ? "shared_expert vulkan:dense_qgemm" : "shared_expert vulkan:dense_coopmat";
  if (auto why = qgemm_unavailable(d, prefix, scalar); !why.empty()) fail("{} cannot run on {}: {}", what, d.info().name, why);
  const Tensor& x = a.in("x");
  const WeightRef &gw = a.weight("gate"), &uw = a.weight("up"), &dw = a.weight("down");
  check_dense(a);
  const auto [expert, sigma] = gate_route(c, a);
  const uint32_t T = u32(x.rows()), F = u32(gw.rows), H = u32(x.cols());
  // On cooperative matrices the weights as the projections read theirs (chunk columns where matmul's tunable asks).
  const auto weight = [&](const WeightRef& w) { return scalar ? qgemm_weight(c, w, what) : qgemm_dense_weight(c, w, prefix, what); };
  const QgemmWeight gq = weight(gw), uq = weight(uw);
  // pair: gate and up in one GEMM pass (A staged once for both), their K splits added up by the SwiGLU pass.
  Tensor g, u;
  uint32_t ks = 1, uoff = 0;
  if (d.tune("shared_expert.dense.pair") && qgemm_same_unit_order(gq.type, uq.type)) {
    QgemmPair p = qgemm_dense_pair(d, prefix, x, gq, uq, F, scalar);
    g = u = p.part;
    ks = p.ks, uoff = p.ks * T * F;
  } else {
    g = qgemm_dense(d, prefix, x, gq, F, scalar);
    u = qgemm_dense(d, prefix, x, uq, F, scalar);
  }
  const Tensor h = swiglu(d, g, u, sigma, T, F, ks, uoff);
  a.set("y", qgemm_dense(d, prefix, h, weight(dw), H, scalar));
}

// Whether vulkan:dense_i8 runs this call: a prompt chunk of weights the integer-dot-product GEMM reads.
bool i8_chunk(const Device& d, const OpArgs& a) {
  const auto reads = [&](const char* w) { return qgemm_i8_reads(a.weight(w).storage_type()); };
  return a.in("x").rows() >= int64_t(d.tune("shared_expert.fused.gemm_tokens")) && reads("gate") && reads("up") && reads("down");
}

// The same three GEMMs on 8-bit integer dot products (matmul's qgemm_i8 kernel, its tunables matmul.qgemm_i8.*): x
// rounded to 8 bits once for gate and up, h rounded so for down.
void dense_i8(VariantCtx& c, OpArgs& a) {
  Device& d = c.device();
  const std::string what = "shared_expert vulkan:dense_i8", prefix = "matmul.qgemm_i8.";
  if (auto why = qgemm_i8_unavailable(d); !why.empty()) fail("{} cannot run on {}: {}", what, d.info().name, why);
  const Tensor& x = a.in("x");
  const WeightRef &gw = a.weight("gate"), &uw = a.weight("up"), &dw = a.weight("down");
  check_dense(a);
  const auto [expert, sigma] = gate_route(c, a);
  const uint32_t T = u32(x.rows()), F = u32(gw.rows), H = u32(x.cols());
  const X8 x8 = quantize_x8(d, x);
  const Tensor g = qgemm_i8_dense(d, prefix, x8, qgemm_weight(c, gw, what), F, H);
  const Tensor u = qgemm_i8_dense(d, prefix, x8, qgemm_weight(c, uw, what), F, H);
  const Tensor h = swiglu(d, g, u, sigma, T, F, 1, 0);
  a.set("y", qgemm_i8_dense(d, prefix, quantize_x8(d, h), qgemm_weight(c, dw, what), H, F));
}

}  // namespace

void register_shared_expert_vulkan(Registry& r) {
  Variant v = vulkan_variant("shared_expert", "vulkan:fused", "sigmoid gate, then the moe_experts kernels as a one-expert route",
                             [](VariantCtx& c, OpArgs& a) { fused(c, a, route_pack::Gemm::Tiled); }, true);
  v.delegate = [](VariantCtx& c, const OpArgs& a) -> std::string {
    const Device& d = c.device();
    const bool dense = d.tune("shared_expert.fused.dense") && dense_chunk(d, a) &&
                       d.tune(std::string(kDensePrefix) + "cm_emulate") == 0 && qgemm_unavailable(d, kDensePrefix).empty();
    if (dense) return "vulkan:dense_coopmat";
    const bool cm = d.tune("shared_expert.fused.coopmat") && coopmat_chunk(d, a) &&
                    d.tune(std::string(route_pack::kCmTune) + "cm_emulate") == 0 && route_pack::coopmat_unavailable(d).empty();
    if (cm) return "vulkan:fused_coopmat";
    // Without cooperative matrices: on integer dot products where asked, else the same choice on the scalar GEMMs (where
    // route_pack takes them).
    if (d.tune("shared_expert.fused.i8") && i8_chunk(d, a) && qgemm_i8_unavailable(d).empty()) return "vulkan:dense_i8";
    if (!d.tune("moe_experts.route_pack.qgemm") || route_pack::qgemm_unavailable(d) != "") return "";
    if (d.tune("shared_expert.fused.dense") && dense_chunk(d, a)) return "vulkan:dense_qgemm";
    return coopmat_chunk(d, a) ? "vulkan:fused_qgemm" : "";
  };
  // Weight rows per subgroup pass of the per-token kernels; from this many tokens on, route_pack's grouped GEMM;
  // coopmat: prompt chunks to vulkan:fused_coopmat where the device has cooperative matrices; dense: prompt chunks
  // to vulkan:dense_coopmat instead (three dense GEMMs with many tiles beat one expert's route-packed tiles). Without
  // cooperative matrices, prompt chunks to vulkan:fused_qgemm as moe_experts' route_pack goes to route_pack_qgemm
  // (moe_experts.route_pack.qgemm), or first to vulkan:dense_i8 (i8 1; lavapipe 0, whose goldens expect exact f32).
  v.tunables = {{"shared_expert.fused.rows", 8}, {"shared_expert.fused.gemm_tokens", 2}, {"shared_expert.fused.coopmat", 1},
                {"shared_expert.fused.dense", 1}, {"shared_expert.fused.i8", 1, {{"lavapipe", 0}}}};
  r.add_variant(std::move(v));
  Variant cm = vulkan_variant("shared_expert", "vulkan:fused_coopmat",
                              "vulkan:fused with prompt chunks on route_pack_coopmat's GEMM (f16 inputs, f32 accumulation; "
                              "tiles: moe_experts.route_pack_coopmat.*)",
                              [](VariantCtx& c, OpArgs& a) { fused(c, a, route_pack::Gemm::Coopmat); }, false, false,
                              route_pack::coopmat_unavailable);
  cm.cooperative_matrices = true;
  cm.precision_tolerance = route_pack::kCoopmatTolerance;
  cm.status = "experimental";
  // Decode and weights the coopmat GEMM does not take: vulkan:fused's kernels.
  cm.delegate = [](VariantCtx& c, const OpArgs& a) -> std::string { return coopmat_chunk(c.device(), a) ? "" : "vulkan:fused"; };
  r.add_variant(std::move(cm));
  Variant q = vulkan_variant("shared_expert", "vulkan:fused_qgemm",
                             "vulkan:fused with prompt chunks on route_pack_qgemm's GEMM (scalar FMAs, the weights rounded "
                             "to f16; tiles: moe_experts.route_pack_qgemm.*)",
                             [](VariantCtx& c, OpArgs& a) {
                               if (auto why = route_pack::qgemm_unavailable(c.device()); !why.empty())
                                 fail("shared_expert vulkan:fused_qgemm cannot run on {}: {}", c.device().info().name, why);
                               fused(c, a, route_pack::Gemm::Qgemm);
                             },
                             false, false, route_pack::qgemm_unavailable);
  q.precision_tolerance = route_pack::kCoopmatTolerance;
  q.status = "experimental";
  q.delegate = [](VariantCtx& c, const OpArgs& a) -> std::string { return coopmat_chunk(c.device(), a) ? "" : "vulkan:fused"; };
  r.add_variant(std::move(q));
  Variant dn = vulkan_variant("shared_expert", "vulkan:dense_coopmat",
                              "prompt chunks as dense GEMMs on matmul's qgemm_coopmat (split K where its tiles are few: "
                              "T = 512 makes 32 tiles of 512 outputs): gate, up, SwiGLU with the sigmoid gate folded in, down",
                              [](VariantCtx& c, OpArgs& a) { dense(c, a, false); }, false, false,
                              [](const Device& d) { return qgemm_unavailable(d, kDensePrefix); });
  dn.cooperative_matrices = true;
  // pair: gate and up as one two-weight pass of qgemm_coopmat's gated tiles (their splits of K summed in the SwiGLU
  // pass) instead of two GEMMs and their split sums; slower on the H200 (ops/shared_expert/README.md).
  dn.tunables = {{"shared_expert.dense.pair", 0}};
  dn.precision_tolerance = std::max(kQgemmTolerance, route_pack::kCoopmatTolerance);
  dn.status = "experimental";
  // Decode and reductions of partial 64-value steps: vulkan:fused's kernels.
  dn.delegate = [](VariantCtx& c, const OpArgs& a) -> std::string { return dense_chunk(c.device(), a) ? "" : "vulkan:fused"; };
  r.add_variant(std::move(dn));
  Variant ds = vulkan_variant("shared_expert", "vulkan:dense_qgemm",
                              "vulkan:dense_coopmat on matmul's vulkan:qgemm (scalar FMAs; tiles: matmul.qgemm.*), for "
                              "devices without cooperative matrices",
                              [](VariantCtx& c, OpArgs& a) { dense(c, a, true); }, false, false,
                              [](const Device& d) { return qgemm_unavailable(d, kDenseScalarPrefix, true); });
  ds.tunables = {{"shared_expert.dense.pair", 0}};
  ds.precision_tolerance = std::max(kQgemmTolerance, route_pack::kCoopmatTolerance);
  ds.status = "experimental";
  ds.delegate = [](VariantCtx& c, const OpArgs& a) -> std::string { return dense_chunk(c.device(), a) ? "" : "vulkan:fused"; };
  r.add_variant(std::move(ds));
  Variant di = vulkan_variant("shared_expert", "vulkan:dense_i8",
                              "prompt chunks as dense GEMMs on matmul's qgemm_i8 (x and h rounded to 8 bits per 32 values, "
                              "integer dot products; tiles: matmul.qgemm_i8.*), for devices without cooperative matrices",
                              dense_i8, false, false, qgemm_i8_unavailable);
  di.precision_tolerance = route_pack::kI8Tolerance;  // x, then h, rounded: as route_pack_i8
  di.delegate = [](VariantCtx& c, const OpArgs& a) -> std::string { return i8_chunk(c.device(), a) ? "" : "vulkan:fused"; };
  r.add_variant(std::move(di));
}

}  // namespace hl::gpu
