// Vulkan variants of embed (gather), moe_router (softmax_topk), moe_experts (per_token) and shared_expert
// (fused). The routed experts and the shared expert share one SwiGLU pair of kernels: moe_gate_up computes
// weight * silu(gate x) * up x for every (token, slot), moe_down sums down(.) over the slots. The shared
// expert is a one-expert route whose weight is sigmoid(x . gate_w). Quantized (GGUF) experts are read as
// ggml blocks by the same pair's _q kernels.
#include "gpu/ops/vk_op.h"
#include "gpu/ops/vk_route_pack.h"

namespace hl::gpu {

namespace {

// A tensor bound whole as one storage buffer must fit maxStorageBufferRange (lavapipe: 128 MiB).
void check_binding(const Device& d, const Tensor& t, const char* op, const char* what) {
  if (t.bytes() > d.info().max_storage_buffer_range)
    fail("{}: {} [{}, {}] is {} MiB, beyond this device's storage-buffer range of {} MiB", op, what, t.rows(), t.cols(),
         t.bytes() >> 20, d.info().max_storage_buffer_range >> 20);
}

void embed(VariantCtx& c, OpArgs& a) {
  Device& d = c.device();
  const Tensor& tok = a.in("tokens");
  const Tensor table = c.weights->device(a.weight("table"));
  if (tok.type() != Tensor::Type::I32 || tok.rows() != 1) fail("embed: tokens must be i32 [1, T]");
  check_binding(d, table, "embed", "the table");
  struct {
    uint32_t T, H, V;
  } pc{u32(tok.cols()), u32(table.cols()), u32(table.rows())};
  Tensor y = Tensor::device(d, pc.T, pc.H);
  const auto& p = d.pipeline("embed", {{0, d.tune("embed.gather.wg")}}, 3, sizeof pc);
  const Grid g = grid(pc.T);
  d.dispatch(p, {tok.buffer(d), table.buffer(d), y.buffer_mut(d)}, pc, g.x, g.y);
  a.set("y", y);
}

void router(VariantCtx& c, OpArgs& a) {
  Device& d = c.device();
  const Tensor& logits = a.in("logits");
  struct {
    uint32_t T, E, k;
  } pc{u32(logits.rows()), u32(logits.cols()), u32(a.iparam("k"))};
  if (pc.k < 1 || pc.k > pc.E) fail("moe_router: top-{} of {} experts", pc.k, pc.E);
  const uint32_t size = d.tune("moe_router.softmax_topk.wg");
  // p[E], two per-subgroup partials per invocation, hl_workgroup_sum's partials, a few scalars.
  const uint64_t shared = 4ull * (pc.E + 3ull * size + 4);
  if (shared > d.info().max_shared_memory)
    fail("moe_router: {} experts need {} bytes of shared memory, this device has {}", pc.E, shared,
         d.info().max_shared_memory);
  Tensor expert = Tensor::device(d, pc.T, pc.k, Tensor::Type::I32), weight = Tensor::device(d, pc.T, pc.k);
  const auto& p = d.pipeline("moe_router", {{0, size}, {1, pc.E}}, 3, sizeof pc);
  const Grid g = grid(pc.T);
  d.dispatch(p, {logits.buffer(d), expert.buffer_mut(d), weight.buffer_mut(d)}, pc, g.x, g.y);
  a.set("expert", expert);
  a.set("weight", weight);
}

// y [T, H] = sum over slots j of down_e(weight[t, j] * silu(gate_e x_t) * up_e x_t), e = expert[t, j], with
// experts stacked in gate, up [E*F, H] and down [E*H, F]. `tune` prefixes the tunables ("<op>.<variant>").
// f32 experts use moe_gate_up / moe_down; if any of the three is quantized (GGUF), all three are read as raw
// rows (gpu/ops/vk_quant.cpp) by moe_gate_up_q / moe_down_q, which decode the blocks in place (rows of whole
// 32-value units; other shapes are dequantized to f32 for the f32 kernels).
Tensor swiglu_experts(VariantCtx& c, const std::string& op, const std::string& tune, const Tensor& x, const Tensor& expert,
                      const Tensor& weight, const WeightRef& gate, const WeightRef& up, const WeightRef& down, int64_t E) {
  Device& d = c.device();
  const int64_t T = x.rows(), H = x.cols(), k = expert.cols();
  if (E < 1 || gate.rows % E) fail("{}: gate has {} rows, not a multiple of {} experts", op, gate.rows, E);
  const int64_t F = gate.rows / E;
  if (gate.cols != H || up.rows != gate.rows || up.cols != H || down.rows != E * H || down.cols != F)
    fail("{}: x [{}, {}] does not fit {} experts gate [{}, {}], up [{}, {}], down [{}, {}]", op, T, H, E, gate.rows,
         gate.cols, up.rows, up.cols, down.rows, down.cols);
  if (expert.type() != Tensor::Type::I32 || expert.rows() != T || weight.rows() != T || weight.cols() != k)
    fail("{}: routes expert [{}, {}] (i32), weight [{}, {}] do not fit {} tokens", op, expert.rows(), k, weight.rows(),
         weight.cols(), T);
  // Quantized experts are read as blocks when the kernels decode all three (else dequantized to f32 once).
  const bool quantized = (gate.quantized() || up.quantized() || down.quantized()) && vk_quant_decodes(gate) &&
                         vk_quant_decodes(up) && vk_quant_decodes(down);
  std::vector<Tensor> w;
  for (const WeightRef* r : {&gate, &up, &down}) {
    w.push_back(quantized ? vk_quant_rows(c, *r, op + " vulkan") : c.weights->device(*r));
    check_binding(d, w.back(), op.c_str(), r->name().c_str());
  }
  const uint32_t size = d.tune(tune + ".wg"), rows = d.tune(tune + ".rows");
  auto row_bytes = [](const WeightRef& r) { return u32(int64_t(quant::row_bytes(r.storage_type(), r.cols))); };
  struct {
    uint32_t T, H, F, k, E, blocks, rb_gate, rb_up, rb_down;  // the f32 kernels read the first six
  } pc{u32(T), u32(H), u32(F), u32(k), u32(E), u32((F + rows - 1) / rows), row_bytes(gate), row_bytes(up), row_bytes(down)};
  Tensor hmid = Tensor::device(d, T * k, F), y = Tensor::device(d, T, H);
  const auto type = [](const WeightRef& r) { return uint32_t(r.storage_type()); };
  const auto& p1 = quantized ? d.pipeline("moe_gate_up_q", {{0, size}, {1, rows}, {2, type(gate)}, {3, type(up)}}, 6, sizeof pc)
                             : d.pipeline("moe_gate_up", {{0, size}, {1, rows}}, 6, sizeof pc);
  Grid g = grid(uint64_t(T * k) * pc.blocks);
  d.dispatch(p1, {x.buffer(d), expert.buffer(d), weight.buffer(d), w[0].buffer(d), w[1].buffer(d), hmid.buffer_mut(d)}, pc,
             g.x, g.y);
  pc.blocks = u32((H + rows - 1) / rows);
  const auto& p2 = quantized ? d.pipeline("moe_down_q", {{0, size}, {1, rows}, {2, type(down)}}, 4, sizeof pc)
                             : d.pipeline("moe_down", {{0, size}, {1, rows}}, 4, sizeof pc);
  g = grid(uint64_t(T) * pc.blocks);
  d.dispatch(p2, {hmid.buffer(d), expert.buffer(d), w[2].buffer(d), y.buffer_mut(d)}, pc, g.x, g.y);
  return y;
}

void experts(VariantCtx& c, OpArgs& a) {
  a.set("y", swiglu_experts(c, "moe_experts", "moe_experts.per_token", a.in("x"), a.in("expert"), a.in("weight"),
                            a.weight("gate"), a.weight("up"), a.weight("down"), a.iparam("n_experts")));
}

void shared_expert(VariantCtx& c, OpArgs& a) {
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
  // A prompt chunk: every token routes to the one expert, so route_pack's grouped GEMM makes it a tiled GEMM
  // (each weight tile serves a tile of tokens); the per-token kernels re-read the weights for every token.
  if (pc.T >= d.tune("shared_expert.fused.gemm_tokens")) {
    const route_pack::Packed p = route_pack::pack(d, expert, 1);
    a.set("y", route_pack::scatter(d, route_pack::grouped_swiglu(c, p, x, a.weight("gate"), a.weight("up"), a.weight("down"), false),
                                   weight));
    return;
  }
  a.set("y", swiglu_experts(c, "shared_expert", "shared_expert.fused", x, expert, weight, a.weight("gate"), a.weight("up"),
                            a.weight("down"), 1));
}

}  // namespace

void register_vk_moe(Registry& r) {
  r.add_variant(vulkan_variant("embed", "vulkan:gather", "a workgroup per token copies its table row", embed, true));
  r.add_variant(vulkan_variant("moe_router", "vulkan:softmax_topk",
                               "a workgroup per token: softmax in shared memory, k workgroup argmax rounds", router, true));
  r.add_variant(vulkan_variant("moe_experts", "vulkan:per_token",
                               "each token's k experts for that token alone: gate/up then down, a subgroup per row",
                               experts, false, true));
  r.add_variant(vulkan_variant("shared_expert", "vulkan:fused",
                               "sigmoid gate, then the moe_experts kernels as a one-expert route", shared_expert, true));
}

}  // namespace hl::gpu
