// The matmul experiment: the model's projection shapes for n = 1 (decode mat-vec) to 512 (prefill) columns
// (ops/matmul/cases.cpp), with f32 weights and with the GGUF's quantized weights read as blocks: vulkan:auto beside
// every kernel it picks from and the int8-x ones, each decode kernel's tunables swept. Small n is memory bound (the
// weight stream), large n compute bound.
#include "experiments/harness.h"

namespace hl::exp {

namespace {

std::vector<Part> parts(const Context& cx) {
  std::vector<Part> out;
  for (const std::string op : {"matmul", "lm_head"})
    for (Part& p : op_parts(op, cx)) {
      const bool f32 = p.group.ends_with(" f32"), decode = p.group.ends_with(" decode");
      if (f32) {  // the variants that take f32 weights (the quantized ones refuse them)
        for (auto* v : gpu::Registry::get().variants(op))
          if (!v->quantized_weights_only) p.variants.push_back(v->name);
      } else if (decode) {
        p.variants = {"reference", "vulkan:auto", "vulkan:qmatvec", "vulkan:qmatvec_direct", "vulkan:qmatvec_i8_staged", "vulkan:qcols"};
        if (p.group.find("q6_K") != std::string::npos)  // planar rows: q6_K only
          for (const char* v : {"vulkan:qmatvec_planar", "vulkan:qmatvec_planar_i8"}) p.variants.push_back(v);
      } else {
        p.variants = {"reference", "vulkan:auto", "vulkan:qcols", "vulkan:qgemm", "vulkan:qgemm_i8", "vulkan:qgemm_coopmat", "vulkan:qnarrow"};
      }
      // qgemm_coopmat: the tile grid comes from min_groups' narrowing (the 2 x 2 / 4 x 4 sweep at 71ccbc1 found
      // no shape where another grid beat the default by over 1%); swept: units per K step, how many subgroups to
      // aim for by splitting K (0: none beyond the workgroup target), and whether K is split before the tiles narrow.
      p.sweeps = {{op + ".qcols.max_cols", {1, 8, 16, 32, 40, 64}}, {op + ".qgemm_coopmat.k_units", {1, 2, 4}},
                  {op + ".qgemm_coopmat.min_subgroups", {0, 1024, 2048}}, {op + ".qgemm_coopmat.split_first", {0, 1}},
                  {op + ".qgemm_coopmat.prefetch", {0, 3, 7, 15}},
                  // qgemm (scalar): its grid of invocations (4 x 8 outputs each), units per step.
                  {op + ".qgemm.thread_rows", {16, 32}}, {op + ".qgemm.thread_cols", {8, 16}}, {op + ".qgemm.k_units", {1, 2}},
                  // qgemm_i8: its grid of invocations (4 x 8 outputs each), slots per step.
                  {op + ".qgemm_i8.thread_rows", {8, 16, 32}}, {op + ".qgemm_i8.thread_cols", {8, 16}}, {op + ".qgemm_i8.slots", {1, 2, 4}},
                  {op + ".qgemm_i8.prefetch", {0, 1}},
                  // qnarrow: tokens per workgroup (grid against the partial sums' share), its size (K split finer).
                  {op + ".qnarrow.tokens", {2, 4, 8}}, {op + ".qnarrow.wg", {256, 512, 1024}}, {op + ".qnarrow.rows", {32, 64}}};
      if (decode) {
        p.sweeps[op + ".qmatvec.rows"] = {2, 4, 8, 16};  // rows staged per workgroup (occupancy)
        p.sweeps[op + ".qmatvec.pass"] = {1, 2, 4};  // rows a subgroup decodes per load of x
        p.sweeps[op + ".qmatvec_direct.rows"] = {1, 2, 4, 8};  // rows per subgroup pass
        p.sweeps[op + ".qmatvec_direct.units"] = {1, 2, 4};    // units per lane per step
        p.sweeps[op + ".qmatvec_direct.x_global"] = {0, 1};    // x staged in shared memory or read through the caches
        p.sweeps[op + ".qmatvec_direct.wg"] = {64, 128, 256};  // workgroup size (occupancy, x staged per workgroup)
        p.sweeps[op + ".qmatvec_i8_staged.rows"] = {1, 2, 4};  // rows per tile
        p.sweeps[op + ".qmatvec_i8_staged.groups"] = {1056, 2112};  // grid
        p.sweeps[op + ".qmatvec_i8_staged.local"] = {0, 1};  // workers: workgroups or subgroups
        p.sweeps[op + ".qmatvec_i8_staged.wg"] = {128, 256};
        for (const char* v : {".qmatvec_planar.", ".qmatvec_planar_i8."}) {
          p.sweeps[op + v + "rows"] = {1, 2, 4};  // row groups per subgroup pass
          p.sweeps[op + v + "wg"] = {128, 256};
          p.sweeps[op + v + "groups"] = {0, 1056, 2112, 4224, 8448};  // grid (0: a pass per subgroup)
        }
      }
      out.push_back(std::move(p));
    }
  return out;
}

}  // namespace

Experiment matmul_experiment() {
  return {"matmul",
          "dense projections (2048->8192, ->4096, 4096->2048, 2048->512, 2048->32, the f32 router 2048->256, lm_head) for n = 1..512 columns, f32 and "
          "quantized (q4_K, q6_K qkv and lm_head) weights",
          parts, {}};
}

}  // namespace hl::exp
