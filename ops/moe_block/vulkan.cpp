// moe_block on Vulkan: vulkan:fused_decode, the whole MoE block in three dispatches (moe_block_x.comp: router
// logits, the shared expert's SwiGLU and its gate; moe_block_gate_up.comp: the routes and the routed experts'
// SwiGLU; moe_block_down.comp: both downs, weighted and summed). Weights are read as raw rows (f32 or ggml
// blocks, ops/shaders/quant_blocks.glsl), so every width must be whole 32-value units.
#include "ops/moe_block/fused.h"
#include "ops/matmul/quant_rows.h"

namespace hl::gpu {

// Declared in fused.h.
Tensor moe_block_fused(VariantCtx& c, OpArgs& a, HeadAddNorm* head) {
  Device& d = c.device();
  const std::string what = head ? "add_rmsnorm_moe_block vulkan:fused_decode" : "moe_block vulkan:fused_decode";
  const Tensor& x = a.in("x");
  const int64_t T = x.rows(), H = x.cols(), E = a.iparam("n_experts"), k = a.iparam("k");
  const WeightRef &router = a.weight("router"), &gate = a.weight("gate"), &up = a.weight("up"), &down = a.weight("down");
  const WeightRef &sgate = a.weight("sgate"), &sup = a.weight("sup"), &sdown = a.weight("sdown"), &gate_w = a.weight("gate_w");
  if (E < 1 || k < 1 || k > E || E > 1024 || k > 64) fail("{}: top-{} of {} experts (at most 64 of 1024)", what, k, E);
  if (gate.rows % E) fail("{}: gate has {} rows, not a multiple of {} experts", what, gate.rows, E);
  const int64_t F = gate.rows / E, Fs = sgate.rows;
  if (router.rows != E || router.cols != H || gate.cols != H || up.rows != gate.rows || up.cols != H || down.rows != E * H ||
      down.cols != F || sgate.cols != H || sup.rows != Fs || sup.cols != H || sdown.rows != H || sdown.cols != Fs ||
      gate_w.rows != 1 || gate_w.cols != H)
    fail("{}: x [{}, {}] does not fit router [{}, {}], {} experts gate/up [{}, {}] down [{}, {}], shared gate/up [{}, {}] "
         "down [{}, {}], gate_w [{}, {}]", what, T, H, router.rows, router.cols, E, gate.rows, gate.cols, down.rows,
         down.cols, sgate.rows, sgate.cols, sdown.rows, sdown.cols, gate_w.rows, gate_w.cols);
  if (H % 32 || F % 32 || Fs % 32)
    fail("{}: hidden {}, expert width {} and shared width {} must be multiples of 32 (whole units of the row kernels)", what,
         H, F, Fs);
  std::vector<Tensor> w;
  for (const WeightRef* r : {&router, &gate, &up, &down, &sgate, &sup, &sdown})
    w.push_back(vk_quant_rows(c, *r, what)), check_binding(d, w.back(), "moe_block", r->name());
  const WeightRef& gw = gate_w;
  w.push_back(vk_quant_rows(c, gw, what));
  const auto rb = [](const WeightRef& r) { return u32(int64_t(quant::row_bytes(r.storage_type(), r.cols))); };
  const auto type = [](const WeightRef& r) { return uint32_t(r.storage_type()); };
  const std::string tn = "moe_block.fused_decode.";
  const uint32_t wg = d.tune(tn + "wg"), rx = d.tune(tn + "x_rows"), rg = d.tune(tn + "gate_up_rows"), rd = d.tune(tn + "down_rows");
  if (!wg || !rx || !rg || !rd) fail("{}: tunables wg, x_rows, gate_up_rows and down_rows must be at least 1", what);
  // The kernels' loops run a constant number of steps of a whole subgroup each (their loads then issue together).
  const uint32_t sgs = d.info().subgroup_size, sg_min = d.info().min_subgroup_size;
  if (wg % sgs) fail("{}: workgroup size {} is not a multiple of the subgroup size {}", what, wg, sgs);
  // Rows per subgroup of steps 2 and 3 (their RPS): the workgroup's rows over its fewest subgroups (at the largest size).
  const auto rps = [&](uint32_t rows) {
    const uint32_t nsg = std::max<uint32_t>(1, wg / std::max<uint32_t>(1, d.info().max_subgroup_size));
    return (rows + nsg - 1) / nsg;
  };
  // Diagnosis only (undeclared, results wrong unless 0): bits 0, 1, 2 leave step 1, 2, 3 out; bit 3: step 2 takes
  // fixed routes instead of finding them; with steps 2, bit 4 stores the second step's parts instead of adding them, bit 5
  // leaves its down part out. What `experiment moe --chain N --time-failing` times to see which step takes a block's time.
  const uint32_t diag = d.profile().get(tn + "diag", 0);
  struct {
    uint32_t T, H, E, F, Fs, k, blocks, rb_r, rb_g, rb_u, rb_d, rb_sg, rb_su, rb_sd, rb_gw;
    float eps;
  } pc{u32(T), u32(H), u32(E), u32(F), u32(Fs), u32(k), 0, rb(router), rb(gate), rb(up), rb(down), rb(sgate), rb(sup), rb(sdown),
       rb(gw), head ? head->eps : 0.0f};
  // x16: x, hmid and hs as 16-bit fixed point and integer dot products (moe_block_*_x16.comp) where the routed and shared
  // experts are K-quants and the device has integer dot products.
  const auto kquant = [&](const WeightRef& r) { return type(r) >= uint32_t(quant::Type::Q4_K) && type(r) <= uint32_t(quant::Type::Q6_K); };
  // shared_step: the step that computes the shared expert's SwiGLU (1: with the router, only x needed; 2: beside the
  // routed experts' gate/up, in workgroups that need no routes).
  const uint32_t shared_step = d.tune(tn + "shared_step");
  if (shared_step != 1 && shared_step != 2) fail("{}: {}shared_step = {} must be 1 or 2", what, tn, shared_step);
  const bool x16 = d.tune(tn + "x16") && d.info().integer_dot_product;
  const bool x16_gate_up = x16 && kquant(gate) && kquant(up) && (shared_step == 1 || (kquant(sgate) && kquant(sup)));
  const bool x16_down = x16 && kquant(down) && kquant(sdown);
  // Step 1's shared expert rows (where it takes them), beside the f32 router.
  const bool x16_x = x16 && shared_step == 1 && kquant(sgate) && kquant(sup);
  // steps 2: the routed experts' gate/up and down in one dispatch, down's K split over its workgroups and y summed by
  // float atomics (moe_block_experts.comp; step 1 zeroes y), where the device has them and step 1 takes the shared
  // expert's SwiGLU; else three steps.
  const uint32_t steps = d.tune(tn + "steps"), su = d.tune(tn + "split_units"), swg = d.tune(tn + "split_wg");
  if (steps != 2 && steps != 3) fail("{}: {}steps = {} must be 2 or 3", what, tn, steps);
  if (!su || su > 4) fail("{}: {}split_units = {} must be 1 to 4", what, tn, su);
  const bool two = steps == 2 && d.info().float32_atomic_add && shared_step == 1 && F % (32 * su) == 0;
  if (two && (swg % sgs || swg > d.info().max_workgroup_invocations))
    fail("{}: {}split_wg = {} is not a multiple of the subgroup size {} up to {} invocations", what, tn, swg, sgs,
         d.info().max_workgroup_invocations);
  Tensor logits = Tensor::device(d, T, E), hs = Tensor::device(d, T, Fs), sg = Tensor::device(d, T, 1), y = Tensor::device(d, T, H);
  pc.blocks = u32((E + (shared_step == 1 ? Fs : 0) + 1 + rx - 1) / rx);
  std::vector<BufferPtr> bind1{x.buffer(d), w[0].buffer(d), w[4].buffer(d), w[5].buffer(d), w[7].buffer(d), logits.buffer_mut(d),
                               hs.buffer_mut(d), sg.buffer_mut(d)};
  // With the add and norm in front, step 1 stages rmsnorm(x + a) * gain and writes it for steps 2 and 3, which read it as x.
  Tensor xn = x;
  if (head) {
    if (head->a.rows() != T || head->a.cols() != H || head->gain.numel() != H)
      fail("{}: addend [{}, {}] and gain [{}] do not fit the residual [{}, {}]", what, head->a.rows(), head->a.cols(),
           head->gain.numel(), T, H);
    if (uint64_t(H) * 4 + 4096 > d.info().max_shared_memory)
      fail("{}: a row of {} values does not fit {} bytes of shared memory", what, H, d.info().max_shared_memory);
    head->s = Tensor::device(d, T, H);
    xn = Tensor::device(d, T, H);
    bind1.insert(bind1.end(), {head->a.buffer(d), head->gain.buffer(d), head->s.buffer_mut(d), xn.buffer_mut(d)});
  }
  bind1.push_back(y.buffer_mut(d));  // zeroed where two steps sum into it
  const auto& p1 = d.pipeline(std::string(head ? "moe_block_x_norm" : "moe_block_x") + (x16_x ? "_x16" : ""),
                              {{0, wg}, {1, rx}, {2, type(router)}, {3, type(sgate)}, {4, type(sup)}, {5, type(gw)},
                               {6, u32(H / 32)}, {7, sg_min}, {8, d.tune(tn + "router16")},
                               {9, d.tune(tn + "interleave")}, {10, d.tune(tn + "early_x")}, {11, shared_step == 1 ? 1u : 0u},
                               {12, two ? 1u : 0u}},
                              uint32_t(bind1.size()), sizeof pc);
  Grid g = grid(uint64_t(T) * pc.blocks);
  if (!(diag & 1u)) d.dispatch(p1, bind1, pc, g.x, g.y);
  if (two) {
    const uint32_t rows = 32 * su;
    pc.blocks = u32(F / rows);
    // down_columns: both downs in chunk columns of H rows (a second copy of them on the device), so each workgroup's
    // column of units, one per output, comes from neighbouring bytes.
    const bool cols = d.tune(tn + "down_columns") && kquant(down) && kquant(sdown);
    if (cols) w[3] = vk_quant_chunk_columns(c, down, H, what), w[6] = vk_quant_chunk_columns(c, sdown, H, what);
    const uint32_t nsg = std::max<uint32_t>(1, swg / std::max<uint32_t>(1, d.info().max_subgroup_size));
    const auto& p2 = d.pipeline(x16_gate_up ? "moe_block_experts_x16" : "moe_block_experts",
                                {{0, swg}, {1, rows}, {2, type(gate)}, {3, type(up)}, {4, u32(E)}, {5, u32(k)}, {6, u32(H / 32)},
                                 {7, sg_min}, {8, d.tune(tn + "rank")}, {9, (diag >> 3) & 1u}, {10, d.tune(tn + "topk_merge")},
                                 {11, (rows + nsg - 1) / nsg}, {12, 0u}, {13, type(sgate)}, {14, type(sup)}, {15, type(down)},
                                 {16, type(sdown)}, {17, d.tune(tn + "early_down")}, {18, (diag >> 4) & 3u}, {19, cols ? 1u : 0u}},
                                9, sizeof pc);
    g = grid(uint64_t(T * k) * pc.blocks);
    if (!(diag & 2u))
      d.dispatch(p2, {xn.buffer(d), logits.buffer(d), w[1].buffer(d), w[2].buffer(d), w[3].buffer(d), w[6].buffer(d),
                      hs.buffer(d), sg.buffer(d), y.buffer_mut(d)}, pc, g.x, g.y);
    return y;
  }
  Tensor hmid = Tensor::device(d, T * k, F), expert = Tensor::device(d, T, k, Tensor::Type::I32), weight = Tensor::device(d, T, k);
  pc.blocks = u32((F + rg - 1) / rg);
  const auto& p2 = d.pipeline(x16_gate_up ? "moe_block_gate_up_x16" : "moe_block_gate_up",
                              {{0, wg}, {1, rg}, {2, type(gate)}, {3, type(up)}, {4, u32(E)}, {5, u32(k)}, {6, u32(H / 32)}, {7, sg_min},
                               {8, d.tune(tn + "rank")}, {9, (diag >> 3) & 1u}, {10, d.tune(tn + "topk_merge")}, {11, rps(rg)},
                               {12, shared_step == 2 ? 1u : 0u}, {13, type(sgate)}, {14, type(sup)}},
                              10, sizeof pc);
  g = grid(uint64_t(T * k) * pc.blocks + (shared_step == 2 ? uint64_t(T) * ((Fs + rg - 1) / rg) : 0));
  if (!(diag & 2u))
    d.dispatch(p2, {xn.buffer(d), logits.buffer(d), w[1].buffer(d), w[2].buffer(d), hmid.buffer_mut(d), expert.buffer_mut(d),
                  weight.buffer_mut(d), w[4].buffer(d), w[5].buffer(d), hs.buffer_mut(d)}, pc, g.x, g.y);
  pc.blocks = u32((H + rd - 1) / rd);
  std::vector<BufferPtr> bind{hmid.buffer(d), expert.buffer(d), w[3].buffer(d), hs.buffer(d), w[6].buffer(d), sg.buffer(d),
                              y.buffer_mut(d)};
  const auto& p3 = d.pipeline(std::string("moe_block_down") + (x16_down ? "_x16" : ""),
                              {{0, wg}, {1, rd}, {2, type(down)}, {3, type(sdown)}, {4, u32(k)}, {5, u32(F / 32)},
                               {6, u32(Fs / 32)}, {7, sg_min}, {8, rps(rd)}, {9, d.tune(tn + "early_down")}},
                              uint32_t(bind.size()), sizeof pc);
  g = grid(uint64_t(T) * pc.blocks);
  if (!(diag & 4u)) d.dispatch(p3, bind, pc, g.x, g.y);
  return y;
}

namespace {

void fused_decode(VariantCtx& c, OpArgs& a) { a.set("y", moe_block_fused(c, a, nullptr)); }

}  // namespace

// Whether vulkan:fused_decode takes this block's weights: every width whole 32-value units of a type the row
// kernels decode (the plan executor fuses the block in decode only then).
bool moe_block_fused_takes(const WeightRef& router, const ExpertWeights& experts, const ExpertWeights& shared) {
  for (const WeightRef* r : {&router, &experts.gate, &experts.up, &experts.down, &shared.gate, &shared.up, &shared.down})
    if (!vk_quant_decodes(*r)) return false;
  return true;
}

void register_moe_block_vulkan(Registry& r) {
  Variant v = vulkan_variant("moe_block", "vulkan:fused_decode",
                             "router, routes, routed and shared experts in three dispatches: x-only rows, routes + gate/up, "
                             "both downs summed",
                             fused_decode, true);
  // Threads per workgroup; rows per workgroup of each step (a subgroup per row).
  v.tunables = {{"moe_block.fused_decode.wg", 256},
                {"moe_block.fused_decode.x_rows", 8},
                // The step of the shared expert's SwiGLU: 1 with the router (x only), 2 beside the routed gate/up (slower on
                // the H100: the block 46.8 against 45.4 us per layer in the decode profile, README.md).
                {"moe_block.fused_decode.shared_step", 1},
                {"moe_block.fused_decode.gate_up_rows", 8},
                {"moe_block.fused_decode.down_rows", 8},
                // f32 router rows: 2 consecutive 16-byte words across the lanes, 1 a 32-value unit per lane 16 bytes at a
                // time, 0 a word at a time (as the quantized rows).
                {"moe_block.fused_decode.router16", 2},
                // 1: step 1's workgroups take rows strided by their count (the f32 router rows spread over all of them).
                {"moe_block.fused_decode.interleave", 1},
                // 1: step 2's routes by one ranking pass of the whole workgroup instead of K rounds of a subgroup argmax
                // (slower on the H200: reports/nvidia-h200/decode-composites.md).
                {"moe_block.fused_decode.rank", 0},
                // 1: step 2's K rounds of a subgroup argmax replaced by a merge of the lanes' sorted lists (log2 of the
                // subgroup size butterfly levels; K at most 8), the same routes and weights; slower on the H200 (the MoE
                // block about 1 us more per layer in the decode profile, reports/nvidia-h200/decode-instream.md).
                {"moe_block.fused_decode.topk_merge", 0},
                // 1: x, hmid and hs as 16-bit fixed point, integer dot products (ops/shaders/x16.glsl), where they apply.
                {"moe_block.fused_decode.x16", 1},
                // 1 (x16): step 3's weight units loaded before hmid and hs are staged (their round trips overlapped); with
                // steps 2, down's K-quant units loaded right after the routes, before the gate/up products.
                {"moe_block.fused_decode.early_down", 0},
                // 1 (with the add and norm in front): step 1's f32 router rows and K-quant shared rows loaded before the
                // token's row is staged and normed.
                {"moe_block.fused_decode.early_x", 0},
                // 2: the routed experts' gate/up and down in one dispatch (down's K split over its workgroups, y summed by
                // float atomics: not bit-reproducible), where the device has float atomic adds; 3: three dispatches.
                // H100 (one call, interleaved): tg128 301.52 / 302.49 at 2 against 286.39 / 288.12 at 3.
                {"moe_block.fused_decode.steps", 3, {{"nvidia-hopper", 2}}},
                // steps 2: down's 32-value units per workgroup (its gate/up rows: 32 per unit) and its threads.
                {"moe_block.fused_decode.split_units", 1},
                {"moe_block.fused_decode.split_wg", 1024},
                // 1 (steps 2, K-quant downs): down and the shared down read from chunk columns of H rows (a second copy
                // on the device, WeightStore::device_chunk_columns) instead of the rows as uploaded. H100 (one call,
                // interleaved): tg128 312.38 / 312.34 at 1 against 301.61 / 302.57 at 0.
                {"moe_block.fused_decode.down_columns", 0, {{"nvidia-hopper", 1}}}};
  v.precision_tolerance = kX16Tolerance;
  r.add_variant(std::move(v));
}

}  // namespace hl::gpu
