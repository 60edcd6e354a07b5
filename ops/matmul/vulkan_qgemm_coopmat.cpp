// matmul and lm_head on cooperative matrices: vulkan:qgemm_coopmat, prompt chunks on the quantized GEMM of
// ops/shaders/qgemm_cm.glsl (weights decoded into shared f16 tiles inside the K loop, A rounded to f16, f32
// accumulation); and that GEMM's host side (qgemm_cm.h), which moe_experts' route_pack_coopmat shares.
#include "ops/matmul/qgemm_cm.h"

#include "ops/matmul/quant_rows.h"

namespace hl::gpu {

namespace {

bool emulated(const Device& d, const std::string& prefix) { return d.tune(prefix + "cm_emulate") != 0; }

// The routed kernels' subgroup rows (<prefix>sub_rows: 32, or 16 for the thin kernels); the dense kernel has no such tunable.
bool thin(const Device& d, const std::string& prefix, QgemmKernel k, bool scalar) {
  if ((k != QgemmKernel::Gate && k != QgemmKernel::Down) || scalar) return false;
  const uint32_t r = d.tune(prefix + "sub_rows");
  if (r != 16 && r != 32) fail("qgemm: {}sub_rows = {}, not 16 or 32", prefix, r);
  return r == 16;
}

// The kernel's outputs per cell of its grid (cooperative matrices: a subgroup's 16 MR x 16 MC; scalar: an
// invocation's TM x TN), whether it is gated, whether it runs on scalar FMAs and then whether its weight tiles are f16
// (QG_F16_WEIGHTS), its shader.
struct Shape {
  uint32_t mr, mc;
  bool gated, scalar, f16_weights;
  const char* shader;
};
// thin (routed kernels on cooperative matrices, <prefix>sub_rows 16): each subgroup 16 rows instead of 32, so a tile of
// the same rows takes twice the subgroups, each with half the accumulators and prefetch slots.
Shape shape(QgemmKernel k, bool scalar, bool thin = false) {
  if (scalar) switch (k) {
      case QgemmKernel::Dense: return {4, 8, false, true, false, "qgemm_sc"};
      case QgemmKernel::Gate:
      case QgemmKernel::Pair: return {4, 4, true, true, true, "qgemm_gate_sc"};
      default: return {4, 4, false, true, true, "qgemm_down_sc"};
    }
  switch (k) {
    case QgemmKernel::Dense: return {32, 64, false, false, true, "qgemm_cm"};
    case QgemmKernel::Pair: return {32, 32, true, false, true, "qgemm_gate_cm"};
    case QgemmKernel::Gate:
      return thin ? Shape{16, 32, true, false, true, "qgemm_gate16_cm"} : Shape{32, 32, true, false, true, "qgemm_gate_cm"};
    default:
      return thin ? Shape{16, 64, false, false, true, "qgemm_down16_cm"} : Shape{32, 64, false, false, true, "qgemm_down_cm"};
  }
}

// Staged A and weight rows, each the step's values and the padding (f16: 8 values; scalar f32 tiles: 4), the epilogue
// scratch (cooperative matrices), the row offsets. Scalar A is f32 with the weights' padding.
uint64_t shared_bytes(const QgemmTile& t, const Shape& s) {
  const uint64_t g = s.gated ? 2 : 1, values = 32 * t.units + (s.f16_weights ? 8 : 4);
  const uint64_t a = (s.scalar ? 4 : 2) * values, w = (s.f16_weights ? 2 : 4) * values;
  return a * t.rows + w * g * t.cols + (s.scalar ? 0 : 1024ull * t.sr * t.sc * g) + 4ull * t.rows;
}

// Invocations per workgroup: one per grid cell (scalar), or a subgroup of the device's largest size per cell.
uint32_t invocations(const Device& d, const Shape& s, uint32_t sr, uint32_t sc) {
  return sr * sc * (s.scalar ? 1 : d.info().max_subgroup_size);
}

// The tile's units per K step, fewer where K is not a multiple of that many (K is a multiple of 64: the callers check).
QgemmTile fit_units(QgemmTile t, uint32_t K) {
  while (t.units > 1 && K % (32 * t.units)) t.units /= 2;
  return t;
}

// lavapipe (Mesa 22.3) silently ends an invocation's loops after 65535 iterations: refuse what could reach that
// (emulated matrices: each product a loop over this invocation's accumulator elements).
void check_loops(const Device& d, const QgemmTile& t, const Shape& s, uint64_t K) {
  if (d.info().driver_id != VK_DRIVER_ID_MESA_LLVMPIPE) return;
  const uint64_t per = s.scalar ? 0 : 256 / std::max(1u, d.info().min_subgroup_size), g = s.gated ? 2 : 1;
  const uint64_t step = 32 * t.units;
  const uint64_t stage = (t.rows * step / 4 + t.wg - 1) / t.wg + g * ((t.cols * step / 32 + t.wg - 1) / t.wg);
  const uint64_t mma = s.scalar ? 0 : step / 16 * (s.mr / 16) * (s.mc / 16) * g * (1 + per);  // scalar: unrolled
  const uint64_t loops = 64 + K / step * (2 + stage + mma) + (s.mr / 16) * (s.mc / 16) * (4 + 2 * per);
  if (loops > 60000)
    fail("qgemm: K = {} would run ~{} loop iterations per invocation, past lavapipe's limit of 65535", K, loops);
}

// The class of a type's order of values within a unit (quant_blocks.glsl hlq_unit_runs).
int unit_order(uint32_t type) {
  const auto t = quant::Type(type);
  return t == quant::Type::Q4_K || t == quant::Type::Q5_K ? 1 : t == quant::Type::Q6_K ? 2 : 0;
}

struct Push {
  uint32_t E, K, N, k, ncol, rb0, rb1, T;
};

const vk::Pipeline& pipeline(Device& d, const std::string& prefix, const QgemmTile& t, const Shape& s, uint32_t mode,
                             uint32_t type0, uint32_t type1, uint32_t ks = 1, uint32_t pair = 0, uint32_t half_h = 0,
                             uint32_t cols = 0) {
  const uint32_t diag = d.profile().get(prefix + "diag", 0);
  if ((diag & 32) && shared_bytes(t, s) + 1024ull * (diag >> 16) + 16 > d.info().max_shared_memory)
    fail("qgemm: {}diag {} pads shared memory past the device's {} bytes", prefix, diag, d.info().max_shared_memory);
  return d.pipeline(std::string(s.shader) + (!s.scalar && emulated(d, prefix) ? "_emul" : ""),
                    {{0, t.wg}, {1, t.sr}, {2, t.sc}, {3, s.gated ? 1u : 0u}, {4, mode}, {5, type0}, {6, type1},
                     {7, diag}, {8, t.units}, {9, ks}, {10, d.tune(prefix + "prefetch")}, {11, pair}, {12, half_h},
                     {13, cols}}, 9,
                    sizeof(Push), !s.scalar && d.info().subgroup_size_control && d.info().compute_full_subgroups);
}

// COLS for a pass over w0 (and w1 where two): 1 where the weights are in chunk columns, both or neither, K-quants.
uint32_t columns_of(const QgemmWeight& w0, const QgemmWeight& w1, bool two, uint32_t K) {
  if ((two && w0.columns != w1.columns) ||
      (w0.columns && (unit_order(w0.type) == 0 || (two && unit_order(w1.type) == 0) || K % 256)))
    fail("qgemm: chunk columns take K-quant weights, both of a pass alike, K a multiple of 256");
  return w0.columns ? 1u : 0u;
}

}  // namespace

bool qgemm_same_unit_order(uint32_t type0, uint32_t type1) { return unit_order(type0) == unit_order(type1); }

QgemmWeight qgemm_weight(VariantCtx& c, const WeightRef& w, const std::string& what) {
  return {vk_quant_rows(c, w, what), uint32_t(w.storage_type()), u32(int64_t(quant::row_bytes(w.storage_type(), w.cols)))};
}

QgemmWeight qgemm_dense_weight(VariantCtx& c, const WeightRef& w, const std::string& prefix, const std::string& what) {
  const quant::Type ty = w.storage_type();
  const bool kq = ty == quant::Type::Q4_K || ty == quant::Type::Q5_K || ty == quant::Type::Q6_K;
  if (!kq || !c.device().tune(prefix + "columns")) return qgemm_weight(c, w, what);
  return {vk_quant_chunk_columns(c, w, w.rows, what), uint32_t(ty), u32(int64_t(quant::row_bytes(ty, w.cols))), true};
}

std::string qgemm_unavailable(const Device& d, const std::string& prefix, bool scalar) {
  if (scalar) return d.info().shader_float16 ? "" : "no shaderFloat16 (the weight tiles are f16)";
  return coopmat_unavailable(d, emulated(d, prefix));
}

QgemmTile qgemm_tile(const Device& d, const std::string& prefix, QgemmKernel k, bool scalar) {
  const Shape s = shape(k, scalar, thin(d, prefix, k, scalar));
  // The grid: subgroups (cooperative matrices) or invocations (scalar) per workgroup.
  const std::string r = prefix + (scalar ? "thread_rows" : "warp_rows"), c = prefix + (scalar ? "thread_cols" : "warp_cols");
  QgemmTile t{d.tune(r), d.tune(c), 0, 0, 0, d.tune(prefix + "k_units")};
  if (!t.sr || !t.sc) fail("qgemm: {} = {} and {} = {} must be at least 1", r, t.sr, c, t.sc);
  if (t.units != 1 && t.units != 2 && t.units != 4) fail("qgemm: {}k_units = {}, not 1, 2 or 4", prefix, t.units);
  const auto size = [&] { t.rows = s.mr * t.sr, t.cols = s.mc * t.sc; };
  size();
  // Fewer grid columns, then rows, where shared memory is short (lavapipe's 32 KB).
  while (shared_bytes(t, s) > d.info().max_shared_memory && (t.sc > 1 || t.sr > 1)) {
    (t.sc > 1 ? t.sc : t.sr) /= 2;
    size();
  }
  if (shared_bytes(t, s) > d.info().max_shared_memory)
    fail("qgemm: {} x {} tiles need {} bytes of shared memory, this device has {}", t.rows, t.cols, shared_bytes(t, s),
         d.info().max_shared_memory);
  t.wg = invocations(d, s, t.sr, t.sc);
  if (t.wg > d.info().max_workgroup_invocations)
    fail("qgemm: {} x {} tiles need {} invocations per workgroup, the device allows {}", t.rows, t.cols, t.wg,
         d.info().max_workgroup_invocations);
  return t;
}

namespace {

// A dense call's tile and K split: the tunables' tile, narrowed where it leaves the device short of workgroups
// (<prefix>min_groups; 0: never): columns, then rows, halved in turn down to 2 x 2 subgroups (scalar: 64 invocations);
// then K split where the call is still short of min_groups workgroups (few output columns: the linear-attention gates
// 2048->32 at T = 512), or of min_subgroups subgroups in all (narrowing keeps that count: a 4096->2048 projection at
// T = 512 is 512 subgroups at any tile shape): up to <prefix>split_k parts of at least 4 steps each.
// <prefix>split_first 1 asks the split first: the tile is narrowed only while even the largest split leaves the call
// short of min_groups workgroups or min_subgroups subgroups, so a projection whose K can be split keeps its full tiles
// (each weight unit decoded for more tokens) and gets its workgroups from K instead.
struct DensePlan {
  QgemmTile t;
  uint32_t ks;
};
DensePlan dense_plan(const Device& d, const std::string& prefix, const Shape& s, QgemmKernel k, bool scalar, uint32_t T,
                     uint32_t K, uint32_t N) {
  if (K % 64) fail("qgemm: {} input columns, not a multiple of 64", K);  // whole units (K-quants: the host's)
  QgemmTile t = fit_units(qgemm_tile(d, prefix, k, scalar), K);
  const auto groups = [&] { return uint64_t((T + t.rows - 1) / t.rows) * ((N + t.cols - 1) / t.cols); };
  const uint64_t min_groups = d.tune(prefix + "min_groups"), min_subgroups = d.tune(prefix + "min_subgroups");
  const uint64_t steps = K / (32 * t.units);  // narrowing keeps the units per step
  const uint64_t cap = std::max<uint64_t>(1, std::min<uint64_t>(d.tune(prefix + "split_k"), steps / 4));
  const auto sub = [&] { return std::max<uint64_t>(1, t.wg / d.info().max_subgroup_size); };
  const auto narrower = [&] { return scalar ? t.sr * t.sc > 64 : t.sc > 2 || t.sr > 2; };
  const auto short_of_work = [&] {
    if (!d.tune(prefix + "split_first")) return groups() < min_groups;
    return groups() * cap < min_groups || groups() * sub() * cap < min_subgroups;
  };
  for (bool cols = true; short_of_work() && narrower(); cols = !cols) {
    if (cols ? t.sc > 2 : t.sr <= 2) t.sc /= 2;
    else t.sr /= 2;
    t.rows = s.mr * t.sr, t.cols = s.mc * t.sc, t.wg = invocations(d, s, t.sr, t.sc);
  }
  check_loops(d, t, s, K);
  const uint64_t need = std::max<uint64_t>({1, (min_groups + groups() - 1) / groups(),
                                            (min_subgroups + groups() * sub() - 1) / (groups() * sub())});
  return {t, u32(std::min(need, cap))};
}

}  // namespace

Tensor qgemm_dense(Device& d, const std::string& prefix, const Tensor& x, const QgemmWeight& w, uint32_t N, bool scalar) {
  const Shape s = shape(QgemmKernel::Dense, scalar);
  const uint32_t T = u32(x.rows()), K = u32(x.cols());
  const auto [t, ks] = dense_plan(d, prefix, s, QgemmKernel::Dense, scalar, T, K, N);
  const Push pc{1, K, N, 1, (N + t.cols - 1) / t.cols, w.row_bytes, w.row_bytes, T};
  Tensor y = Tensor::device(d, T, N);
  const Grid g = grid(uint64_t((T + t.rows - 1) / t.rows) * pc.ncol * ks);
  const BufferPtr xb = x.buffer(d), wb = w.t.buffer(d);
  const auto& gemm = pipeline(d, prefix, t, s, 0, w.type, w.type, ks, 0, 0, columns_of(w, w, false, K));
  if (ks == 1) {
    d.dispatch(gemm, {xb, xb, xb, xb, wb, wb, y.buffer_mut(d), wb, wb}, pc, g.x, g.y);
  } else {
    Tensor part = Tensor::device(d, int64_t(ks) * T, N);
    d.dispatch(gemm, {xb, xb, xb, xb, wb, wb, part.buffer_mut(d), wb, wb}, pc, g.x, g.y);
    const uint32_t n = T * N, wg = 256, per = 4;
    const Grid gs = grid((uint64_t(n) + wg * per - 1) / (wg * per));
    d.dispatch(d.pipeline("matmul_ksum", {{0, wg}, {1, ks}, {2, per}}, 2, sizeof n), {part.buffer(d), y.buffer_mut(d)}, n,
               gs.x, gs.y);
  }
  return y;
}

QgemmPair qgemm_dense_pair(Device& d, const std::string& prefix, const Tensor& x, const QgemmWeight& w0,
                           const QgemmWeight& w1, uint32_t N, bool scalar) {
  if (!qgemm_same_unit_order(w0.type, w1.type))
    fail("qgemm: {} and {} order the values of a unit differently; one pass needs one order",
         quant::type_name(quant::Type(w0.type)), quant::type_name(quant::Type(w1.type)));
  const Shape s = shape(QgemmKernel::Pair, scalar);
  const uint32_t T = u32(x.rows()), K = u32(x.cols());
  const auto [t, ks] = dense_plan(d, prefix, s, QgemmKernel::Pair, scalar, T, K, N);
  const Push pc{1, K, N, 1, (N + t.cols - 1) / t.cols, w0.row_bytes, w1.row_bytes, T};
  QgemmPair out{Tensor::device(d, 2 * int64_t(ks) * T, N), ks};
  const Grid g = grid(uint64_t((T + t.rows - 1) / t.rows) * pc.ncol * ks);
  const BufferPtr xb = x.buffer(d), b0 = w0.t.buffer(d), b1 = w1.t.buffer(d);
  d.dispatch(pipeline(d, prefix, t, s, 0, w0.type, w1.type, ks, 1, 0, columns_of(w0, w1, true, K)),
             {xb, xb, xb, xb, b0, b1, out.part.buffer_mut(d), b0, b1}, pc, g.x, g.y);
  return out;
}

void qgemm_routed(Device& d, const std::string& prefix, const route_pack::Packed& p, bool gated, const Tensor& a,
                  const QgemmWeight& w0, const QgemmWeight& w1, Tensor& out, uint32_t K, uint32_t N, bool scalar,
                  bool half_h, uint32_t split_k) {
  const QgemmKernel k = gated ? QgemmKernel::Gate : QgemmKernel::Down;
  if (half_h && (scalar || N % 2 || K % 2)) fail("qgemm: h in f16 needs the matrix kernels and even widths");
  const Shape s = shape(k, scalar, thin(d, prefix, k, scalar));
  if (K % 64) fail("qgemm: a reduction of {} values, not a multiple of 64", K);
  const QgemmTile t = fit_units(qgemm_tile(d, prefix, k, scalar), K);
  if (uint64_t(p.tile_rows) != t.rows)
    fail("qgemm: routes packed in tiles of {} rows, the kernel's tiles have {}", p.tile_rows, t.rows);
  if (gated && !qgemm_same_unit_order(w0.type, w1.type))
    fail("qgemm: gate ({}) and up ({}) order the values of a unit differently; one pass needs one order",
         quant::type_name(quant::Type(w0.type)), quant::type_name(quant::Type(w1.type)));
  const uint32_t cols = columns_of(w0, w1, gated, K);
  check_loops(d, t, s, K);
  // K parts of gate/up: whole steps, at least 2 each.
  const uint32_t steps = K / (32 * t.units), ks = gated ? std::max(1u, std::min(split_k, steps / 2)) : 1u;
  const uint64_t rows = p.rows.cols();
  const Push pc{u32(p.E), K, N, u32(p.k), (N + t.cols - 1) / t.cols, w0.row_bytes, w1.row_bytes, u32(int64_t(rows))};
  // Row tiles: sum over experts of ceil(rows_e / BR) <= ceil(rows / BR) + (experts with rows).
  const uint64_t tiles = (rows + t.rows - 1) / t.rows + std::min<uint64_t>(p.E, rows);
  const Grid g = grid(tiles * pc.ncol * ks);
  const BufferPtr b0 = w0.t.buffer(d), b1 = w1.t.buffer(d);
  const auto bind = [&](const BufferPtr& res) {
    return std::vector<BufferPtr>{a.buffer(d), p.rows.buffer(d), p.offsets.buffer(d), p.tiles.buffer(d), b0, b1, res, b0, b1};
  };
  if (ks == 1) {
    d.dispatch(pipeline(d, prefix, t, s, 1, w0.type, w1.type, 1, 0, half_h ? 1u : 0u, cols), bind(out.buffer_mut(d)), pc,
               g.x, g.y);
    return;
  }
  Tensor part = Tensor::device(d, 2 * int64_t(ks) * int64_t(rows), N);
  d.dispatch(pipeline(d, prefix, t, s, 1, w0.type, w1.type, ks, 1, 0, cols), bind(part.buffer_mut(d)), pc, g.x, g.y);
  const uint32_t n = u32(int64_t(rows) * N);
  const Grid gs = grid((uint64_t(n) / (half_h ? 2 : 1) + 255) / 256);
  d.dispatch(d.pipeline("route_swiglu", {{0, 256}, {1, half_h ? 1u : 0u}, {2, ks}}, 2, sizeof n), {part.buffer(d), out.buffer_mut(d)},
             n, gs.x, gs.y);
}

void register_matmul_vulkan_qgemm_coopmat(Registry& r) {
  for (std::string op : {"matmul", "lm_head"}) {
    const std::string prefix = op + ".qgemm_coopmat.";
    Variant v = vulkan_variant(
        op, "vulkan:qgemm_coopmat",
        "prompt chunks on cooperative matrices: weight units decoded from ggml blocks (or f32/f16 rows) into shared f16 (q4_K in "
        "packed f16 arithmetic), A rounded to f16, f32 accumulation; each subgroup 32 x 64 outputs",
        [op, prefix](VariantCtx& c, OpArgs& a) {
          Device& d = c.device();
          if (auto why = qgemm_unavailable(d, prefix); !why.empty())
            fail("{} vulkan:qgemm_coopmat cannot run on {}: {}", op, d.info().name, why);
          const WeightRef& w = a.weight("w");
          const Tensor& x = a.in("x");
          if (x.cols() != w.cols) fail("{}: input has {} columns but the weight expects {}", op, x.cols(), w.cols);
          a.set("y", qgemm_dense(d, prefix, x, qgemm_dense_weight(c, w, prefix, op + " vulkan:qgemm_coopmat"), u32(w.rows)));
        },
        false, false, [prefix](const Device& d) { return qgemm_unavailable(d, prefix); });
    // Shapes it does not take (rows of a partial 32-value unit): the scalar kernels, through vulkan:auto.
    v.delegate = [](VariantCtx&, const OpArgs& a) -> std::string {
      const WeightRef& w = a.weight("w");
      return w.cols % 64 == 0 ? "" : w.quantized() ? "vulkan:qcols" : "vulkan:tiled";
    };
    v.status = "experimental";
    v.cooperative_matrices = true;
    v.precision_tolerance = kQgemmTolerance;
    v.weight_types = {quant::Type::F32, quant::Type::F16, quant::Type::Q8_0, quant::Type::Q4_K, quant::Type::Q5_K,
                      quant::Type::Q6_K};
    // The grid of subgroups, each 32 x 64 outputs: 2 x 2 makes 64 x 128 tiles (31 KB of shared memory). More token rows
    // per tile decode each weight unit for more tokens, which pays where the decode bounds the kernel; Hopper takes 4
    // (128 x 128 tiles, 45 KB). The matmul experiment sweeps both.
    // k_units: 32-value units of K per step (1, 2, 4; fewer where K needs). min_groups: narrower tiles below that many
    // workgroups, then K split in up to split_k parts (1: never) below min_groups workgroups or min_subgroups
    // subgroups; split_first: the split asked before narrowing (dense_plan). prefetch: the next step's A (bit 0), Q4_K
    // weight units (bit 1) and other K-quant units' raw words (bit 2) held in registers across this step's products
    // (latency hidden, residency spent). Hopper: 128 x 256 tiles of one unit per step, K split first towards 128
    // workgroups and 2048 subgroups, narrowed only where the split cannot reach them (ops/matmul/README.md).
    // columns: K-quant weights read from a copy in chunk columns (neighbouring rows' units in neighbouring bytes): the
    // projections on Hopper (a second copy of each, resident beside the rows that decode reads); lm_head's prompt rows
    // are one per chunk, which never reach this GEMM in the forward pass.
    const std::map<std::string, uint32_t> cols = op == "matmul" ? std::map<std::string, uint32_t>{{"nvidia-hopper", 1}}
                                                                 : std::map<std::string, uint32_t>{};
    v.tunables = {{prefix + "warp_rows", 2, {{"nvidia-hopper", 4}}}, {prefix + "warp_cols", 2, {{"nvidia-hopper", 4}}},
                  {prefix + "k_units", 2, {{"nvidia-hopper", 1}}}, {prefix + "min_groups", 0, {{"nvidia-hopper", 128}}},
                  {prefix + "min_subgroups", 0, {{"nvidia-hopper", 2048}}}, {prefix + "split_first", 0, {{"nvidia-hopper", 1}}},
                  {prefix + "split_k", 8}, {prefix + "prefetch", 7},
                  {prefix + "columns", 0, cols}, {prefix + "cm_emulate", 0}};
    const auto delegate = v.delegate;
    const auto weight_types = v.weight_types;
    r.add_variant(std::move(v));

    const std::string sp = op + ".qgemm.";
    Variant sc = vulkan_variant(
        op, "vulkan:qgemm",
        "prompt chunks on scalar FMAs: vulkan:qgemm_coopmat's kernel (weight units decoded into shared tiles inside the K "
        "loop) with the tiles in f32 and each invocation 4 x 8 outputs, for devices without cooperative matrices",
        [op, sp](VariantCtx& c, OpArgs& a) {
          Device& d = c.device();
          if (auto why = qgemm_unavailable(d, sp, true); !why.empty())
            fail("{} vulkan:qgemm cannot run on {}: {}", op, d.info().name, why);
          const WeightRef& w = a.weight("w");
          const Tensor& x = a.in("x");
          if (x.cols() != w.cols) fail("{}: input has {} columns but the weight expects {}", op, x.cols(), w.cols);
          a.set("y", qgemm_dense(d, sp, x, qgemm_weight(c, w, op + " vulkan:qgemm"), u32(w.rows), true));
        },
        false, false, [sp](const Device& d) { return qgemm_unavailable(d, sp, true); });
    sc.delegate = delegate;
    sc.status = "experimental";
    sc.precision_tolerance = kQgemmTolerance;  // K-quant weights decoded through f16 (A stays f32): within the coopmat bound
    sc.weight_types = weight_types;
    // The grid of invocations, each 4 x 8 outputs: 32 x 16 makes 128 x 128 tiles of 512 invocations (37 KB of shared
    // memory at one unit per step); the other tunables as qgemm_coopmat's, min_subgroups counting the device's
    // subgroups of invocations.
    sc.tunables = {{sp + "thread_rows", 32}, {sp + "thread_cols", 16}, {sp + "k_units", 1},
                   {sp + "min_groups", 0, {{"nvidia-hopper", 128}}}, {sp + "min_subgroups", 0, {{"nvidia-hopper", 1024}}},
                   {sp + "split_first", 0}, {sp + "split_k", 8}, {sp + "prefetch", 3}};
    r.add_variant(std::move(sc));
  }
}

}  // namespace hl::gpu
