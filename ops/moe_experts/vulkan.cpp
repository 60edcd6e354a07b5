// moe_experts on Vulkan, per token: vulkan:per_token, each token's k experts for that token alone. One SwiGLU
// pair of kernels, shared with shared_expert (swiglu.h): moe_gate_up computes weight * silu(gate x) * up x for
// every (token, slot), moe_down sums down(.) over the slots. Quantized (GGUF) experts are read as ggml blocks by
// the same pair's _q kernels.
#include "ops/matmul/quant_rows.h"
#include "ops/moe_experts/swiglu.h"

namespace hl::gpu {

// y [T, H] = sum over slots j of down_e(weight[t, j] * silu(gate_e x_t) * up_e x_t), e = expert[t, j], with
// experts stacked in gate, up [E*F, H] and down [E*H, F]. `tune` prefixes the tunables ("<op>.<variant>").
// f32 experts use moe_gate_up / moe_down; if any of the three is quantized (GGUF), all three are read as raw
// rows (ops/matmul/vulkan_quant.cpp) by moe_gate_up_q / moe_down_q, which decode the blocks in place (rows of whole
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
    check_binding(d, w.back(), op, r->name());
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

namespace {

void experts(VariantCtx& c, OpArgs& a) {
  a.set("y", swiglu_experts(c, "moe_experts", "moe_experts.per_token", a.in("x"), a.in("expert"), a.in("weight"),
                            a.weight("gate"), a.weight("up"), a.weight("down"), a.iparam("n_experts")));
}

}  // namespace

void register_moe_experts_vulkan(Registry& r) {
  Variant v = vulkan_variant("moe_experts", "vulkan:per_token",
                             "each token's k experts for that token alone: gate/up then down, a subgroup per row", experts,
                             false, true);
  v.status = "baseline";
  v.tunables = {{"moe_experts.per_token.rows", 8}};  // weight rows per subgroup pass
  r.add_variant(std::move(v));
}

}  // namespace hl::gpu
