// matmul and lm_head on Vulkan with quantized weights (GGUF: Q4_K, Q5_K, Q6_K, Q8_0, F16), reading the ggml
// blocks directly (ops/shaders/quant_blocks.glsl): qmatvec (decode: rows staged through shared memory, x in
// registers), qmatvec_direct (decode: x in shared memory, weights loaded straight into registers several rows at a
// time), qmatvec_i8_staged (decode: x rounded to 8 bits, integer dot products over a staged weight stream),
// qmatvec_planar(_i8) (q6_K decode on planar rows), qcols (prompt chunks: dequantized tiles reused for up to
// max_cols tokens) and qnarrow (prompt chunks of few output rows). vulkan:auto (vulkan.cpp) picks among them.
#include <bit>

#include "ops/matmul/quant_rows.h"

namespace hl::gpu {

// Declared in quant_rows.h.
bool vk_quant_decodes(const WeightRef& w) {
  switch (w.storage_type()) {
    case quant::Type::F32: case quant::Type::F16: case quant::Type::Q8_0:
    case quant::Type::Q4_K: case quant::Type::Q5_K: case quant::Type::Q6_K: return w.cols % 32 == 0;
    default: return false;
  }
}

// The raw rows of `w` on the device (WeightStore::device_raw), checked for the kernels: a decodable type,
// whole 32-value units per row, byte offsets within 32 bits, bindable as one storage buffer.
Tensor vk_quant_rows(VariantCtx& c, const WeightRef& w, const std::string& what) {
  if (!vk_quant_decodes(w))
    fail("{}: weight '{}' is {} [{}, {}]; the quantized kernels read f32, f16, q8_0, q4_K, q5_K or q6_K rows of a "
         "multiple of 32 values", what, w.name(), quant::type_name(w.storage_type()), w.rows, w.cols);
  Device& d = c.device();
  Tensor raw = c.weights->device_raw(w);
  if (raw.bytes() > d.info().max_storage_buffer_range || raw.bytes() > UINT32_MAX)
    fail("{}: weight '{}' holds {} MiB of blocks, beyond this device's storage-buffer range of {} MiB (or 4 GiB)", what,
         w.name(), raw.bytes() >> 20, d.info().max_storage_buffer_range >> 20);
  return raw;
}

// Declared in quant_rows.h.
Tensor vk_quant_chunk_columns(VariantCtx& c, const WeightRef& w, int64_t group, const std::string& what) {
  const quant::Type t = w.storage_type();
  if (t != quant::Type::Q4_K && t != quant::Type::Q5_K && t != quant::Type::Q6_K)
    fail("{}: weight '{}' is {}; chunk columns take q4_K, q5_K or q6_K blocks", what, w.name(), quant::type_name(t));
  if (group < 1 || w.rows % group)
    fail("{}: weight '{}' has {} rows, not whole groups of {}", what, w.name(), w.rows, group);
  Device& d = c.device();
  Tensor cols = c.weights->device_chunk_columns(w, group);
  if (cols.bytes() > d.info().max_storage_buffer_range || cols.bytes() > UINT32_MAX)
    fail("{}: weight '{}' holds {} MiB in chunk columns, beyond this device's storage-buffer range of {} MiB (or 4 GiB)",
         what, w.name(), cols.bytes() >> 20, d.info().max_storage_buffer_range >> 20);
  return cols;
}

// Declared in quant_rows.h.
const double kX16Tolerance = 2e-4;

// Declared in quant_rows.h.
uint32_t qmatvec_pass_rows(uint32_t rows, uint32_t min_passes, int64_t n) {
  uint32_t r = std::max<uint32_t>(rows, 1);
  while (r > 1 && (n + r - 1) / r < int64_t(min_passes)) --r;
  return r;
}

// Declared in quant_rows.h.
bool head_scale_fits(const WeightRef& w, int64_t dv) {
  const quant::Type t = w.storage_type();
  const int64_t span = t == quant::Type::Q6_K ? 128 : t == quant::Type::Q4_K || t == quant::Type::Q5_K ? 64 : 32;
  return vk_quant_decodes(w) && dv > 0 && dv % span == 0 && w.cols % dv == 0;
}

// x staged in shared memory, each subgroup R rows per pass with every unit's words loaded straight into
// registers, no barrier after the staging (qmatvec_direct.comp). Also reads f32 rows of whole 32-value units.
// Declared in quant_rows.h.
std::vector<Tensor> qmatvec_direct_group(VariantCtx& c, const Tensor& x, const std::vector<WeightRef>& ws,
                                         const std::string& tune_op, const std::string& what, HeadAddNorm* head,
                                         const HeadRmsScale* rms) {
  Device& d = c.device();
  const std::string tn = tune_op + ".qmatvec_direct.";
  if (ws.empty() || ws.size() > 4) fail("{}: {} weights; one dispatch takes 1 to 4", what, ws.size());
  const uint64_t smem = d.info().max_shared_memory;
  if (head && rms) fail("{}: one norm in front of the mat-vec, not two", what);
  const uint32_t x_global = !head && !rms && d.tune(tn + "x_global") ? 1u : 0u;  // a folded norm stages its row
  const uint32_t K = u32(x.cols());
  if (!x_global && uint64_t(K) * 4 > smem)
    fail("{}: x of {} values does not fit {} bytes of shared memory; use vulkan:qmatvec or x_global", what, K, smem);
  if (K % 4) fail("{}: {} input columns, not a multiple of 4", what, K);
  int64_t n_rows = 0;
  for (const WeightRef& w : ws) n_rows += w.rows;
  // min_passes: declared by matmul's and lm_head's variant only (the groups' rows are tuned in the decode stream).
  const uint32_t wg = d.tune(tn + "wg"), groups = d.tune(tn + "groups");
  const uint32_t rows = qmatvec_pass_rows(d.tune(tn + "rows"), d.profile().get(tn + "min_passes", 0), n_rows);
  // units 0: a row's units in one step of the subgroup (at most 4 per lane), so its loads issue together.
  uint32_t upl = d.tune(tn + "units");
  if (upl == 0) upl = std::clamp<uint32_t>((K / 32 + d.info().subgroup_size - 1) / d.info().subgroup_size, 1, 4);
  if (wg == 0 || rows == 0) fail("{}: tunables wg and rows must be at least 1", what);
  struct {
    uint32_t T, K, end, pad0;
    uint32_t N[4], row_bytes[4], first[4];
    float eps;
    uint32_t dv, parts;
  } pc{u32(x.rows()), K, 0, 0, {}, {}, {}, head ? head->eps : rms ? rms->eps : 0.0f, rms ? rms->dv : 0u, rms ? rms->parts : 0u};
  uint32_t type[4] = {};
  std::vector<Tensor> ys;
  std::vector<BufferPtr> bind{x.buffer(d)};
  for (size_t s = 0; s < 4; ++s) {
    if (s < ws.size()) {
      const WeightRef& w = ws[s];
      if (w.cols != x.cols()) fail("{}: input has {} columns but weight '{}' expects {}", what, x.cols(), w.name(), w.cols);
      const Tensor raw = vk_quant_rows(c, w, what);
      type[s] = uint32_t(w.storage_type());
      pc.N[s] = u32(w.rows);
      pc.row_bytes[s] = u32(int64_t(quant::row_bytes(w.storage_type(), w.cols)));
      pc.first[s] = pc.end;
      pc.end += (pc.N[s] + rows - 1) / rows * rows;  // whole passes: a pass never straddles two segments
      ys.push_back(Tensor::device(d, x.rows(), w.rows));
      bind.insert(bind.end(), {raw.buffer(d), raw.buffer(d), ys.back().buffer_mut(d)});
    } else {
      pc.first[s] = pc.end;
      bind.insert(bind.end(), {bind[1], bind[2], bind[3]});
    }
  }
  // x16: x as 16-bit fixed point and integer dot products (qmatvec_direct{,_norm}_x16.comp) where every weight is a
  // K-quant and the device has integer dot products.
  bool x16 = d.tune(tn + "x16") && d.info().integer_dot_product;
  for (size_t s = 0; s < ws.size(); ++s) x16 = x16 && type[s] >= uint32_t(quant::Type::Q4_K) && type[s] <= uint32_t(quant::Type::Q6_K);
  if (head) {
    if (head->a.rows() != x.rows() || head->a.cols() != x.cols() || head->gain.numel() != x.cols())
      fail("{}: addend [{}, {}] and gain [{}] do not fit the residual [{}, {}]", what, head->a.rows(), head->a.cols(),
           head->gain.numel(), x.rows(), x.cols());
    head->s = Tensor::device(d, x.rows(), x.cols());
    bind.insert(bind.end(), {head->a.buffer(d), head->gain.buffer(d), head->s.buffer_mut(d)});
  }
  if (rms) {
    if (rms->dv == 0 || K % rms->dv || rms->parts == 0 || rms->sumsq.rows() != x.rows() ||
        rms->sumsq.cols() != int64_t(K / rms->dv) * rms->parts)
      fail("{}: sums of squares [{}, {}] do not fit x [{}, {}] in heads of {} with {} parts each", what, rms->sumsq.rows(),
           rms->sumsq.cols(), x.rows(), x.cols(), rms->dv, rms->parts);
    for (const WeightRef& w : ws)
      if (!head_scale_fits(w, rms->dv))
        fail("{}: weight '{}' ({} [{}, {}]) has units that straddle heads of {} columns", what, w.name(),
             quant::type_name(w.storage_type()), w.rows, w.cols, rms->dv);
    bind.push_back(rms->sumsq.buffer(d));
  }
  const auto& p = d.pipeline(std::string(head ? "qmatvec_direct_norm" : rms ? "qmatvec_direct_rms" : "qmatvec_direct") +
                                 (x16 ? "_x16" : ""),
                             {{0, wg}, {1, type[0]}, {2, rows}, {3, upl}, {4, K / 4}, {5, x_global},
                              {6, d.info().min_subgroup_size}, {7, u32(int64_t(ws.size()))}, {8, type[1]}, {9, type[2]},
                              {10, type[3]}, {11, d.profile().get(tn + "diag", 0)}},
                             uint32_t(bind.size()), sizeof pc);
  // A pass per subgroup at the reported subgroup size (the kernel walks passes grid-stride), at most `groups`
  // workgroups when that is set (then each stages x once for more rows).
  const uint32_t per_group = rows * std::max(1u, wg / d.info().subgroup_size);
  uint32_t n = (pc.end + per_group - 1) / per_group;
  if (groups) n = std::min(n, groups);
  const Grid g = grid(n);
  d.dispatch(p, bind, pc, g.x, g.y);
  return ys;
}

namespace {

struct Operands {
  const Tensor& x;
  Tensor w;  // raw rows
  uint32_t type, T, K, N, row_bytes;
};

// f32_ok: the variant also reads f32 rows (as raw words); x: the input rows (default: input "x").
Operands operands(VariantCtx& c, OpArgs& a, const std::string& what, bool f32_ok = false, const Tensor* xin = nullptr) {
  const WeightRef& w = a.weight("w");
  if (!w.quantized() && !f32_ok)
    fail("{}: weight '{}' is f32; this variant reads quantized (GGUF block) weights, use vulkan:auto", what, w.name());
  const Tensor& x = xin ? *xin : a.in("x");
  if (x.cols() != w.cols) fail("{}: input has {} columns but the weight expects {}", what, x.cols(), w.cols);
  return {x, vk_quant_rows(c, w, what), uint32_t(w.storage_type()), u32(x.rows()), u32(w.cols), u32(w.rows),
          u32(int64_t(quant::row_bytes(w.storage_type(), w.cols)))};
}

void qmatvec(VariantCtx& c, OpArgs& a, const std::string& op) {
  Device& d = c.device();
  const Operands o = operands(c, a, op + " vulkan:qmatvec");
  // Staged rows: as many as the tunable asks and shared memory holds (16-byte units, plus one for the skew).
  const uint64_t smem = d.info().max_shared_memory;
  if (o.row_bytes + 32ull > smem)
    fail("{} vulkan:qmatvec: a row of {} bytes does not fit {} bytes of shared memory", op, o.row_bytes, smem);
  const uint32_t rows = uint32_t(std::clamp<uint64_t>(d.tune(op + ".qmatvec.rows"), 1, (smem - 32) / o.row_bytes));
  const uint32_t stage = (rows * o.row_bytes + 15) / 16 + 1;
  struct {
    uint32_t T, K, N, row_bytes;
  } pc{o.T, o.K, o.N, o.row_bytes};
  Tensor y = Tensor::device(d, o.T, o.N);
  const auto& p = d.pipeline("qmatvec", {{0, d.tune(op + ".qmatvec.wg")}, {1, o.type}, {2, rows},
                                         {3, d.tune(op + ".qmatvec.pass")}, {4, stage}}, 3, sizeof pc);
  const Grid g = grid((uint64_t(o.N) + rows - 1) / rows);
  d.dispatch(p, {o.x.buffer(d), o.w.buffer(d), y.buffer_mut(d)}, pc, g.x, g.y);
  a.set("y", y);
}

void qmatvec_direct(VariantCtx& c, OpArgs& a, const std::string& op) {
  a.set("y", qmatvec_direct_group(c, a.in("x"), {a.weight("w")}, op, op + " vulkan:qmatvec_direct").at(0));
}

}  // namespace

// Declared in quant_rows.h.
X8 quantize_x8(Device& d, const Tensor& x) {
  const uint32_t blocks = u32(x.rows() * x.cols() / 32);
  X8 r{Tensor::device(d, x.rows(), x.cols() / 4), Tensor::device(d, x.rows(), x.cols() / 32),
       Tensor::device(d, x.rows(), x.cols() / 16)};
  const auto& p = d.pipeline("quantize_x8", {{0, 256}}, 4, sizeof blocks);
  const Grid g = grid((uint64_t(blocks) * 8 + 255) / 256);  // eight invocations per block
  d.dispatch(p, {x.buffer(d), r.q.buffer_mut(d), r.d.buffer_mut(d), r.s.buffer_mut(d)}, blocks, g.x, g.y);
  return r;
}

namespace {

// The block types the integer dot-product kernels decode.
void require_i8_type(OpArgs& a, const Operands& o, const std::string& what) {
  const auto t = quant::Type(o.type);
  if (t != quant::Type::Q4_K && t != quant::Type::Q5_K && t != quant::Type::Q6_K && t != quant::Type::Q8_0)
    fail("{}: weight '{}' is {}; this variant reads q8_0, q4_K, q5_K or q6_K blocks", what, a.weight("w").name(),
         quant::type_name(t));
}

// Slots of 64 values (K-quants: a quarter block) or one 32-value Q8_0 block per row.
uint32_t i8_slots(const Operands& o) { return quant::Type(o.type) == quant::Type::Q8_0 ? o.K / 32 : o.K / 64; }

// The same products with the weight stream staged: tiles of rows loaded as aligned 16-byte units a tile
// ahead, decoded from shared memory, x kept in registers (qmatvec_i8_staged.comp).
void qmatvec_i8_staged(VariantCtx& c, OpArgs& a, const std::string& op) {
  Device& d = c.device();
  const std::string what = op + " vulkan:qmatvec_i8_staged";
  const Operands o = operands(c, a, what);
  require_i8_type(a, o, what);
  const std::string tn = op + ".qmatvec_i8_staged.";
  const uint32_t slots = i8_slots(o), wg = d.tune(tn + "wg"), groups = d.tune(tn + "groups");
  const uint32_t local = d.tune(tn + "local") ? 1 : 0, depth = std::clamp(d.tune(tn + "depth"), 1u, 3u);
  if (groups == 0) fail("{}: tunable groups must be at least 1", what);
  // Workers: the workgroup, or (local) each subgroup with its own tile region, for any subgroup size the
  // device may run (down to min_subgroup_size). Rows per tile: as many as the tunable asks and shared memory
  // holds (16-byte units, plus one for the skew).
  const uint32_t min_sg = std::max(1u, d.info().min_subgroup_size);
  const uint32_t regions = local ? (wg + min_sg - 1) / min_sg : 1, loaders = local ? min_sg : wg;
  const uint64_t smem = d.info().max_shared_memory / regions;
  if (o.row_bytes + 32ull > smem)
    fail("{}: a row of {} bytes does not fit {} bytes of shared memory ({} tile regions)", what, o.row_bytes,
         d.info().max_shared_memory, regions);
  const uint32_t rows = uint32_t(std::clamp<uint64_t>(d.tune(tn + "rows"), 1, (smem - 32) / o.row_bytes));
  const uint32_t stage = u32(int64_t((uint64_t(rows) * o.row_bytes + 15) / 16 + 1));
  // x slots per lane held in registers: enough for every slot at the reported subgroup size (a smaller
  // subgroup at run time reads x from memory instead), at most 4 (registers).
  const uint32_t spl = std::max(1u, d.tune(tn + "slots"));
  const uint32_t lanes = std::min(d.info().subgroup_size, std::max(1u, std::bit_ceil(slots) / std::bit_floor(spl)));
  const uint32_t xr = std::clamp((slots + lanes - 1) / lanes, 1u, 4u);
  const X8 x8 = quantize_x8(d, o.x);
  struct {
    uint32_t T, K, N, row_bytes, slots, slots_p2, tiles;
  } pc{o.T, o.K, o.N, o.row_bytes, slots, std::bit_ceil(slots), (o.N + rows - 1) / rows};
  Tensor y = Tensor::device(d, o.T, o.N);
  const auto& p = d.pipeline("qmatvec_i8_staged",
                             {{0, wg}, {1, o.type}, {2, rows}, {3, stage}, {4, xr}, {5, spl}, {6, depth}, {7, local},
                              {8, regions}, {9, (stage + loaders - 1) / loaders}},
                             5, sizeof pc);
  // Workgroups: enough for every tile's worker, at most `groups`.
  const uint32_t workers = local ? std::max(1u, wg / d.info().subgroup_size) : 1;
  const Grid g = grid(std::min((pc.tiles + workers - 1) / workers, groups));
  d.dispatch(p, {x8.q.buffer(d), x8.d.buffer(d), x8.s.buffer(d), o.w.buffer(d), y.buffer_mut(d)}, pc, g.x, g.y);
  a.set("y", y);
}

// Q6_K in planar rows (WeightStore::device_planar), each lane's bytes in aligned 16-byte loads, its chunks of x
// in registers (qmatvec_planar*.comp); i8: x rounded to 8 bits per 256 values first (quantize_x8_k), integer
// dot products; else, with x16 set where the device has integer dot products, x as 16-bit fixed point per run of
// 16 (each lane rounds its own chunks) and integer dot products.
void qmatvec_planar(VariantCtx& c, OpArgs& a, const std::string& op, bool i8) {
  Device& d = c.device();
  const std::string name = i8 ? "qmatvec_planar_i8" : "qmatvec_planar", what = op + " vulkan:" + name;
  const std::string tn = op + "." + name + ".";
  const bool x16 = !i8 && d.tune(tn + "x16") && d.info().integer_dot_product;
  const WeightRef& w = a.weight("w");
  const Tensor& x = a.in("x");
  if (w.storage_type() != quant::Type::Q6_K)
    fail("{}: weight '{}' is {}; this variant reads q6_K blocks (use vulkan:auto)", what, w.name(),
         quant::type_name(w.storage_type()));
  if (x.cols() != w.cols) fail("{}: input has {} columns but the weight expects {}", what, x.cols(), w.cols);
  const Tensor planar = c.weights->device_planar(w);
  if (planar.bytes() > d.info().max_storage_buffer_range || planar.bytes() > UINT32_MAX)
    fail("{}: weight '{}' holds {} MiB of blocks, beyond this device's storage-buffer range of {} MiB (or 4 GiB)", what,
         w.name(), planar.bytes() >> 20, d.info().max_storage_buffer_range >> 20);
  const uint32_t wg = d.tune(tn + "wg"), rows = d.tune(tn + "rows"), groups = d.tune(tn + "groups");
  if (wg == 0 || rows == 0) fail("{}: tunables wg and rows must be at least 1", what);
  const uint32_t chunks = u32(w.cols / 64), lanes_p2 = std::bit_ceil(chunks);
  // Lanes per row and x chunks per lane at the reported subgroup size (another size at run time reloads x).
  const uint32_t sg = std::max(1u, d.info().subgroup_size), lanes = std::min(sg, lanes_p2);
  const uint32_t xr = std::clamp((chunks + lanes - 1) / lanes, 1u, 4u);
  struct {
    uint32_t T, K, N, stride, nb, lanes_p2;
  } pc{u32(x.rows()), u32(w.cols), u32(w.rows), u32(int64_t(WeightStore::planar_row_stride(w) / 16)), chunks / 4, lanes_p2};
  Tensor y = Tensor::device(d, pc.T, pc.N);
  const BufferPtr wb = planar.buffer(d);
  std::vector<BufferPtr> bind{x.buffer(d), wb, wb, wb, y.buffer_mut(d)};
  if (i8) {  // x to 8 bits per 256 values: the values (binding 0), scales and sums per 16 (5, 6)
    const uint32_t runs = u32(x.rows() * x.cols() / 16);
    Tensor xq = Tensor::device(d, x.rows(), x.cols() / 4), xd = Tensor::device(d, x.rows(), x.cols() / 256),
           xs = Tensor::device(d, x.rows(), x.cols() / 16, Tensor::Type::I32);
    const auto& q = d.pipeline("quantize_x8_k", {{0, 64}}, 4, sizeof runs);
    const Grid gq = grid((runs + 63) / 64);
    d.dispatch(q, {x.buffer(d), xq.buffer_mut(d), xd.buffer_mut(d), xs.buffer_mut(d)}, runs, gq.x, gq.y);
    bind[0] = xq.buffer(d);
    bind.push_back(xd.buffer(d));
    bind.push_back(xs.buffer(d));
  }
  const auto& p = d.pipeline(x16 ? "qmatvec_planar_x16" : name, {{0, wg}, {1, rows}, {2, xr}}, uint32_t(bind.size()), sizeof pc);
  // Rows per workgroup pass at the reported subgroup size; subgroups walk passes grid-stride, at most `groups`
  // workgroups when that is set.
  const uint32_t per_group = rows * (sg / lanes) * std::max(1u, wg / sg);
  uint32_t n = (pc.N + per_group - 1) / per_group;
  if (groups) n = std::min(n, groups);
  const Grid g = grid(n);
  d.dispatch(p, bind, pc, g.x, g.y);
  a.set("y", y);
}

void qcols(VariantCtx& c, OpArgs& a, const std::string& op) {
  Device& d = c.device();
  const Operands o = operands(c, a, op + " vulkan:qcols");
  const uint32_t wg = d.tune(op + ".qcols.wg"), rows = d.tune(op + ".qcols.rows"), tm = d.tune(op + ".qcols.tm"),
                 units = d.tune(op + ".qcols.units");
  // Columns per workgroup: max_cols, or the next power of two of a shorter chunk (few pipelines).
  const uint32_t cols = std::min(d.tune(op + ".qcols.max_cols"), std::bit_ceil(o.T));
  if (cols == 0 || units == 0) fail("{} vulkan:qcols: tunables max_cols and units must be at least 1", op);
  if (tm == 0 || rows % tm || wg % (rows / tm))
    fail("{} vulkan:qcols: tunables rows {} / tm {} must divide the workgroup of {}", op, rows, tm, wg);
  const uint64_t smem = 4ull * (rows + cols) * (32ull * units + 1);
  if (smem > d.info().max_shared_memory)
    fail("{} vulkan:qcols: {} rows and {} columns of {} values need {} bytes of shared memory, this device has {}", op,
         rows, cols, 32 * units, smem, d.info().max_shared_memory);
  struct {
    uint32_t T, K, N, row_bytes, col_chunks;
  } pc{o.T, o.K, o.N, o.row_bytes, (o.T + cols - 1) / cols};
  Tensor y = Tensor::device(d, o.T, o.N);
  const auto& p = d.pipeline("qcols", {{0, wg}, {1, o.type}, {2, rows}, {3, cols}, {4, tm}, {5, units}}, 3, sizeof pc);
  const Grid g = grid(uint64_t((o.N + rows - 1) / rows) * pc.col_chunks);
  d.dispatch(p, {o.x.buffer(d), o.w.buffer(d), y.buffer_mut(d)}, pc, g.x, g.y);
  a.set("y", y);
}

// Few output rows (vulkan:qnarrow): a workgroup per ROWS rows x TOKENS tokens, K split over its invocations, each
// weight unit decoded once per workgroup (qnarrow.comp). Also reads f32 rows of whole 32-value units.
void qnarrow(VariantCtx& c, OpArgs& a, const std::string& op) {
  Device& d = c.device();
  const Operands o = operands(c, a, op + " vulkan:qnarrow", true);
  const uint32_t wg = d.tune(op + ".qnarrow.wg"), rows = d.tune(op + ".qnarrow.rows"), tokens = d.tune(op + ".qnarrow.tokens");
  if (rows == 0 || tokens == 0 || wg % rows)
    fail("{} vulkan:qnarrow: tunables rows {} (a divisor of wg {}) and tokens {} must be at least 1", op, rows, wg, tokens);
  if (uint64_t(wg) * tokens * 4 > d.info().max_shared_memory)
    fail("{} vulkan:qnarrow: {} invocations x {} tokens of partial sums exceed {} bytes of shared memory", op, wg, tokens,
         d.info().max_shared_memory);
  struct {
    uint32_t T, K, N, row_bytes, row_tiles;
  } pc{o.T, o.K, o.N, o.row_bytes, (o.N + rows - 1) / rows};
  Tensor y = Tensor::device(d, o.T, o.N);
  const auto& p = d.pipeline("qnarrow", {{0, wg}, {1, o.type}, {2, rows}, {3, tokens}}, 3, sizeof pc);
  const Grid g = grid(uint64_t(pc.row_tiles) * ((o.T + tokens - 1) / tokens));
  d.dispatch(p, {o.x.buffer(d), o.w.buffer(d), y.buffer_mut(d)}, pc, g.x, g.y);
  a.set("y", y);
}

}  // namespace

void register_matmul_vulkan_quant(Registry& r) {
  for (std::string op : {"matmul", "lm_head"}) {
    const bool lm = op == "lm_head";
    const auto key = [&](const char* v, const char* p) { return op + "." + v + "." + p; };
    const auto idp = [](const Device& d) { return d.info().integer_dot_product ? "" : "the device has no shader integer dot product"; };
    Variant mv = vulkan_variant(op, "vulkan:qmatvec",
                                "quantized weights (ggml blocks), decode: rows staged in shared memory, x in registers",
                                [op](VariantCtx& c, OpArgs& a) { qmatvec(c, a, op); });
    mv.status = "baseline";
    // Rows staged per workgroup (fewer where shared memory is short): on Hopper 2, more workgroups resident.
    mv.tunables = {{key("qmatvec", "wg"), 128}, {key("qmatvec", "rows"), 16, {{"nvidia-hopper", 2}}}, {key("qmatvec", "pass"), 2}};
    Variant md = vulkan_variant(op, "vulkan:qmatvec_direct",
                                "ggml blocks or f32 rows, decode: x in shared memory, R rows per subgroup with every unit's "
                                "words loaded straight into registers",
                                [op](VariantCtx& c, OpArgs& a) { qmatvec_direct(c, a, op); });
    md.status = "baseline";
    // Rows per subgroup pass (their loads in flight together), 32-value units per lane per step, workgroups at most
    // (0: a pass per subgroup, walking rows grid-stride). min_passes: fewer rows per pass where they would leave a call
    // fewer subgroup passes than this. Hopper: 2 rows for 8192-row projections, a row per pass for 4096 and fewer (the
    // decode stream's output projection: its cold weights spread over twice the subgroups); H100, cold, chained: qkv
    // q4_K 2048->8192 9.7 against 10.6 us at 1 row, out 4096->2048 10.1 against 8.1 at 2 rows
    // (reports/nvidia-h100-80gb-hbm3/raw/e2e-30368d1/matmul-rows.json).
    const auto rows_by_device = lm ? std::map<std::string, uint32_t>{} : std::map<std::string, uint32_t>{{"nvidia-hopper", 2}};
    const auto passes_by_device = lm ? std::map<std::string, uint32_t>{} : std::map<std::string, uint32_t>{{"nvidia-hopper", 4096}};
    md.tunables = {{key("qmatvec_direct", "wg"), 256}, {key("qmatvec_direct", "rows"), lm ? 8u : 2u, rows_by_device},
                   {key("qmatvec_direct", "min_passes"), 0, passes_by_device},
                   {key("qmatvec_direct", "units"), lm ? 2u : 1u}, {key("qmatvec_direct", "groups"), 0}, {key("qmatvec_direct", "x_global"), 0},
                   {key("qmatvec_direct", "x16"), 1}};
    md.precision_tolerance = kX16Tolerance;
    Variant mc = vulkan_variant(op, "vulkan:qcols",
                                "quantized weights (ggml blocks), prompt chunks: dequantized tiles reused by max_cols tokens",
                                [op](VariantCtx& c, OpArgs& a) { qcols(c, a, op); });
    mc.status = "baseline";
    // Weight rows per workgroup, tokens per workgroup (each dequantized weight tile serves them all), rows per
    // invocation (register tile tm x max_cols / columns of invocations), 32-value units per shared-memory step.
    mc.tunables = {{key("qcols", "rows"), 32, {{"nvidia-hopper", 128}}},
                   {key("qcols", "max_cols"), 32, {{"nvidia-hopper", lm ? 16u : 64u}}},
                   {key("qcols", "tm"), 2, lm ? std::map<std::string, uint32_t>{} : std::map<std::string, uint32_t>{{"nvidia-hopper", 8}}},
                   {key("qcols", "units"), 2, lm ? std::map<std::string, uint32_t>{} : std::map<std::string, uint32_t>{{"nvidia-hopper", 1}}}};
    Variant mn = vulkan_variant(op, "vulkan:qnarrow",
                                "ggml blocks or f32 rows, prompt chunks of few output rows: a workgroup per `rows` rows x `tokens` "
                                "tokens, K split over its invocations, each weight unit decoded once per workgroup",
                                [op](VariantCtx& c, OpArgs& a) { qnarrow(c, a, op); });
    mn.status = "baseline";
    mn.delegate = [](VariantCtx&, const OpArgs& a) -> std::string { return vk_quant_decodes(a.weight("w")) ? "" : "vulkan:tiled"; };
    // Rows per workgroup (the workgroup's invocations split K in wg / rows shares), tokens per workgroup. Hopper: 1024
    // invocations (K in 32 shares of two units each) of 4 tokens, 128 workgroups at T = 512 (the matmul experiment's sweep).
    mn.tunables = {{key("qnarrow", "wg"), 256, {{"nvidia-hopper", 1024}}}, {key("qnarrow", "rows"), 32}, {key("qnarrow", "tokens"), 8, {{"nvidia-hopper", 4}}}};
    Variant ms = vulkan_variant(
        op, "vulkan:qmatvec_i8_staged",
        "x rounded to 8 bits, integer dot products; the weight stream staged: tiles of rows loaded a tile ahead as aligned "
        "16-byte units, x in registers",
        [op](VariantCtx& c, OpArgs& a) { qmatvec_i8_staged(c, a, op); }, false, false, idp);
    // Rows per tile (one contiguous span), workgroups at most (each walks tiles grid-stride), 64-value slots per lane,
    // tiles in flight per worker (1..3), local 1: each subgroup a worker (its own tiles, subgroup barriers). Hopper:
    // subgroup workers on one-row tiles.
    ms.tunables = {{key("qmatvec_i8_staged", "rows"), 8, {{"nvidia-hopper", 1}}}, {key("qmatvec_i8_staged", "groups"), 1024},
                   {key("qmatvec_i8_staged", "slots"), 1},  {key("qmatvec_i8_staged", "depth"), 1},
                   {key("qmatvec_i8_staged", "local"), 0, {{"nvidia-hopper", 1}}}};
    Variant mp = vulkan_variant(op, "vulkan:qmatvec_planar",
                                "q6_K in planar rows (fields grouped per row), decode: aligned 16-byte loads, x in registers, "
                                "x as 16-bit fixed point and integer dot products where the device has them (x16), else "
                                "exact f32 products",
                                [op](VariantCtx& c, OpArgs& a) { qmatvec_planar(c, a, op, false); });
    mp.status = "baseline";
    Variant mpi = vulkan_variant(
        op, "vulkan:qmatvec_planar_i8",
        "qmatvec_planar with x rounded to 8 bits per 256 values, 4-way integer dot products",
        [op](VariantCtx& c, OpArgs& a) { qmatvec_planar(c, a, op, true); }, false, false, idp);
    // Row groups per subgroup pass, workgroups at most (0: a pass per subgroup). Hopper's lm_head: one row group per
    // pass, workgroups of 128, a capped grid.
    for (auto [v, groups] : {std::pair{&mp, 2112u}, std::pair{&mpi, 4224u}}) {
      const std::string n = v->name.substr(7);
      v->tunables = {{op + "." + n + ".wg", 256, lm ? std::map<std::string, uint32_t>{{"nvidia-hopper", 128}} : std::map<std::string, uint32_t>{}},
                     {op + "." + n + ".rows", 2, lm ? std::map<std::string, uint32_t>{{"nvidia-hopper", 1}} : std::map<std::string, uint32_t>{}},
                     {op + "." + n + ".groups", 0, lm ? std::map<std::string, uint32_t>{{"nvidia-hopper", groups}} : std::map<std::string, uint32_t>{}}};
    }
    // x16: x as 16-bit fixed point and integer dot products where the device has them (0: exact f32 products).
    mp.tunables.push_back({op + ".qmatvec_planar.x16", 1});
    mp.precision_tolerance = kX16Tolerance;
    mp.quantized_weights_only = mpi.quantized_weights_only = true;
    mp.weight_types = mpi.weight_types = {quant::Type::Q6_K};
    ms.weight_types = {quant::Type::Q8_0, quant::Type::Q4_K, quant::Type::Q5_K, quant::Type::Q6_K};
    // x rounded to 8 bits per 256 values: the step set by a block's max |x| (on Gaussian x about 2.9 sigma), each
    // value off by up to half a step, independent over K terms: ~0.7% relative L2 of y; 2e-2 leaves room.
    mpi.precision_tolerance = 2e-2;
    // x rounded to 8 bits per block of 32: each value off by up to d/2 (d = max|x|/127, about 2.1 sigma / 127 on
    // Gaussian data), uniformly, so d/sqrt(12) = 0.48% of x's RMS; independent over K terms, so ~0.5% relative L2 of
    // y. A handful of outputs draws more (1.04e-2 over 5): 2e-2.
    ms.precision_tolerance = 2e-2;
    // qmatvec_direct also reads f32 rows, but only of whole 32-value units, not any f32 shape.
    mv.quantized_weights_only = md.quantized_weights_only = mc.quantized_weights_only = ms.quantized_weights_only = true;
    for (Variant* v : {&mv, &md, &ms, &mc, &mn, &mp, &mpi}) r.add_variant(std::move(*v));
  }
}

}  // namespace hl::gpu
