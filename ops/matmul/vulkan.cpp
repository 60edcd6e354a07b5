// matmul and lm_head on Vulkan with f32 weights: vulkan:tiled (shared-memory tiles, for many tokens) and
// vulkan:rowdot (a workgroup per output row, for decode); and vulkan:auto, the family default, which picks the
// kernel for each call: rowdot or tiled for f32 weights, and for quantized weights the kernels that read their
// blocks (vulkan_quant.cpp).
#include "ops/matmul/qgemm_cm.h"
#include "ops/matmul/quant_rows.h"

namespace hl::gpu {

namespace {

struct Dims {
  uint32_t T, K, N;
};

Dims dims(const Tensor& x, const Tensor& w) {
  if (x.cols() != w.cols()) fail("matmul: input has {} columns but the weight expects {}", x.cols(), w.cols());
  return {u32(x.rows()), u32(x.cols()), u32(w.rows())};
}

void tiled(VariantCtx& c, OpArgs& a) {
  Device& d = c.device();
  const Tensor& x = a.in("x");
  const Tensor w = c.weights->device(a.weight("w"));
  const Dims pc = dims(x, w);
  Tensor y = Tensor::device(d, pc.T, pc.N);
  const uint32_t tile = d.tune("matmul.tiled.tile");
  const auto& p = d.pipeline("matmul_tiled", {{0, tile}}, 3, sizeof pc);
  d.dispatch(p, {x.buffer(d), w.buffer(d), y.buffer_mut(d)}, pc, (pc.N + tile - 1) / tile, (pc.T + tile - 1) / tile);
  a.set("y", y);
}

void rowdot(VariantCtx& c, OpArgs& a) {
  Device& d = c.device();
  const Tensor& x = a.in("x");
  const Tensor w = c.weights->device(a.weight("w"));
  const Dims pc = dims(x, w);
  Tensor y = Tensor::device(d, pc.T, pc.N);
  // Rows of whole vec4s are read as vec4s at a constant trip count (spec constant 2: K / 4); else a word at a time.
  const uint32_t kv = pc.K % 4 == 0 ? pc.K / 4 : 0;
  const auto& p = d.pipeline("matmul_rowdot", {{0, d.tune("matmul.rowdot.wg")},
                                               {1, d.tune("matmul.rowdot.cols")}, {2, kv}},
                             3, sizeof pc);
  const Grid g = grid(pc.N);
  d.dispatch(p, {x.buffer(d), w.buffer(d), y.buffer_mut(d)}, pc, g.x, g.y);
  a.set("y", y);
}

// The variant vulkan:auto of `op` runs for this call.
std::string pick(const std::string& op, VariantCtx& c, const OpArgs& a) {
  const int64_t T = a.in("x").rows();
  const Device& d = c.device();
  const WeightRef& w = a.weight("w");
  // Prompt chunks of few output rows (the linear attention's gates): any GEMM tile would be mostly padding.
  const bool narrow = w.rows <= int64_t(d.tune("matmul.auto.narrow_rows")) && vk_quant_decodes(w);
  if (w.quantized() && vk_quant_decodes(w)) {
    if (T > int64_t(d.tune("matmul.auto.qmatvec_tokens"))) {
      if (narrow) return "vulkan:qnarrow";
      // Prompt chunks: on cooperative matrices where the device has them (not their emulation, a test hook).
      const std::string cm = op + ".qgemm_coopmat.";
      const bool coopmat = d.tune("matmul.auto.coopmat") && d.tune(cm + "cm_emulate") == 0 && qgemm_unavailable(d, cm).empty();
      if (coopmat) return "vulkan:qgemm_coopmat";
      // Else 8-bit integer dot products on x rounded to 8 bits (i8 1; lavapipe 0, whose goldens expect exact f32), for
      // the block types they read.
      const quant::Type t = w.storage_type();
      const bool i8_type = t == quant::Type::Q4_K || t == quant::Type::Q5_K || t == quant::Type::Q6_K || t == quant::Type::Q8_0;
      if (d.tune("matmul.auto.i8") && i8_type && d.info().integer_dot_product) return "vulkan:qgemm_i8";
      // Else the same GEMM on scalar FMAs (qgemm: 1; lavapipe keeps the exact qcols, which the model's goldens expect).
      return d.tune("matmul.auto.qgemm") && qgemm_unavailable(d, op + ".qgemm.", true).empty() ? "vulkan:qgemm" : "vulkan:qcols";
    }
    // Decode: large q6_K weights in planar rows (exact f32 like the others, the 210-byte blocks read with aligned
    // loads); else qmatvec_direct where x fits its shared memory and the tunable asks, else qmatvec.
    const uint32_t planar_rows = d.tune("matmul.auto.decode_planar_rows");
    if (w.storage_type() == quant::Type::Q6_K && planar_rows && w.rows >= int64_t(planar_rows)) return "vulkan:qmatvec_planar";
    const bool direct = d.tune("matmul.auto.decode_direct") && uint64_t(w.cols) * 4 <= d.info().max_shared_memory;
    return direct ? "vulkan:qmatvec_direct" : "vulkan:qmatvec";
  }
  if (T <= int64_t(d.tune("matmul.auto.rowdot_tokens"))) return "vulkan:rowdot";
  if (narrow) return "vulkan:qnarrow";
  // Other f32 prompt chunks (the router): on cooperative matrices where the plan runs its other prompt GEMMs there
  // (f32_coopmat: x and the weight rounded to f16, as every coopmat GEMM does), else on qgemm's scalar kernel (exact f32
  // products), else tiled.
  if (w.cols % 64) return "vulkan:tiled";
  const std::string cm = op + ".qgemm_coopmat.";
  if (d.tune("matmul.auto.f32_coopmat") && d.tune("matmul.auto.coopmat") && d.tune(cm + "cm_emulate") == 0 &&
      qgemm_unavailable(d, cm).empty())
    return "vulkan:qgemm_coopmat";
  return d.tune("matmul.auto.f32_qgemm") && qgemm_unavailable(d, op + ".qgemm.", true).empty() ? "vulkan:qgemm" : "vulkan:tiled";
}

}  // namespace

void register_matmul_vulkan(Registry& r) {
  for (std::string op : {"matmul", "lm_head"}) {
    Variant t = vulkan_variant(op, "vulkan:tiled", "shared-memory tiles of TILE x TILE outputs", tiled);
    t.status = "baseline";
    t.tunables = {{"matmul.tiled.tile", 16}};  // TILE x TILE outputs per workgroup, TILE-wide K slices in shared memory
    r.add_variant(std::move(t));
    Variant rd = vulkan_variant(op, "vulkan:rowdot", "a workgroup per output row, weights read once per 8 tokens", rowdot);
    rd.status = "baseline";
    rd.tunables = {{"matmul.rowdot.cols", 8}};  // tokens per pass over a weight row
    r.add_variant(std::move(rd));
    Variant au = vulkan_variant(op, "vulkan:auto",
                                "picks per call: f32 weights: rowdot for up to 8 tokens, qgemm_coopmat (or qgemm, or tiled) above; quantized weights: qmatvec_planar "
                                "(large q6_K), qmatvec_direct (or qmatvec) for decode, qgemm_coopmat (or qgemm_i8 for q8_0 and K-quants, or qgemm, or qcols) for prompt chunks; "
                                "qnarrow for prompt chunks of at most 64 rows",
                                {}, true);
    au.delegate = [op](VariantCtx& c, const OpArgs& a) { return pick(op, c, a); };
    // f32: rowdot up to rowdot_tokens tokens. Quantized: a mat-vec up to qmatvec_tokens tokens (qcols above): q6_K
    // weights of at least decode_planar_rows rows on planar rows (0: never), else qmatvec_direct (decode_direct 1,
    // where x fits shared memory) or qmatvec.
    // Prompt chunks of quantized weights on cooperative matrices where the device has them (coopmat 1), else on
    // qgemm_i8 (i8 1: x rounded to 8 bits; q8_0 and K-quants), else qgemm (qgemm 1), else qcols. Prompt chunks of at
    // most narrow_rows output rows: qnarrow; f32 weights' others on qgemm_coopmat (f32_coopmat 1, where coopmat picks it), else qgemm (f32_qgemm 1), else tiled. lavapipe keeps the
    // kernels its model goldens were written with.
    au.tunables = {{"matmul.auto.rowdot_tokens", 8}, {"matmul.auto.qmatvec_tokens", 1},
                   {"matmul.auto.decode_planar_rows", 65536}, {"matmul.auto.decode_direct", 1},
                   {"matmul.auto.coopmat", 1}, {"matmul.auto.i8", 1, {{"lavapipe", 0}}}, {"matmul.auto.qgemm", 1, {{"lavapipe", 0}}},
                   {"matmul.auto.narrow_rows", 64, {{"lavapipe", 0}}}, {"matmul.auto.f32_qgemm", 1, {{"lavapipe", 0}}},
                   {"matmul.auto.f32_coopmat", 1}};
    au.precision_tolerance = kX16Tolerance;  // its decode pick, qmatvec_direct, takes x as 16-bit fixed point
    r.add_variant(std::move(au));
  }
}

}  // namespace hl::gpu
