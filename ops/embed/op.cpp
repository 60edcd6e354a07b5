// embed: the rows of the token-embedding table for a list of token ids.
// The op's signature, its reference variant and its Vulkan variants (README.md lists them).
#include "ops/embed/reference.h"
#include "ops/registry.h"

namespace hl::gpu {

OpDef embed_with_cases(OpDef d);  // cases.cpp: its cases, tolerance and goldens
void register_embed_vulkan(Registry& r);  // vulkan.cpp

void register_embed(Registry& r) {
  r.add_op(embed_with_cases({"embed", "token ids [1, T] (i32) -> rows of table [V, H]: y [T, H]", {"tokens"}, {"table"}, {}, {"y"}, {}, /*live=*/true}));
  r.add_variant(reference_variant("embed", "the oracle (ops/embed/reference.h), f32 on the host", [](VariantCtx&, OpArgs& a) {
    const IMat& t = a.in("tokens").i32();
    a.set("y", Tensor::from(ref::embed<float>(a.weight("table"), std::vector<int32_t>(t.data(), t.data() + t.size()))));
  }));
  register_embed_vulkan(r);
}

}  // namespace hl::gpu
