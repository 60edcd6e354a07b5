// moe_experts vulkan:route_pack_warp: route_pack's stages with the grouped GEMM on cooperative matrices, a tile per
// subgroup and no workgroup barrier in its K loop (route_warp_cm.glsl). A is f16 rows in packed order:
// route_gather_f16.comp gathers x's rows for gate/up, and gate/up writes h that way for down.
#include "ops/matmul/qgemm_cm.h"
#include "ops/matmul/quant_rows.h"
#include "ops/moe_experts/route_pack.h"

namespace hl::gpu {

namespace {

constexpr const char* kTune = "moe_experts.route_pack_warp.";
constexpr uint32_t kTileRows = 32;  // packed rows per tile (route_warp_cm.glsl: QG_MR = 2 blocks of 16)

std::string tune_key(const char* k) { return std::string(kTune) + k; }

struct Push {
  uint32_t E, K, N, k, ncol, rb0, rb1;
};

// One pass: gated, h [P + pad, N] f16 (packed order) = silu(A w0_e^T) * (A w1_e^T); else ye [P, N] f32 by entry =
// A w0_e^T. A: f16 rows [P + pad, K] in packed order.
void warp_pass(Device& d, const route_pack::Packed& p, bool gated, const Tensor& a16, const QgemmWeight& w0,
               const QgemmWeight& w1, Tensor& out, uint32_t K, uint32_t N) {
  uint32_t sg = d.tune(tune_key("subgroups")), units = d.tune(tune_key("k_units"));
  if (!sg || units == 0 || 8 % units || units > 4)
    fail("moe_experts: route_pack_warp.subgroups = {} must be at least 1 and k_units = {} one of 1, 2, 4", sg, units);
  while (K % (32 * units)) units /= 2;
  // A staged in shared memory a chunk of a_units units at a time, halved until it divides K's units: a power of two from
  // 8 on, so a K-quant chunk (K a multiple of 256) stays whole blocks; 32-value block types take any divisor.
  uint32_t ach = d.tune(tune_key("a_units"));
  if (ach < 8 || (ach & (ach - 1)))
    fail("moe_experts: route_pack_warp.a_units = {} is not a power of two from 8 on (whole K-quant blocks)", ach);
  while ((K / 32) % ach) ach /= 2;
  // Shared memory: each subgroup's weight tiles (f16, rows padded by 8 halves) and epilogue scratch, the A chunk
  // (f16, rows padded by 8 halves); fewer subgroups, then a smaller chunk, where the device has less (lavapipe's 32 KB).
  const uint32_t cols = d.tune(tune_key("cols"));
  if (cols != 16 && cols != 32) fail("moe_experts: route_pack_warp.cols = {} must be 16 or 32", cols);
  const uint64_t cr = cols * (gated ? 1 : 2), kp = 8 * units + 2, nw = gated ? 2 : 1;
  const auto shared = [&] {
    return sg * (8 * cr * kp * nw + 1024 * nw) + 4 * kTileRows + 8 * kTileRows * (8 * ach + 2);
  };
  while (shared() > d.info().max_shared_memory && ach > 8 && ach % 2 == 0) ach /= 2;
  while (shared() > d.info().max_shared_memory && sg > 1) sg /= 2;
  if (shared() > d.info().max_shared_memory)
    fail("moe_experts: route_pack_warp's tiles need {} bytes of shared memory, this device has {}", shared(),
         d.info().max_shared_memory);
  const uint32_t wg = sg * d.info().max_subgroup_size;
  if (wg > d.info().max_workgroup_invocations)
    fail("moe_experts: route_pack_warp: {} subgroups make {} invocations, the device allows {}", sg, wg,
         d.info().max_workgroup_invocations);
  const uint32_t bn = u32(cr) * sg;  // the workgroup's output columns
  const Push pc{u32(p.E), K, N, u32(p.k), (N + bn - 1) / bn, w0.row_bytes, w1.row_bytes};
  const uint64_t rows = p.rows.cols(), tiles = (rows + kTileRows - 1) / kTileRows + std::min<uint64_t>(p.E, rows);
  const Grid g = grid(tiles * pc.ncol);
  const bool emul = d.tune(tune_key("cm_emulate")) != 0;
  const std::string kernel = gated ? (cols == 32 ? "route_warp_gate32_cm" : "route_warp_gate_cm")
                                   : (cols == 32 ? "route_warp_down64_cm" : "route_warp_down_cm");
  const auto& pl = d.pipeline(kernel + (emul ? "_emul" : ""),
                              {{0, wg}, {1, sg}, {3, gated ? 1u : 0u}, {5, w0.type}, {6, w1.type}, {8, units},
                               {10, d.tune(tune_key("prefetch"))}, {11, ach}},
                              9, sizeof pc, !emul && d.info().subgroup_size_control && d.info().compute_full_subgroups);
  const BufferPtr b0 = w0.t.buffer(d), b1 = w1.t.buffer(d);
  d.dispatch(pl, {a16.buffer(d), p.rows.buffer(d), p.offsets.buffer(d), p.tiles.buffer(d), b0, b1, out.buffer_mut(d), b0, b1},
             pc, g.x, g.y);
}

void route_pack_warp_experts(VariantCtx& c, OpArgs& a) {
  Device& d = c.device();
  if (auto why = route_pack::warp_unavailable(d); !why.empty())
    fail("moe_experts vulkan:route_pack_warp cannot run on {}: {}", d.info().name, why);
  const Tensor &x = a.in("x"), &expert = a.in("expert"), &weight = a.in("weight");
  const WeightRef &gate = a.weight("gate"), &up = a.weight("up"), &down = a.weight("down");
  const int64_t T = x.rows(), H = x.cols(), E = a.iparam("n_experts");
  if (expert.rows() != T || weight.rows() != T || weight.cols() != expert.cols() || expert.cols() < 1)
    fail("moe_experts: routes expert [{}, {}], weight [{}, {}] do not fit {} tokens", expert.rows(), expert.cols(),
         weight.rows(), weight.cols(), T);
  if (E < 1 || gate.rows % E) fail("moe_experts: gate has {} rows, not a multiple of {} experts", gate.rows, E);
  const int64_t F = gate.rows / E;
  if (gate.cols != H || up.rows != gate.rows || up.cols != H || down.rows != E * H || down.cols != F)
    fail("moe_experts: x [{}, {}] does not fit {} experts gate [{}, {}], up [{}, {}], down [{}, {}]", T, H, E, gate.rows,
         gate.cols, up.rows, up.cols, down.rows, down.cols);
  if (!route_pack::coopmat_takes(gate, up, down))
    fail("moe_experts vulkan:route_pack_warp: experts of width {} and hidden {} ({}/{}/{}) it cannot take", F, H,
         quant::type_name(gate.storage_type()), quant::type_name(up.storage_type()), quant::type_name(down.storage_type()));
  const route_pack::Packed p = route_pack::pack(d, expert, E, kTileRows);
  const int64_t P = p.rows.cols();
  const std::string what = "moe_experts vulkan:route_pack_warp";
  const QgemmWeight wg = qgemm_weight(c, gate, what), wu = qgemm_weight(c, up, what), wd = qgemm_weight(c, down, what);
  // A of gate/up: x's rows in packed order as f16 (two per float of the tensor), then a tile of zeros.
  Tensor a16 = Tensor::device(d, P + kTileRows, H / 2), h16 = Tensor::device(d, P + kTileRows, F / 2);
  const struct {
    uint32_t P, pad, K4, k;
  } gp{u32(P), kTileRows, u32(H / 4), u32(p.k)};
  const Grid gg = grid(((uint64_t(P) + kTileRows) * (H / 4) + 255) / 256);
  d.dispatch(d.pipeline("route_gather_f16", {{0, 256}}, 3, sizeof gp), {x.buffer(d), p.rows.buffer(d), a16.buffer_mut(d)},
             gp, gg.x, gg.y);
  warp_pass(d, p, true, a16, wg, wu, h16, u32(H), u32(F));
  Tensor ye = Tensor::device(d, P, H);
  warp_pass(d, p, false, h16, wd, wd, ye, u32(F), u32(H));
  a.set("y", route_pack::scatter(d, ye, weight));
}

// Decode (fewer than route_pack.min_tokens tokens): the per-token kernels; experts it does not take: route_pack.
std::string route_pack_warp_pick(VariantCtx& c, const OpArgs& a) {
  if (a.in("x").rows() < int64_t(c.device().tune("moe_experts.route_pack.min_tokens"))) return "vulkan:per_token";
  return route_pack::coopmat_takes(a.weight("gate"), a.weight("up"), a.weight("down")) ? "" : "vulkan:route_pack";
}

}  // namespace

namespace route_pack {
std::string warp_unavailable(const Device& d) {
  if (auto why = qgemm_unavailable(d, kTune); !why.empty()) return why;
  if (!d.info().storage_buffer_16bit) return "no storageBuffer16BitAccess (A is read as f16 rows)";
  // Each step's 32 row runs over one subgroup: at most 2 per invocation (4 emulated).
  const uint32_t most = d.tune(tune_key("cm_emulate")) ? 4 : 2;
  if (d.info().min_subgroup_size * most < 32)
    return fmt::format("subgroups of {} invocations (the kernel takes {} or more)", d.info().min_subgroup_size, 32 / most);
  return "";
}
}  // namespace route_pack

void register_moe_experts_vulkan_route_warp(Registry& r) {
  Variant w = vulkan_variant("moe_experts", "vulkan:route_pack_warp",
                             "vulkan:route_pack with the grouped GEMM on cooperative matrices, a tile of its own per "
                             "subgroup (no workgroup barrier in the K loop): A as f16 rows in packed order read straight "
                             "into the matrices, the weights' units decoded into each subgroup's shared tile",
                             route_pack_warp_experts, false, false, route_pack::warp_unavailable);
  w.cooperative_matrices = true;
  w.precision_tolerance = route_pack::kCoopmatTolerance;  // A, h and the weights rounded to f16, f32 accumulation
  w.delegate = route_pack_warp_pick;
  // subgroups: per workgroup, each 32 packed rows by `cols` (16 or 32) columns of gate and up (twice that of down);
  // k_units: 32-value units
  // per step; prefetch: Q4_K weights' next step held in registers; a_units: A staged in shared memory that many units
  // of K at a time (H100: 8 and 16 alike; each subgroup reading A from memory itself failed at full size there, rel L2
  // inf, and was removed); cm_emulate 1: the test hook.
  w.tunables = {{tune_key("subgroups"), 4}, {tune_key("cols"), 16}, {tune_key("k_units"), 1}, {tune_key("prefetch"), 1},
                {tune_key("a_units"), 8},
                {tune_key("cm_emulate"), 0}};
  r.add_variant(std::move(w));
}

}  // namespace hl::gpu
