// matmul and lm_head: y = x w^T, the projections (matmul) and the vocabulary-sized output (lm_head).
// The op's signature, its reference variant and its Vulkan variants (README.md lists them).
#include "ops/matmul/reference.h"
#include "ops/registry.h"

namespace hl::gpu {

OpDef matmul_with_cases(OpDef d);  // cases.cpp: its cases, tolerance and goldens
OpDef lm_head_with_cases(OpDef d);  // cases.cpp: its cases, tolerance and goldens
void register_matmul_vulkan(Registry& r);  // vulkan.cpp
void register_matmul_vulkan_quant(Registry& r);  // vulkan_quant.cpp
void register_matmul_vulkan_qgemm_coopmat(Registry& r);  // vulkan_qgemm_coopmat.cpp
void register_matmul_vulkan_qgemm_i8(Registry& r);  // vulkan_qgemm_i8.cpp

void register_matmul(Registry& r) {
  r.add_op(matmul_with_cases({"matmul", "x [T, in], w [out, in] -> y = x w^T [T, out]", {"x"}, {"w"}, {}, {"y"}, {}}));
  r.add_op(lm_head_with_cases({"lm_head", "x [T, H], w [V, H] -> logits [T, V] (a matmul with a vocabulary-sized output)", {"x"}, {"w"}, {}, {"y"}, {}}));
  for (const char* op : {"matmul", "lm_head"})
    r.add_variant(reference_variant(op, "the oracle (ops/matmul/reference.h), f32 on the host", [](VariantCtx& c, OpArgs& a) {
      a.set("y", Tensor::from(ref::matmul(a.in("x").f32(), c.weights->host(a.weight("w")).f32())));
    }));
  register_matmul_vulkan(r);
  register_matmul_vulkan_quant(r);
  register_matmul_vulkan_qgemm_coopmat(r);
  register_matmul_vulkan_qgemm_i8(r);
}

}  // namespace hl::gpu
