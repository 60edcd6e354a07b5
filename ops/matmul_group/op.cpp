// matmul_group: the projections of one input x, y_i = x w_i^T for two to four weights (a layer's q, k, v; the Gated
// DeltaNet's qkv, b, a, z). A composite op (parts: matmul): with its reference variant the forward pass runs one
// matmul per weight, each as the plan picks it; its Vulkan variant runs them as one dispatch in decode (README.md).
#include "ops/matmul/reference.h"
#include "ops/matmul_group/group.h"
#include "ops/registry.h"

namespace hl::gpu {

OpDef matmul_group_with_cases(OpDef d);  // cases.cpp: its cases and tolerance
void register_matmul_group_vulkan(Registry& r);  // vulkan.cpp

// The weights of a call, w0 .. w{n-1} in order (w1 at least; no gaps).
std::vector<WeightRef> matmul_group_weights(const OpArgs& a, const std::string& what) {
  std::vector<WeightRef> ws;
  for (int i = 0; i < 4 && a.w.count(fmt::format("w{}", i)); ++i) ws.push_back(a.w.at(fmt::format("w{}", i)));
  if (ws.size() < 2 || a.w.size() != ws.size())
    fail("{}: weights w0 .. w{{n-1}} for 2 <= n <= 4 in order, got {} weights", what, a.w.size());
  return ws;
}

void register_matmul_group(Registry& r) {
  OpDef d{"matmul_group", "x [T, in], w_i [out_i, in] for i < n (2..4) -> y_i = x w_i^T [T, out_i]",
          {"x"}, {"w0", "w1", "w2", "w3"}, {}, {"y0", "y1", "y2", "y3"}, {}, /*live=*/false, /*parts=*/{"matmul"}};
  d.optional_outputs = true;
  r.add_op(matmul_group_with_cases(std::move(d)));
  r.add_variant(reference_variant("matmul_group", "the oracle: one reference matmul per weight, f32 on the host",
                                  [](VariantCtx& c, OpArgs& a) {
    const auto ws = matmul_group_weights(a, "matmul_group reference");
    for (size_t i = 0; i < ws.size(); ++i)
      a.set(fmt::format("y{}", i), Tensor::from(ref::matmul(a.in("x").f32(), c.weights->host(ws[i]).f32())));
  }));
  register_matmul_group_vulkan(r);
}

}  // namespace hl::gpu
