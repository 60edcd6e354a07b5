// Vulkan variant moe_experts = vulkan:route_pack (the family default): the routes of a prompt chunk are
// packed by expert so that each expert's weights are streamed once per tile of its rows, not once per
// (token, slot). Stage 1 is the router (moe_router op); then
//   2. route_count.comp (PLACE 0): entries per expert per block of entries (integer atomics on bit masks);
//   3. route_offsets.comp: prefix sums over experts -> row offsets, a compact row-tile list, block offsets;
//      route_count.comp (PLACE 1): the packed row list, (token, slot) order within an expert;
//   (2-3 with moe_experts.route_pack.plan 1: route_plan.comp, the same in one workgroup and one dispatch;)
//   4. route_gemm.comp: gate/up + SwiGLU, then down, over the packed tiles only (idle experts cost nothing);
//      f32 weights, or GGUF blocks decoded into the shared tiles (quant_blocks.glsl);
//   5. route_scatter.comp: weighted sum of each token's k slot outputs in slot order (no float atomics).
// vulkan:route_pack_coopmat is the same pipeline with stage 4 on cooperative matrices (the quantized GEMM of
// ops/shaders/qgemm_cm.glsl: the expert's weight tiles decoded from ggml blocks into shared f16, A rounded to f16,
// f32 accumulation; gate and up in one pass with SwiGLU in the epilogue), on devices with
// VK_KHR_cooperative_matrix and that shape (coopmat_unavailable); vulkan:route_pack hands prompt chunks to it there.
// vulkan:route_pack_qgemm is the same pipeline with stage 4 on that quantized GEMM's scalar form (A in f32, the
// weights' units decoded into shared f16 tiles, f32 FMAs); route_pack hands prompt chunks to it on devices without
// cooperative matrices (tunable moe_experts.route_pack.qgemm; lavapipe keeps the exact f32 GEMM).
// vulkan:route_pack_i8 is the same pipeline with stage 4 on 8-bit integer dot products (ops/matmul/qgemm_i8.h: x, then
// h, rounded to 8 bits per 32 values, the experts' blocks staged as bytes); route_pack hands prompt chunks to it on
// devices without cooperative matrices (moe_experts.route_pack.i8; lavapipe keeps the exact f32 GEMM).
// Every stage is deterministic: the same inputs give bit-identical outputs. Decode (fewer than
// moe_experts.route_pack.min_tokens tokens) runs the per-token kernels (vulkan:per_token), which spread
// one token's k experts over more workgroups.
#include "ops/matmul/quant_rows.h"
#include "ops/matmul/qgemm_cm.h"
#include "ops/matmul/qgemm_i8.h"
#include "ops/moe_experts/route_pack.h"

namespace hl::gpu::route_pack {

namespace {

const char* const kTune = "moe_experts.route_pack.";
uint32_t tune(const Device& d, const char* param) { return d.tune(std::string(kTune) + param); }

bool llvmpipe(const Device& d) { return d.info().driver_id == VK_DRIVER_ID_MESA_LLVMPIPE; }

// lavapipe (Mesa 22.3) silently ends the loops of an invocation after 65535 iterations in all: refuse
// shapes whose loops (counted as if none were unrolled) could get near that, rather than return garbage.
void check_loops(const Device& d, uint64_t iterations, const char* what) {
  if (llvmpipe(d) && iterations > 60000)
    fail("moe_experts: {} would run ~{} loop iterations per invocation, past lavapipe's limit of 65535", what,
         iterations);
}

void check_shared(const Device& d, uint64_t bytes, const char* what) {
  if (bytes > d.info().max_shared_memory)
    fail("moe_experts: {} needs {} bytes of shared memory, this device has {}", what, bytes, d.info().max_shared_memory);
}

struct Bins {
  uint32_t wg, block, blocks, N, E;
};

Bins bins_shape(const Device& d, const Tensor& expert, int64_t E) {
  if (expert.type() != Tensor::Type::I32) fail("moe_experts: expert ids must be i32");
  if (E < 1) fail("moe_experts: {} experts", E);
  const uint32_t wg = tune(d, "wg"), block = tune(d, "block");
  if (block == 0 || block % 32) fail("moe_experts: route_pack.block = {} is not a multiple of 32", block);
  check_shared(d, uint64_t(E) * block / 8, "the expert masks of one block");
  const uint32_t N = u32(expert.numel());
  const uint64_t words = block / 32;
  const uint64_t per_expert = (uint64_t(E) + wg - 1) / wg;
  check_loops(d, per_expert * words + (block + wg - 1) / wg * (2 + words) + per_expert * (1 + words), "binning");
  return {wg, block, (N + block - 1) / block, N, u32(E)};
}

// route_count.comp in either mode: PLACE 0 writes block counts to `bins`; PLACE 1 reads block offsets from
// `bins` and writes the packed rows.
void run_bins(Device& d, const Bins& s, const Tensor& expert, Tensor& bins, Tensor* rows) {
  struct {
    uint32_t N, blocks;
  } pc{s.N, s.blocks};
  const auto& p =
      d.pipeline("route_count", {{0, s.wg}, {1, s.E}, {2, s.block}, {3, uint32_t(rows != nullptr)}}, 3, sizeof pc);
  const Grid g = grid(s.blocks);
  const BufferPtr& out = bins.buffer_mut(d);
  d.dispatch(p, {expert.buffer(d), out, rows ? rows->buffer_mut(d) : out}, pc, g.x, g.y);
}

// The grouped GEMM's tiles: BM x BN outputs per workgroup, BK-deep shared slices, TM x TN per invocation.
// Quantized weights: BK = 128 values (whole units of every ggml type), BN and TN of their own.
struct Tiles {
  uint32_t bm, bn, bk, tm, tn, wg;
};

Tiles gemm_shape(const Device& d, bool quant) {
  Tiles g{tune(d, "rows"), tune(d, quant ? "q_cols" : "cols"), quant ? 128u : tune(d, "depth"), tune(d, quant ? "q_thread_rows" : "thread_rows"),
         tune(d, quant ? "q_thread_cols" : "thread_cols"), 0};
  if (!g.bm || !g.bn || !g.bk || !g.tm || !g.tn || g.bm % g.tm || g.bn % g.tn)
    fail("moe_experts: route_pack tiles {}x{}x{} do not split into {}x{} per invocation", g.bm, g.bn, g.bk, g.tm, g.tn);
  // Narrower column tiles where shared memory is short (lavapipe's 32 KB for the 128-deep quantized slices).
  const auto shared = [&] { return 4ull * (g.bk * g.bm + 2ull * g.bk * g.bn + g.bm); };
  while (shared() > d.info().max_shared_memory && g.bn % (2 * g.tn) == 0) g.bn /= 2;
  check_shared(d, shared(), "the grouped GEMM tiles");
  g.wg = (g.bm / g.tm) * (g.bn / g.tn);
  if (g.wg > d.info().max_workgroup_invocations)
    fail("moe_experts: route_pack tiles need {} invocations per workgroup, this device allows {}", g.wg,
         d.info().max_workgroup_invocations);
  return g;
}


// An expert weight stack on the device: f32 values, or raw ggml rows of `type` (quant) of row_bytes each.
struct Operand {
  Tensor t;
  bool quant = false;
  uint32_t type = 0, row_bytes = 0;
  bool columns = false;  // t holds the blocks in chunk columns of one expert's rows
};

// The expert stack dequantized on the device into an f32 scratch (dequant_rows.comp, bit-exact), for the f32
// GEMM: on a prompt chunk that GEMM outruns decoding blocks inside its tiles (route_pack.dequant_tokens). The
// scratch is the weight store's, one per role, reused by every layer (WeightStore::scratch).
Operand dequantized(VariantCtx& c, const WeightRef& w, const char* role) {
  Device& d = c.device();
  const Tensor raw = vk_quant_rows(c, w, "moe_experts vulkan:route_pack");
  Tensor t = c.weights ? c.weights->scratch(std::string("moe_experts.route_pack.dequant.") + role, w.rows, w.cols)
                       : Tensor::device(d, w.rows, w.cols);
  struct {
    uint32_t rows, cols, row_bytes;
  } pc{u32(w.rows), u32(w.cols), u32(int64_t(quant::row_bytes(w.storage_type(), w.cols)))};
  const uint32_t wg = tune(d, "dequant_wg");
  const Grid g = grid((uint64_t(pc.rows) * (pc.cols / 32) + wg - 1) / wg);
  d.dispatch(d.pipeline("dequant_rows", {{0, wg}, {1, uint32_t(w.storage_type())}}, 2, sizeof pc), {raw.buffer(d), t.buffer_mut(d)},
             pc, g.x, g.y);
  return {t};
}

// Whether a prompt chunk of T tokens takes its quantized experts through dequantized() (the tunable's token
// count reached, and the f32 stack within one storage-buffer binding).
bool dequantizes(const Device& d, const WeightRef& w, int64_t T) {
  const uint32_t from = tune(d, "dequant_tokens");
  return from && T >= int64_t(from) && w.cols % 32 == 0 && uint64_t(w.numel()) * 4 <= d.info().max_storage_buffer_range;
}

Operand operand(VariantCtx& c, const WeightRef& w, bool raw) {
  if (!raw) {
    Tensor t = c.weights->device(w);
    if (t.bytes() > c.device().info().max_storage_buffer_range)
      fail("moe_experts: weight '{}' [{}, {}] is beyond this device's storage-buffer range of {} MiB", w.name(), w.rows,
           w.cols, c.device().info().max_storage_buffer_range >> 20);
    return {t};
  }
  return {vk_quant_rows(c, w, "moe_experts vulkan:route_pack"), true, uint32_t(w.storage_type()),
          u32(int64_t(quant::row_bytes(w.storage_type(), w.cols)))};
}

// The K-quant stack in chunk columns of one expert's `group` rows (WeightStore::device_chunk_columns: one copy per
// weight, shared with moe_block's down_columns where both read it).
Operand columns(VariantCtx& c, const WeightRef& w, int64_t group) {
  return {vk_quant_chunk_columns(c, w, group, "moe_experts vulkan:route_pack_coopmat"), true, uint32_t(w.storage_type()),
          u32(int64_t(quant::row_bytes(w.storage_type(), w.cols))), true};
}

bool k_quant(const WeightRef& w) {
  const quant::Type t = w.storage_type();
  return t == quant::Type::Q4_K || t == quant::Type::Q5_K || t == quant::Type::Q6_K;
}

// One grouped GEMM pass (route_gemm.comp): K-long dots into N outputs per expert row; w1 only when gated.
void gemm(Device& d, const Packed& p, bool gated, const Tensor& a, const Operand& w0, const Operand& w1, Tensor& res,
          int64_t K, int64_t N, Gemm kind, bool half_h = false) {
  if (kind != Gemm::Tiled) {
    const auto weight = [&](const Operand& o) {
      return QgemmWeight{o.t, o.quant ? o.type : uint32_t(quant::Type::F32), o.quant ? o.row_bytes : u32(4 * K), o.columns};
    };
    const bool scalar = kind == Gemm::Qgemm;
    qgemm_routed(d, scalar ? kQgemmTune : kCmTune, p, gated, a, weight(w0), weight(w1), res, u32(K), u32(N), scalar,
                 half_h, scalar ? 1u : d.tune(std::string(kCmTune) + "split_k"));
    return;
  }
  const Tiles s = gemm_shape(d, w0.quant);
  if (uint64_t(p.tile_rows) != s.bm)
    fail("moe_experts: routes packed in tiles of {} rows, the grouped GEMM takes {}", p.tile_rows, s.bm);
  const uint64_t steps = (K + s.bk - 1) / s.bk, decode = w0.quant ? 80 * ((s.bn * 4 + s.wg - 1) / s.wg) : 0;
  check_loops(d, 1 + steps * (3 + decode + (s.bm * s.bk + s.wg - 1) / s.wg + (s.bn * s.bk + s.wg - 1) / s.wg +
                              s.bk * (1 + s.tm + s.tn * (1 + s.tm))),
              "the grouped GEMM");
  struct {
    uint32_t E, K, N, k, ncol, rb0, rb1;
  } pc{u32(p.E), u32(K), u32(N), u32(p.k), u32((N + s.bn - 1) / s.bn), w0.row_bytes, w1.row_bytes};
  // Row tiles: sum over experts of ceil(rows_e / BM) <= ceil(rows / BM) + (experts with rows).
  const uint64_t rows = p.rows.cols(), tiles = (rows + s.bm - 1) / s.bm + std::min<uint64_t>(p.E, rows);
  const auto& pl = d.pipeline("route_gemm",
                              {{0, s.wg}, {1, s.bm}, {2, s.bn}, {3, s.bk}, {4, s.tm}, {5, s.tn}, {6, gated},
                               {7, w0.quant}, {8, w0.type}, {9, w1.type}},
                              7, sizeof pc);
  const Grid g = grid(tiles * pc.ncol);
  d.dispatch(pl, {a.buffer(d), p.rows.buffer(d), p.offsets.buffer(d), p.tiles.buffer(d), w0.t.buffer(d), w1.t.buffer(d),
                  res.buffer_mut(d)},
             pc, g.x, g.y);
}

}  // namespace

Tensor block_counts(Device& d, const Tensor& expert, int64_t E) {
  const Bins s = bins_shape(d, expert, E);
  Tensor bcount = Tensor::device(d, s.blocks, E, Tensor::Type::I32);
  if (s.blocks > 0) run_bins(d, s, expert, bcount, nullptr);
  return bcount;
}

namespace {

// route_plan.comp: stages 2 and 3 in one workgroup of `wg` invocations, `chunk` entries per placement pass (a multiple
// of 32, halved until its expert masks fit the shared memory beside the counters and the scan).
void plan(Device& d, const Tensor& expert, Packed& p) {
  const uint32_t E = u32(p.E), N = u32(expert.numel());
  const uint32_t wg = std::min(tune(d, "plan_wg"), d.info().max_workgroup_invocations);
  uint32_t chunk = tune(d, "plan_chunk");
  if (wg == 0 || chunk == 0 || chunk % 32) fail("moe_experts: route_pack.plan_wg {} / plan_chunk {}: need a workgroup and a multiple of 32", wg, chunk);
  const auto shared = [&] { return 4ull * (uint64_t(E) * (chunk / 32) + E + 2ull * wg); };
  while (shared() > d.info().max_shared_memory && chunk > 32) chunk /= 2;
  check_shared(d, shared(), "the expert masks of one placement pass");
  const uint64_t chunks = (uint64_t(N) + chunk - 1) / chunk, per_e = (uint64_t(E) + wg - 1) / wg;
  check_loops(d, 2 * per_e + (uint64_t(N) + wg - 1) / wg + 64 +
                     chunks * (per_e * (chunk / 32) * 2 + (uint64_t(chunk) + wg - 1) / wg * (2 + chunk / 32) + per_e),
              "the one-workgroup packing");
  struct {
    uint32_t N, tile_rows;
  } pc{N, u32(p.tile_rows)};
  d.dispatch(d.pipeline("route_plan", {{0, wg}, {1, E}, {2, chunk}}, 4, sizeof pc),
             {expert.buffer(d), p.offsets.buffer_mut(d), p.tiles.buffer_mut(d), p.rows.buffer_mut(d)}, pc, 1);
}

}  // namespace

Packed pack(Device& d, const Tensor& expert, int64_t E, uint32_t tile_rows) {
  const Bins s = bins_shape(d, expert, E);
  Packed p{Tensor::device(d, 1, E + 1, Tensor::Type::I32), Tensor::device(d, 1, E + 1, Tensor::Type::I32),
           Tensor::device(d, 1, s.N, Tensor::Type::I32), E, expert.cols(), tile_rows ? tile_rows : tune(d, "rows")};
  if (p.tile_rows == 0) fail("moe_experts: route_pack.rows = 0");
  if (tune(d, "plan")) {
    plan(d, expert, p);
    return p;
  }
  const Tensor bcount = block_counts(d, expert, E);
  Tensor boff = Tensor::device(d, s.blocks, E, Tensor::Type::I32);
  struct {
    uint32_t E, blocks, tile_rows;
  } pc{s.E, s.blocks, u32(p.tile_rows)};
  check_loops(d, 2 * ((uint64_t(E) + s.wg - 1) / s.wg) * (s.blocks + 2) + 64, "the expert offsets");
  d.dispatch(d.pipeline("route_offsets", {{0, s.wg}}, 4, sizeof pc),
             {bcount.buffer(d), boff.buffer_mut(d), p.offsets.buffer_mut(d), p.tiles.buffer_mut(d)}, pc, 1);
  if (s.blocks > 0) run_bins(d, s, expert, boff, &p.rows);
  return p;
}

Tensor grouped_swiglu(VariantCtx& c, const Packed& p, const Tensor& x, const WeightRef& gate, const WeightRef& up,
                      const WeightRef& down, Gemm kind) {
  Device& d = c.device();
  const int64_t T = x.rows(), H = x.cols(), E = p.E, N = p.rows.cols();
  if (gate.rows % E) fail("moe_experts: gate has {} rows, not a multiple of {} experts", gate.rows, E);
  const int64_t F = gate.rows / E;
  if (N != T * p.k || gate.cols != H || up.rows != gate.rows || up.cols != H || down.rows != E * H || down.cols != F)
    fail("moe_experts: x [{}, {}] with {} routed rows does not fit {} experts gate [{}, {}], up [{}, {}], down [{}, {}]", T,
         H, N, E, gate.rows, gate.cols, up.rows, up.cols, down.rows, down.cols);
  // Raw blocks where a weight is quantized in a type the kernel decodes (gate and up alike: one pass reads both).
  const auto raw = [](const WeightRef& w) { return w.quantized() && vk_quant_decodes(w); };
  const bool raw_gu = (raw(gate) || raw(up)) && vk_quant_decodes(gate) && vk_quant_decodes(up);
  // Long enough chunks: dequantize the stacks on the device and run the f32 GEMM (scalar path only).
  const bool deq = kind == Gemm::Tiled && raw_gu && raw(down) && dequantizes(d, gate, T) && dequantizes(d, up, T) && dequantizes(d, down, T);
  if (kind == Gemm::I8) {  // x and h rounded to 8 bits per 32 values, each pass on integer dot products
    if (!i8_takes(gate, up, down))
      fail("moe_experts vulkan:route_pack_i8: experts gate {}, up {}, down {}: it reads q8_0 or K-quant blocks, gate and "
           "up of one type", quant::type_name(gate.storage_type()), quant::type_name(up.storage_type()),
           quant::type_name(down.storage_type()));
    const auto weight = [&](const WeightRef& w) { return qgemm_weight(c, w, "moe_experts vulkan:route_pack_i8"); };
    Tensor hmid = Tensor::device(d, N, F), ye = Tensor::device(d, N, H);
    qgemm_i8_routed(d, kI8Tune, p, true, quantize_x8(d, x), weight(gate), weight(up), hmid, u32(H), u32(F));
    const QgemmWeight dn = weight(down);
    qgemm_i8_routed(d, kI8Tune, p, false, quantize_x8(d, hmid), dn, dn, ye, u32(F), u32(H));
    return ye;
  }
  // The matrix kernels keep h in f16 (two values per float: the values down's staging rounds to f16 anyway; half_h 0:
  // f32).
  const bool half = kind == Gemm::Coopmat && d.tune(std::string(kCmTune) + "half_h");
  Tensor hmid = Tensor::device(d, N, half ? F / 2 : F), ye = Tensor::device(d, N, H);
  if (deq) {
    gemm(d, p, true, x, dequantized(c, gate, "gate"), dequantized(c, up, "up"), hmid, H, F, kind);
    const Operand dn = dequantized(c, down, "down");
    gemm(d, p, false, hmid, dn, dn, ye, F, H, kind);
    return ye;
  }
  // route_pack_coopmat.columns (bit 0 down, bit 1 gate and up): K-quant stacks read from chunk columns.
  const uint32_t cols = kind == Gemm::Coopmat ? d.tune(std::string(kCmTune) + "columns") : 0u;
  const bool cols_gu = (cols & 2u) && raw_gu && k_quant(gate) && k_quant(up), cols_dn = (cols & 1u) && raw(down) && k_quant(down);
  gemm(d, p, true, x, cols_gu ? columns(c, gate, F) : operand(c, gate, raw_gu), cols_gu ? columns(c, up, F) : operand(c, up, raw_gu),
       hmid, H, F, kind, half);
  const Operand dn = cols_dn ? columns(c, down, H) : operand(c, down, raw(down));
  gemm(d, p, false, hmid, dn, dn, ye, F, H, kind, half);
  return ye;
}

Tensor scatter(Device& d, const Tensor& ye, const Tensor& weight) {
  const int64_t T = weight.rows(), k = weight.cols(), H = ye.cols();
  if (ye.rows() != T * k) fail("moe_experts: {} expert outputs for {} tokens x {} slots", ye.rows(), T, k);
  struct {
    uint32_t T, H, k;
  } pc{u32(T), u32(H), u32(k)};
  Tensor y = Tensor::device(d, T, H);
  const uint32_t wg = tune(d, "wg"), v = H % 4 == 0 && tune(d, "scatter_vec4") ? 4 : 1;
  const Grid g = grid((uint64_t(T) * H / v + wg - 1) / wg);
  d.dispatch(d.pipeline("route_scatter", {{0, wg}, {1, v}}, 3, sizeof pc), {ye.buffer(d), weight.buffer(d), y.buffer_mut(d)},
             pc, g.x, g.y);
  return y;
}

uint32_t tile_rows(const Device& d, Gemm kind) {
  // The down pass's tiles have as many rows as gate/up's (0: route_pack's own).
  if (kind == Gemm::Tiled) return 0;
  if (kind == Gemm::I8) return qgemm_i8_tile_rows(d, kI8Tune);
  const bool scalar = kind == Gemm::Qgemm;
  return qgemm_tile(d, scalar ? kQgemmTune : kCmTune, QgemmKernel::Gate, scalar).rows;
}

std::string coopmat_unavailable(const Device& d) { return qgemm_unavailable(d, route_pack::kCmTune); }
std::string qgemm_unavailable(const Device& d) { return hl::gpu::qgemm_unavailable(d, route_pack::kQgemmTune, true); }

bool i8_takes(const WeightRef& g, const WeightRef& u, const WeightRef& dn) {
  return g.storage_type() == u.storage_type() && qgemm_i8_reads(g.storage_type()) && qgemm_i8_reads(dn.storage_type());
}

bool coopmat_takes(const WeightRef& g, const WeightRef& u, const WeightRef& dn) {
  return g.cols % 64 == 0 && dn.cols % 64 == 0 && vk_quant_decodes(g) && vk_quant_decodes(u) && vk_quant_decodes(dn) &&
         qgemm_same_unit_order(uint32_t(g.storage_type()), uint32_t(u.storage_type()));
}

}  // namespace hl::gpu::route_pack

namespace hl::gpu {

namespace {

void run_route_pack(VariantCtx& c, OpArgs& a, route_pack::Gemm kind) {
  Device& d = c.device();
  const Tensor &x = a.in("x"), &expert = a.in("expert"), &weight = a.in("weight");
  if (expert.rows() != x.rows() || weight.rows() != x.rows() || weight.cols() != expert.cols() || expert.cols() < 1)
    fail("moe_experts: routes expert [{}, {}], weight [{}, {}] do not fit {} tokens", expert.rows(), expert.cols(),
         weight.rows(), weight.cols(), x.rows());
  const route_pack::Packed p = route_pack::pack(d, expert, a.iparam("n_experts"), route_pack::tile_rows(d, kind));
  const Tensor ye = route_pack::grouped_swiglu(c, p, x, a.weight("gate"), a.weight("up"), a.weight("down"), kind);
  a.set("y", route_pack::scatter(d, ye, weight));
}

void route_pack_coopmat_experts(VariantCtx& c, OpArgs& a) {
  // The registry's availability check is not on every path that can run a variant (tests, plans): say why here.
  if (auto why = route_pack::coopmat_unavailable(c.device()); !why.empty())
    fail("moe_experts vulkan:route_pack_coopmat cannot run on {}: {}", c.device().info().name, why);
  run_route_pack(c, a, route_pack::Gemm::Coopmat);
}

void route_pack_qgemm_experts(VariantCtx& c, OpArgs& a) {
  if (auto why = route_pack::qgemm_unavailable(c.device()); !why.empty())
    fail("moe_experts vulkan:route_pack_qgemm cannot run on {}: {}", c.device().info().name, why);
  run_route_pack(c, a, route_pack::Gemm::Qgemm);
}

void route_pack_i8_experts(VariantCtx& c, OpArgs& a) {
  if (auto why = qgemm_i8_unavailable(c.device()); !why.empty())
    fail("moe_experts vulkan:route_pack_i8 cannot run on {}: {}", c.device().info().name, why);
  run_route_pack(c, a, route_pack::Gemm::I8);
}

// Decode (fewer than min_tokens tokens): the per-token kernels, which spread each token's few rows over the device.
std::string decode_to_per_token(VariantCtx& c, const OpArgs& a) {
  return a.in("x").rows() < int64_t(c.device().tune("moe_experts.route_pack.min_tokens")) ? "vulkan:per_token" : "";
}

// vulkan:route_pack: decode as above; prompt chunks on cooperative matrices where the device has them (tunable
// moe_experts.route_pack.coopmat: 1 route_pack_coopmat's workgroup tiles, 2 route_pack_warp's subgroup tiles where it
// runs, else the former), else on 8-bit integer dot products (i8, 1; lavapipe 0), else on the quantized GEMM's scalar
// form (qgemm, 1; lavapipe 0), else its own f32 grouped GEMM.
bool coopmat_fits(const OpArgs& a) { return route_pack::coopmat_takes(a.weight("gate"), a.weight("up"), a.weight("down")); }
bool i8_fits(const OpArgs& a) { return route_pack::i8_takes(a.weight("gate"), a.weight("up"), a.weight("down")); }

// vulkan:route_pack_i8: decode as route_pack; experts its GEMM does not take: route_pack's scalar GEMM.
std::string route_pack_i8_pick(VariantCtx& c, const OpArgs& a) {
  if (auto to = decode_to_per_token(c, a); !to.empty()) return to;
  return i8_fits(a) ? "" : "vulkan:route_pack";
}

std::string route_pack_pick(VariantCtx& c, const OpArgs& a) {
  if (auto to = decode_to_per_token(c, a); !to.empty()) return to;
  const Device& d = c.device();
  const uint32_t cm = coopmat_fits(a) ? d.tune("moe_experts.route_pack.coopmat") : 0;
  if (cm == 2 && d.tune("moe_experts.route_pack_warp.cm_emulate") == 0 && route_pack::warp_unavailable(d).empty())
    return "vulkan:route_pack_warp";
  if (cm >= 1 && d.tune(std::string(route_pack::kCmTune) + "cm_emulate") == 0 && route_pack::coopmat_unavailable(d).empty())
    return "vulkan:route_pack_coopmat";
  if (d.tune("moe_experts.route_pack.i8") && i8_fits(a) && qgemm_i8_unavailable(d).empty()) return "vulkan:route_pack_i8";
  const bool q = coopmat_fits(a) && d.tune("moe_experts.route_pack.qgemm") && route_pack::qgemm_unavailable(d).empty();
  return q ? "vulkan:route_pack_qgemm" : "";
}

// vulkan:route_pack_coopmat: decode as route_pack; experts its GEMM does not take: route_pack's scalar GEMM.
std::string route_pack_coopmat_pick(VariantCtx& c, const OpArgs& a) {
  if (auto to = decode_to_per_token(c, a); !to.empty()) return to;
  return coopmat_fits(a) ? "" : "vulkan:route_pack";
}

}  // namespace

void register_moe_experts_vulkan_route_pack(Registry& r) {
  Variant rp = vulkan_variant("moe_experts", "vulkan:route_pack",
                              "routes packed by expert (counts, prefix sums, row list), grouped tiled GEMM over each "
                              "expert's rows, deterministic slot-order scatter; decode: the per-token kernels",
                              [](VariantCtx& c, OpArgs& a) { run_route_pack(c, a, route_pack::Gemm::Tiled); }, true, false);
  rp.delegate = route_pack_pick;
  // Entries binned per workgroup (a multiple of 32); the grouped GEMM's tile: packed rows (also the tile list's
  // unit), output columns, reduction depth per shared-memory slice, outputs per invocation (thread_rows x
  // thread_cols); quantized weights decoded in the tiles: q_thread_rows (Hopper 1: 256 invocations of 1 x 2
  // outputs), q_cols columns per tile (halved where shared memory is short), q_thread_cols; chunks of at least
  // dequant_tokens tokens dequantize quantized experts to f32 on the device first and run the f32 GEMM (0: never;
  // only where the f32 stack fits one storage-buffer binding).
  rp.tunables = {{"moe_experts.route_pack.min_tokens", 2},     {"moe_experts.route_pack.block", 256},
                 {"moe_experts.route_pack.rows", 16},          {"moe_experts.route_pack.cols", 64},
                 {"moe_experts.route_pack.depth", 16},         {"moe_experts.route_pack.thread_rows", 2},
                 {"moe_experts.route_pack.thread_cols", 4},    {"moe_experts.route_pack.q_thread_rows", 2, {{"nvidia-hopper", 1}}},
                 {"moe_experts.route_pack.q_cols", 32},        {"moe_experts.route_pack.q_thread_cols", 2},
                 {"moe_experts.route_pack.dequant_tokens", 64}, {"moe_experts.route_pack.dequant_wg", 256},
                 {"moe_experts.route_pack.coopmat", 1},        {"moe_experts.route_pack.qgemm", 1, {{"lavapipe", 0}}},
                 {"moe_experts.route_pack.i8", 1, {{"lavapipe", 0}}},
                 {"moe_experts.route_pack.plan", 0},         {"moe_experts.route_pack.plan_wg", 1024},
                 {"moe_experts.route_pack.plan_chunk", 1024}, {"moe_experts.route_pack.scatter_vec4", 0}};
  r.add_variant(std::move(rp));
  Variant cm = vulkan_variant("moe_experts", "vulkan:route_pack_coopmat",
                              "vulkan:route_pack with the grouped GEMM on cooperative matrices (16x16x16 f16 x f16 + "
                              "f32 per subgroup; activations and weights rounded to f16, f32 accumulation)",
                              route_pack_coopmat_experts, false, false, route_pack::coopmat_unavailable);
  // f16 inputs: ~5e-4 relative L2 expected (derivation in ops/moe_experts/test_route_pack.cpp).
  cm.cooperative_matrices = true;
  cm.precision_tolerance = route_pack::kCoopmatTolerance;
  cm.delegate = route_pack_coopmat_pick;
  // The grid of subgroups per workgroup: 1 x 2 makes tiles of 32 packed rows (tokens per expert at T = 512 are about
  // 16) by 64 columns of gate and up, or 128 of down; sub_rows 16: each subgroup 16 rows (the thin kernels, 2 x 2
  // subgroups for the same 32-row tiles); half_h: h between gate/up and down in f16 (0: f32); cm_emulate 1: the test
  // hook; split_k: gate/up's K in that many parts (neighbouring workgroups; route_swiglu.comp adds them and applies
  // SwiGLU), for grids whose last wave of resident workgroups would run nearly empty.
  cm.tunables = {{std::string(route_pack::kCmTune) + "warp_rows", 1}, {std::string(route_pack::kCmTune) + "warp_cols", 2},
                 {std::string(route_pack::kCmTune) + "split_k", 1},
                 {std::string(route_pack::kCmTune) + "sub_rows", 32},
                 {std::string(route_pack::kCmTune) + "k_units", 1}, {std::string(route_pack::kCmTune) + "prefetch", 7, {{"nvidia-hopper", 15}}},
                 {std::string(route_pack::kCmTune) + "half_h", 1}, {std::string(route_pack::kCmTune) + "columns", 0, {{"nvidia-hopper", 3}}},
                 {std::string(route_pack::kCmTune) + "cm_emulate", 0}};
  r.add_variant(std::move(cm));
  Variant q = vulkan_variant("moe_experts", "vulkan:route_pack_qgemm",
                             "vulkan:route_pack with the grouped GEMM on route_pack_coopmat's kernel in scalar FMAs (A in "
                             "f32, the weights' units decoded into f16 tiles, f32 accumulation), for devices without "
                             "cooperative matrices",
                             route_pack_qgemm_experts, false, false, route_pack::qgemm_unavailable);
  q.precision_tolerance = route_pack::kCoopmatTolerance;  // the weights rounded to f16, A exact: within that bound
  q.delegate = route_pack_coopmat_pick;                   // the same shapes as the coopmat GEMM
  // The grid of invocations, each 4 x 4 outputs: 8 x 32 makes tiles of 32 packed rows (tokens per expert at T = 512
  // are about 16, yet each decoded weight unit serving more rows paid) by 128 columns, 256 invocations, two units per
  // step (46 KB of shared memory: the weight tiles are f16).
  const std::string qp = route_pack::kQgemmTune;
  q.tunables = {{qp + "thread_rows", 8}, {qp + "thread_cols", 32}, {qp + "k_units", 2}, {qp + "prefetch", 3}};
  r.add_variant(std::move(q));
  Variant i8 = vulkan_variant("moe_experts", "vulkan:route_pack_i8",
                              "vulkan:route_pack with the grouped GEMM on 8-bit integer dot products (x and h rounded to 8 "
                              "bits per 32 values, the experts' q8_0 / K-quant blocks staged as bytes), for devices without "
                              "cooperative matrices",
                              route_pack_i8_experts, false, false, qgemm_i8_unavailable);
  i8.precision_tolerance = route_pack::kI8Tolerance;
  i8.delegate = route_pack_i8_pick;
  // The grid of invocations, each 4 x 4 outputs: 8 x 32 makes tiles of 32 packed rows by 128 columns (of gate and of
  // up), 256 invocations; 64-value slots per K step (fewer where shared memory needs: gate/up stages two weights); the
  // next step's words in registers during the products (prefetch 1).
  const std::string ip = route_pack::kI8Tune;
  i8.tunables = {{ip + "thread_rows", 8}, {ip + "thread_cols", 32}, {ip + "slots", 1}, {ip + "prefetch", 1}};
  r.add_variant(std::move(i8));
}

}  // namespace hl::gpu
