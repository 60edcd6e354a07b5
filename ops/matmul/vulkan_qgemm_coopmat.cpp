// matmul and lm_head on cooperative matrices: vulkan:qgemm_coopmat, prompt chunks on the quantized GEMM of
// ops/shaders/qgemm_cm.glsl (weights decoded into shared f16 tiles inside the K loop, A rounded to f16, f32
// accumulation); and that GEMM's host side (qgemm_cm.h), which moe_experts' route_pack_coopmat shares.
#include "ops/matmul/qgemm_cm.h"

#include "ops/matmul/quant_rows.h"

namespace hl::gpu {

namespace {

bool emulated(const Device& d, const std::string& prefix) { return d.tune(prefix + "cm_emulate") != 0; }

uint64_t shared_bytes(const QgemmTile& t, bool gated) {
  const uint64_t kp = t.depth + 8, g = gated ? 2 : 1;
  return 2 * kp * (t.rows + g * t.cols) + 1024ull * t.subgroups * g + 4ull * t.rows;
}

// lavapipe (Mesa 22.3) silently ends an invocation's loops after 65535 iterations: refuse what could reach that.
void check_loops(const Device& d, const QgemmTile& t, bool gated, uint64_t K) {
  if (d.info().driver_id != VK_DRIVER_ID_MESA_LLVMPIPE) return;
  const uint64_t sg = std::max(1u, d.info().min_subgroup_size), per = 256 / sg, g = gated ? 2 : 1;
  const uint64_t steps = (K + t.depth - 1) / t.depth;
  const uint64_t stage = (t.rows * t.depth / 4 + t.wg - 1) / t.wg + 8 * g * ((t.cols * t.depth / 32 + t.wg - 1) / t.wg);
  const uint64_t mma = t.depth / 16 * (t.rows / 16) * (t.cols / t.subgroups / 16) * g * (1 + per);
  const uint64_t loops = 64 + steps * (2 + stage + mma) + (t.rows / 16) * (t.cols / t.subgroups / 16) * (4 + 2 * per);
  if (loops > 60000)
    fail("qgemm_coopmat: K = {} with {} x {} tiles would run ~{} loop iterations per invocation, past lavapipe's limit of "
         "65535", K, t.rows, t.cols, loops);
}

}  // namespace

QgemmWeight qgemm_weight(VariantCtx& c, const WeightRef& w, const std::string& what) {
  return {vk_quant_rows(c, w, what), uint32_t(w.storage_type()), u32(int64_t(quant::row_bytes(w.storage_type(), w.cols)))};
}

std::string qgemm_unavailable(const Device& d, const std::string& prefix) { return coopmat_unavailable(d, emulated(d, prefix)); }

QgemmTile qgemm_tile(const Device& d, const std::string& prefix, bool gated, uint32_t type0, uint32_t type1) {
  const uint32_t q6 = uint32_t(quant::Type::Q6_K);
  QgemmTile t{d.tune(prefix + "rows"), d.tune(prefix + "cols"), d.tune(prefix + "subgroups"),
              type0 == q6 || type1 == q6 ? 128u : 64u, 0};
  if (!t.rows || !t.subgroups || t.rows % 16 || !t.cols || t.cols % (16 * t.subgroups))
    fail("qgemm_coopmat: {}rows = {} must be a multiple of 16 and {}cols = {} one of 16 x {} subgroups", prefix, t.rows,
         prefix, t.cols, t.subgroups);
  // Narrower column tiles (with fewer subgroups once each has one 16-wide strip), then fewer rows, where shared
  // memory is short (lavapipe's 32 KB).
  while (shared_bytes(t, gated) > d.info().max_shared_memory && (t.cols > 16 || t.rows > 16)) {
    if (t.cols > 16) {
      t.cols /= 2;
      if (t.cols < 16 * t.subgroups) t.subgroups /= 2;
    } else {
      t.rows /= 2;
    }
  }
  if (shared_bytes(t, gated) > d.info().max_shared_memory)
    fail("qgemm_coopmat: {} x {} tiles need {} bytes of shared memory, this device has {}", t.rows, t.cols,
         shared_bytes(t, gated), d.info().max_shared_memory);
  t.wg = t.subgroups * d.info().max_subgroup_size;
  if (t.wg > d.info().max_workgroup_invocations)
    fail("qgemm_coopmat: {} subgroups of {} exceed the device's {} invocations per workgroup", t.subgroups,
         d.info().max_subgroup_size, d.info().max_workgroup_invocations);
  return t;
}

namespace {

struct Push {
  uint32_t E, K, N, k, ncol, rb0, rb1, T;
};

const vk::Pipeline& pipeline(Device& d, const std::string& prefix, const QgemmTile& t, bool gated, uint32_t mode,
                             uint32_t type0, uint32_t type1) {
  return d.pipeline(emulated(d, prefix) ? "qgemm_cm_emul" : "qgemm_cm",
                    {{0, t.wg}, {1, t.subgroups}, {2, t.rows}, {3, t.cols}, {4, t.depth}, {5, gated ? 1u : 0u}, {6, mode},
                     {7, type0}, {8, type1}},
                    7, sizeof(Push), d.info().subgroup_size_control && d.info().compute_full_subgroups);
}

}  // namespace

Tensor qgemm_dense(Device& d, const std::string& prefix, const Tensor& x, const QgemmWeight& w, uint32_t N) {
  const QgemmTile t = qgemm_tile(d, prefix, false, w.type, w.type);
  const uint32_t T = u32(x.rows()), K = u32(x.cols());
  if (K % 32) fail("qgemm_coopmat: {} input columns, not whole 32-value units", K);  // the weights' units
  check_loops(d, t, false, K);
  const Push pc{1, K, N, 1, (N + t.cols - 1) / t.cols, w.row_bytes, w.row_bytes, T};
  Tensor y = Tensor::device(d, T, N);
  const Grid g = grid(uint64_t((T + t.rows - 1) / t.rows) * pc.ncol);
  const BufferPtr xb = x.buffer(d);
  d.dispatch(pipeline(d, prefix, t, false, 0, w.type, w.type), {xb, xb, xb, xb, w.t.buffer(d), w.t.buffer(d), y.buffer_mut(d)},
             pc, g.x, g.y);
  return y;
}

void qgemm_routed(Device& d, const std::string& prefix, const route_pack::Packed& p, bool gated, const Tensor& a,
                  const QgemmWeight& w0, const QgemmWeight& w1, Tensor& out, uint32_t K, uint32_t N) {
  QgemmTile t = qgemm_tile(d, prefix, gated, w0.type, w1.type);
  // The tile list's rows: at most what fits (fewer rows always fit the shared memory the tile was sized for).
  if (p.tile_rows % 16 || uint64_t(p.tile_rows) > t.rows)
    fail("qgemm_coopmat: routes packed in tiles of {} rows, the kernel's tiles take a multiple of 16 up to {}", p.tile_rows,
         t.rows);
  t.rows = u32(p.tile_rows);
  if (K % 32) fail("qgemm_coopmat: a reduction of {} values, not whole 32-value units", K);  // the weights' units
  check_loops(d, t, gated, K);
  const Push pc{u32(p.E), K, N, u32(p.k), (N + t.cols - 1) / t.cols, w0.row_bytes, w1.row_bytes, 0};
  // Row tiles: sum over experts of ceil(rows_e / BR) <= ceil(rows / BR) + (experts with rows).
  const uint64_t rows = p.rows.cols(), tiles = (rows + t.rows - 1) / t.rows + std::min<uint64_t>(p.E, rows);
  const Grid g = grid(tiles * pc.ncol);
  d.dispatch(pipeline(d, prefix, t, gated, 1, w0.type, w1.type),
             {a.buffer(d), p.rows.buffer(d), p.offsets.buffer(d), p.tiles.buffer(d), w0.t.buffer(d), w1.t.buffer(d),
              out.buffer_mut(d)},
             pc, g.x, g.y);
}

void register_matmul_vulkan_qgemm_coopmat(Registry& r) {
  for (std::string op : {"matmul", "lm_head"}) {
    const std::string prefix = op + ".qgemm_coopmat.";
    Variant v = vulkan_variant(
        op, "vulkan:qgemm_coopmat",
        "prompt chunks on cooperative matrices: tiles of weight rows decoded from ggml blocks (or f32/f16 rows) into shared "
        "f16, A rounded to f16, f32 accumulation; subgroups own column strips of the tile",
        [op, prefix](VariantCtx& c, OpArgs& a) {
          Device& d = c.device();
          if (auto why = qgemm_unavailable(d, prefix); !why.empty())
            fail("{} vulkan:qgemm_coopmat cannot run on {}: {}", op, d.info().name, why);
          const WeightRef& w = a.weight("w");
          const Tensor& x = a.in("x");
          if (x.cols() != w.cols) fail("{}: input has {} columns but the weight expects {}", op, x.cols(), w.cols);
          a.set("y", qgemm_dense(d, prefix, x, qgemm_weight(c, w, op + " vulkan:qgemm_coopmat"), u32(w.rows)));
        },
        false, false, [prefix](const Device& d) { return qgemm_unavailable(d, prefix); });
    v.status = "experimental";
    v.cooperative_matrices = true;
  v.precision_tolerance = kQgemmTolerance;
    v.weight_types = {quant::Type::F32, quant::Type::F16, quant::Type::Q8_0, quant::Type::Q4_K, quant::Type::Q5_K,
                      quant::Type::Q6_K};
    // A rows x output columns per tile, computing subgroups (each a strip of cols / subgroups columns over all rows);
    // 64 x 64 x 4 fits 48 KB of shared memory at depth 128 (Q6_K).
    v.tunables = {{prefix + "rows", 64}, {prefix + "cols", 64}, {prefix + "subgroups", 4}, {prefix + "cm_emulate", 0}};
    r.add_variant(std::move(v));
  }
}

}  // namespace hl::gpu
