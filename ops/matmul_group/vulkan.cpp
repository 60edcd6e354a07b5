// matmul_group on Vulkan: vulkan:qmatvec_direct, every weight a segment of one qmatvec_direct.comp dispatch (matmul's
// kernel, with tunables of its own), for decode; vulkan:per_weight, a dispatch per weight, to compare with. Weights
// f32 or ggml blocks of whole 32-value units.
#include "ops/matmul/quant_rows.h"
#include "ops/matmul_group/group.h"

namespace hl::gpu {

bool matmul_group_takes(const std::vector<WeightRef>& ws) {
  for (const WeightRef& w : ws)
    if (!vk_quant_decodes(w)) return false;
  return true;
}

void register_matmul_group_vulkan(Registry& r) {
  Variant v = vulkan_variant("matmul_group", "vulkan:qmatvec_direct",
                             "decode: the weights as segments of one qmatvec_direct dispatch (x staged once per "
                             "workgroup, each segment its own block type)",
                             [](VariantCtx& c, OpArgs& a) {
                               const std::string what = "matmul_group vulkan:qmatvec_direct";
                               const auto ys = qmatvec_direct_group(c, a.in("x"), matmul_group_weights(a, what), "matmul_group", what);
                               for (size_t i = 0; i < ys.size(); ++i) a.set(fmt::format("y{}", i), ys[i]);
                             },
                             /*family_default=*/true);
  v.status = "default";
  // As matmul's vulkan:qmatvec_direct: workgroup size, rows per subgroup pass, 32-value units per lane per step,
  // workgroups at most (0: a pass per subgroup), x read through the caches instead of staged, x as 16-bit fixed point
  // with integer dot products where every weight is a K-quant.
  v.tunables = {{"matmul_group.qmatvec_direct.wg", 256}, {"matmul_group.qmatvec_direct.rows", 2},
                {"matmul_group.qmatvec_direct.units", 1}, {"matmul_group.qmatvec_direct.groups", 0},
                {"matmul_group.qmatvec_direct.x_global", 0}, {"matmul_group.qmatvec_direct.x16", 1}};
  v.precision_tolerance = kX16Tolerance;
  r.add_variant(std::move(v));
  // What the unfused forward pass runs in decode: matmul's vulkan:auto once per weight (a dispatch each), to time the
  // group against.
  Variant each = vulkan_variant("matmul_group", "vulkan:per_weight", "matmul's vulkan:auto per weight, a dispatch each",
                                [](VariantCtx& c, OpArgs& a) {
                                  const auto ws = matmul_group_weights(a, "matmul_group vulkan:per_weight");
                                  const Registry& reg = Registry::get();
                                  for (size_t i = 0; i < ws.size(); ++i) {
                                    OpArgs m{{{"x", a.in("x")}}, {{"w", ws[i]}}, {}};
                                    reg.resolve(reg.variant("matmul", "vulkan:auto"), c, m).run(c, m);
                                    a.set(fmt::format("y{}", i), m.t.at("y"));
                                  }
                                });
  each.status = "baseline";
  each.precision_tolerance = kX16Tolerance;  // matmul's vulkan:auto: x as 16-bit fixed point in decode
  r.add_variant(std::move(each));
}

}  // namespace hl::gpu
