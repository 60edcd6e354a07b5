// moe_experts = vulkan:route_pack: each stage against a host computation of the same quantity (block counts,
// offsets and tile list, packed rows, per-entry expert outputs, the weighted scatter), the whole variant
// against the reference, and run-to-run determinism.
// Tolerances:
// - counts, offsets, tiles, packed rows: integers, exact.
// - per-entry expert outputs and the whole variant: f32 dot products over H (<= 256 terms) and F (<= 128)
//   accumulated sequentially along K, against Eigen's blocked order (and, for the whole variant, slot order
//   against the reference's ascending-expert order): rounding ~ sqrt(n) * 6e-8 per dot, far less in relative
//   L2 over a whole output (errors are independent): 2e-6, as for vulkan:per_token.
// - the scatter alone: k products summed in the same order as the host, perhaps fused (fma): 1e-6.
// - quantized experts: blocks decoded bit-exactly (quant_blocks.glsl) into the same f32 GEMM, against the
//   host's dequantized weights: the f32 bound, 2e-6.
// - vulkan:route_pack_coopmat (cooperative matrices): x, hmid and the weights (f32, or decoded blocks) are rounded
//   to f16 (unit roundoff u = 2^-11) and the products accumulated in f32. Each rounding is a relative error of
//   RMS ~u/sqrt(3) = 2.8e-4; a product carries two (4e-4), independent over the K terms, so a dot of random
//   terms is off by ~4e-4 of its own size (whatever K); SwiGLU combines two such dots (~6e-4), the down
//   GEMM adds its own roundings of hmid and weights: ~7e-4 relative L2 by this estimate; a numpy model of
//   exactly these roundings (f64 oracle) gives 4.9e-4 to 5.3e-4 for H x F from 37 x 19 to 2048 x 512.
//   Tolerance 3e-3: ~6x margin, while a wrong layout, stride or a missed barrier gives errors of order 1.
#include "ops/moe_experts/route_pack.h"

#include <memory>
#include <tuple>
#include "model/quant_source.h"
#include "ops/matmul/qgemm_i8.h"
#include "ops/moe_experts/expert_mlp.h"
#include "variant_check.h"

using namespace hl;
using namespace hl::test;
using quant::Type;

namespace {

// Routes of T tokens over E experts, k distinct per token: expert 0 in every route, expert E - 1 in none.
IMat make_routes(std::mt19937_64& g, int T, int E, int k) {
  IMat r(T, k);
  for (int t = 0; t < T; ++t) {
    std::vector<int32_t> e(static_cast<size_t>(E - 2));
    std::iota(e.begin(), e.end(), 1);
    std::shuffle(e.begin(), e.end(), g);
    e.resize(size_t(k));
    e[size_t(g() % uint64_t(k))] = 0;
    for (int j = 0; j < k; ++j) r(t, j) = e[size_t(j)];
  }
  return r;
}

// Positive router weights, each row summing to 1.
Mat<float> make_weights(std::mt19937_64& g, int T, int k) {
  Mat<float> w = randn(g, T, k).cwiseAbs();
  return (w.array().colwise() / w.rowwise().sum().array()).matrix();
}

std::vector<int32_t> row(const Tensor& t) {
  const IMat& m = t.i32();
  return {m.data(), m.data() + m.size()};
}

struct Shape {
  int E, k, H, F;
};
constexpr Shape kShapes[] = {{8, 2, 128, 48}, {32, 8, 256, 128}};
constexpr int kTokens[] = {1, 5, 64, 200};

// Expert weights gate, up [E*F, H], down [E*H, F] of types (gate, up, down); F32: host f32 sources.
std::map<std::string, WeightRef> expert_weights(std::mt19937_64& g, const Shape& s, std::array<Type, 3> types) {
  auto w = [&](const char* name, int64_t r, int64_t c, Type t) {
    Mat<float> m = randn(g, r, c, 1.0 / std::sqrt(double(c)));
    return t == Type::F32 ? weight(name, std::move(m)) : whole(quantized_source(name, m, t));
  };
  return {{"gate", w("gate", s.E * s.F, s.H, types[0])}, {"up", w("up", s.E * s.F, s.H, types[1])},
          {"down", w("down", s.E * s.H, s.F, types[2])}};
}

gpu::OpArgs experts_args(std::mt19937_64& g, const Shape& s, int T, std::array<Type, 3> types = {Type::F32, Type::F32, Type::F32}) {
  return {{{"x", Tensor::from(randn(g, T, s.H))},
           {"expert", Tensor::from_i32(make_routes(g, T, s.E, s.k))},
           {"weight", Tensor::from(make_weights(g, T, s.k))}},
          expert_weights(g, s, types),
          {{"n_experts", s.E}}};
}

// (gate, up, down) types of the quantized cases: the GGUF mix (q4_K, q6_K down), mixed gate/up types, f32
// down beside quantized gate/up, and q8_0 rows that end in a partial 128-value slice.
struct QuantCase {
  std::array<Type, 3> types;
  Shape shape;
};
const QuantCase kQuantCases[] = {{{Type::Q4_K, Type::Q4_K, Type::Q6_K}, {8, 2, 256, 256}},
                                 {{Type::Q5_K, Type::Q8_0, Type::F16}, {8, 2, 256, 256}},
                                 {{Type::Q4_K, Type::Q6_K, Type::F32}, {6, 3, 256, 40}},
                                 {{Type::Q8_0, Type::Q8_0, Type::Q8_0}, {5, 2, 192, 128}}};

constexpr double kCoopmatTol = gpu::route_pack::kCoopmatTolerance;  // f16 inputs, f32 accumulation (derivation above)

// Returns the device with cooperative matrices (variant_check.h), or null after a WARN naming why the coopmat
// test is skipped.
gpu::Device* coopmat_or_skip() { return hl::test::coopmat_or_skip("vulkan:route_pack_coopmat"); }

// Relative L2 of vulkan:route_pack_coopmat's (or `variant`'s) y against the reference on d (REQUIREs a finite, non-zero
// output).
double coopmat_vs_reference(gpu::Device& d, const gpu::OpArgs& args, const char* variant = "vulkan:route_pack_coopmat") {
  const auto& reg = gpu::Registry::get();
  gpu::WeightStore ws(&d);
  gpu::VariantCtx ctx{&d, &ws};
  gpu::OpArgs got = args, want = args;
  for (auto& [n, t] : got.t) t = t.clone();
  for (auto& [n, t] : want.t) t = t.clone();
  reg.variant("moe_experts", variant).run(ctx, got);
  reg.variant("moe_experts", "reference").run(ctx, want);
  const Mat<float> g = got.t.at("y").f32(), w = want.t.at("y").f32();
  REQUIRE(w.cwiseAbs().maxCoeff() > 0);
  REQUIRE(g.allFinite());
  if (&d == &device()) require_no_validation_messages();
  return rel_l2(g, w);
}

// Stage 4's cases: f32 experts (the shapes above and an odd one), then the quantized ones.
std::vector<QuantCase> gemm_cases() {
  std::vector<QuantCase> cases;
  for (Shape s : {kShapes[0], kShapes[1], Shape{5, 3, 37, 19}}) cases.push_back({{Type::F32, Type::F32, Type::F32}, s});
  cases.insert(cases.end(), std::begin(kQuantCases), std::end(kQuantCases));
  return cases;
}

// Each entry's expert output on the host [T * k, H], from the host's values of the weights (dequantized where
// quantized), entries i = t * k + j.
Mat<float> entry_outputs(gpu::WeightStore& ws, const std::map<std::string, WeightRef>& weights, const Mat<float>& x,
                         const IMat& r, const Shape& s) {
  const Mat<float> gate = ws.host(weights.at("gate")).f32(), up = ws.host(weights.at("up")).f32(),
                   down = ws.host(weights.at("down")).f32();
  Mat<float> want(r.size(), s.H);
  for (int64_t t = 0; t < r.rows(); ++t)
    for (int j = 0; j < s.k; ++j) {
      const int e = r(t, j);
      const ref::ExpertMats<float> m{gate.middleRows(e * s.F, s.F), up.middleRows(e * s.F, s.F),
                                     down.middleRows(e * s.H, s.H)};
      want.row(t * s.k + j) = ref::expert_mlp<float>(x.row(t), m);
    }
  return want;
}

// Small cooperative-matrix tiles (one subgroup per workgroup: 32 rows by 32 columns of gate and up, 64 of down):
// more column tiles, partial ones everywhere.
const std::map<std::string, uint32_t> kSmallCmTiles = {{"moe_experts.route_pack_coopmat.warp_rows", 1},
                                                       {"moe_experts.route_pack_coopmat.warp_cols", 1}};

// Relative L2 of the quantized grouped GEMM's per-entry outputs (stage 4; cooperative matrices, or their scalar
// form) against the host, on d, for fresh routes, x and weights of case c with T tokens (REQUIREs finite outputs).
double coopmat_gemm_error(gpu::Device& d, std::mt19937_64& g, const QuantCase& c, int T,
                          gpu::route_pack::Gemm kind = gpu::route_pack::Gemm::Coopmat) {
  const auto& [types, s] = c;
  INFO("E " << s.E << ", k " << s.k << ", H " << s.H << ", F " << s.F << ", T " << T << ", types "
            << quant::type_name(types[0]) << "/" << quant::type_name(types[1]) << "/" << quant::type_name(types[2]));
  const IMat r = make_routes(g, T, s.E, s.k);
  const Mat<float> x = randn(g, T, s.H);
  const auto weights = expert_weights(g, s, types);
  gpu::WeightStore ws(&d);
  gpu::VariantCtx ctx{&d, &ws};
  const Mat<float> want = entry_outputs(ws, weights, x, r, s);
  const auto p = gpu::route_pack::pack(d, Tensor::from_i32(r), s.E, gpu::route_pack::tile_rows(d, kind));
  const Mat<float> got = gpu::route_pack::grouped_swiglu(ctx, p, Tensor::from(x), weights.at("gate"), weights.at("up"),
                                                         weights.at("down"), kind)
                             .f32();
  REQUIRE(got.allFinite());
  if (&d == &device()) require_no_validation_messages();
  const double e = rel_l2(got, want);
  WARN((kind == gpu::route_pack::Gemm::Qgemm ? "scalar qgemm" : kind == gpu::route_pack::Gemm::I8 ? "i8" : "coopmat") << " grouped GEMM rel L2 " << e << " (E " << s.E << ", H " << s.H << ", F " << s.F << ", T " << T << ", "
                                      << quant::type_name(types[0]) << "/" << quant::type_name(types[2]) << ")");
  return e;
}

}  // namespace

TEST_CASE("vk route_pack: stages 2-3, block counts, offsets, tile list, packed rows", "[vk][ops]") {
  std::mt19937_64 g(21);
  for (uint32_t block : {32u, 256u})
    for (uint32_t tile_rows : {16u, 3u})
      for (const Shape& s : kShapes)
        for (int T : kTokens) {
          const vk::ScopedTuning tune(device().ctx().profile(),
                                      {{"moe_experts.route_pack.block", block}, {"moe_experts.route_pack.rows", tile_rows}});
          INFO("E " << s.E << ", k " << s.k << ", T " << T << ", block " << block << ", tile rows " << tile_rows);
          const IMat r = make_routes(g, T, s.E, s.k);
          const Tensor ex = Tensor::from_i32(r);
          // Host: entries i = t * k + j in blocks of `block`, grouped by expert in entry order.
          const int64_t N = r.size(), blocks = (N + block - 1) / block;
          IMat want_counts = IMat::Zero(blocks, s.E);
          std::vector<std::vector<int32_t>> by_expert(size_t(s.E));
          for (int64_t i = 0; i < N; ++i) {
            want_counts(i / block, r.data()[i])++;
            by_expert[size_t(r.data()[i])].push_back(int32_t(i));
          }
          std::vector<int32_t> want_off{0}, want_tiles{0}, want_rows;
          for (auto& v : by_expert) {
            want_rows.insert(want_rows.end(), v.begin(), v.end());
            want_off.push_back(int32_t(want_rows.size()));
            want_tiles.push_back(want_tiles.back() + int32_t((v.size() + tile_rows - 1) / tile_rows));
          }
          const Tensor counts = gpu::route_pack::block_counts(device(), ex, s.E);
          CHECK(counts.i32() == want_counts);
          for (uint32_t plan : {0u, 1u}) {  // three dispatches, or route_plan.comp's one workgroup
            const vk::ScopedTuning form(device().ctx().profile(), {{"moe_experts.route_pack.plan", plan}});
            INFO("plan " << plan);
            const auto p = gpu::route_pack::pack(device(), ex, s.E);
            CHECK(row(p.offsets) == want_off);
            CHECK(row(p.tiles) == want_tiles);
            CHECK(row(p.rows) == want_rows);
          }
          require_no_validation_messages();
        }
}

TEST_CASE("vk route_pack: one-workgroup packing at the model's routes, small chunks and workgroups", "[vk][ops]") {
  // route_plan.comp against the host's grouping: 256 experts, top-8, T = 512 (4096 entries, several placement passes),
  // and skewed routes (a few experts take most entries: long runs inside one pass's masks).
  std::mt19937_64 g(23);
  for (const bool skewed : {false, true})
    for (const auto& [wg, chunk] : std::vector<std::pair<uint32_t, uint32_t>>{{1024, 1024}, {64, 96}, {33, 32}}) {
      const vk::ScopedTuning tune(device().ctx().profile(), {{"moe_experts.route_pack.plan", 1},
                                                              {"moe_experts.route_pack.plan_wg", wg},
                                                              {"moe_experts.route_pack.plan_chunk", chunk},
                                                              {"moe_experts.route_pack.rows", 32}});
      INFO("wg " << wg << ", chunk " << chunk << ", skewed " << skewed);
      const int E = 256, k = 8, T = 512;
      IMat r = make_routes(g, T, E, k);
      if (skewed)
        for (int t = 0; t < T; ++t)
          for (int j = 0; j < 4; ++j) r(t, j) = (r(t, j) % 4) * 64 + j;  // slots 0-3 on 16 experts
      std::vector<std::vector<int32_t>> by_expert(E);
      for (int64_t i = 0; i < r.size(); ++i) by_expert[size_t(r.data()[i])].push_back(int32_t(i));
      std::vector<int32_t> want_off{0}, want_tiles{0}, want_rows;
      for (auto& v : by_expert) {
        want_rows.insert(want_rows.end(), v.begin(), v.end());
        want_off.push_back(int32_t(want_rows.size()));
        want_tiles.push_back(want_tiles.back() + int32_t((v.size() + 31) / 32));
      }
      const auto p = gpu::route_pack::pack(device(), Tensor::from_i32(r), E);
      CHECK(row(p.offsets) == want_off);
      CHECK(row(p.tiles) == want_tiles);
      CHECK(row(p.rows) == want_rows);
      require_no_validation_messages();
    }
  // Tunings it cannot take: a one-line error, no dispatch.
  const Tensor ex = Tensor::from_i32(make_routes(g, 4, 8, 2));
  for (const auto& [key, value] : std::vector<std::pair<std::string, uint32_t>>{{"moe_experts.route_pack.plan_chunk", 48},
                                                                                {"moe_experts.route_pack.plan_chunk", 0},
                                                                                {"moe_experts.route_pack.plan_wg", 0}}) {
    const vk::ScopedTuning bad(device().ctx().profile(), {{"moe_experts.route_pack.plan", 1}, {key, value}});
    INFO(key << " = " << value);
    CHECK_THROWS_WITH(gpu::route_pack::pack(device(), ex, 8), Catch::Contains("plan_wg") && Catch::Contains("multiple of 32"));
  }
}

TEST_CASE("vk route_pack: stages 4-5, grouped GEMM per entry and the weighted scatter", "[vk][ops]") {
  std::mt19937_64 g(22);
  // The default tiles, and small odd ones (partial tiles everywhere, K not a multiple of the depth; T = 5
  // and the GGUF mix only, for lavapipe's time). Quantized T = 64: in the whole-variant test below.
  const std::map<std::string, uint32_t> odd = {{"moe_experts.route_pack.rows", 4},
                                               {"moe_experts.route_pack.cols", 8},
                                               {"moe_experts.route_pack.depth", 8},
                                               {"moe_experts.route_pack.thread_rows", 2},
                                               {"moe_experts.route_pack.thread_cols", 1},
                                               {"moe_experts.route_pack.q_thread_rows", 2},
                                               {"moe_experts.route_pack.q_cols", 8},
                                               {"moe_experts.route_pack.q_thread_cols", 2}};
  const std::vector<QuantCase> cases = gemm_cases();
  for (const auto* tiles : {static_cast<const std::map<std::string, uint32_t>*>(nullptr), &odd})
    for (const auto& [types, s] : cases)
      for (int T : {1, 5, 64}) {
        const bool f32 = types[0] == Type::F32;
        if ((tiles && (T != 5 || (!f32 && types != kQuantCases[0].types))) || (!f32 && T == 64)) continue;
        const vk::ScopedTuning tune(device().ctx().profile(), tiles ? *tiles : std::map<std::string, uint32_t>{});
        INFO("E " << s.E << ", k " << s.k << ", H " << s.H << ", F " << s.F << ", T " << T << ", types "
                  << quant::type_name(types[0]) << "/" << quant::type_name(types[1]) << "/" << quant::type_name(types[2])
                  << (tiles ? ", odd tiles" : ""));
        const IMat r = make_routes(g, T, s.E, s.k);
        const Mat<float> x = randn(g, T, s.H), w = make_weights(g, T, s.k);
        const auto weights = expert_weights(g, s, types);
        gpu::WeightStore ws(&device());
        gpu::VariantCtx ctx{&device(), &ws};
        const Mat<float> want = entry_outputs(ws, weights, x, r, s);
        const auto p = gpu::route_pack::pack(device(), Tensor::from_i32(r), s.E);
        const Tensor ye = gpu::route_pack::grouped_swiglu(ctx, p, Tensor::from(x), weights.at("gate"), weights.at("up"),
                                                          weights.at("down"));
        INFO("grouped GEMM rel L2 " << rel_l2(ye.f32(), want));
        CHECK(rel_l2(ye.f32(), want) <= 2e-6);
        Mat<float> want_y = Mat<float>::Zero(T, s.H);
        for (int t = 0; t < T; ++t)
          for (int j = 0; j < s.k; ++j) want_y.row(t) += w(t, j) * want.row(t * s.k + j);
        const Tensor y = gpu::route_pack::scatter(device(), Tensor::from(want), Tensor::from(w));
        CHECK(rel_l2(y.f32(), want_y) <= 1e-6);
        for (uint32_t v : {0u, 1u}) {  // four outputs per invocation (H a multiple of 4) or one: the same sums, bit for bit
          const vk::ScopedTuning form(device().ctx().profile(), {{"moe_experts.route_pack.scatter_vec4", v}});
          CHECK(gpu::route_pack::scatter(device(), Tensor::from(want), Tensor::from(w)).f32() == y.f32());
        }
        require_no_validation_messages();
      }
}

TEST_CASE("vk route_pack: the whole variant against the reference, and deterministic", "[vk][ops]") {
  std::mt19937_64 g(23);
  // min_tokens 1: decode (T = 1) also takes the route-packed path here (the default hands it to per_token).
  const vk::ScopedTuning tune(device().ctx().profile(), {{"moe_experts.route_pack.min_tokens", 1}});
  for (const Shape& s : kShapes)
    for (int T : kTokens) {
      INFO("E " << s.E << ", k " << s.k << ", H " << s.H << ", F " << s.F << ", T " << T);
      const gpu::OpArgs a = experts_args(g, s, T);
      const auto e = compare_with_reference("moe_experts", "vulkan:route_pack", a).at("y");
      INFO("rel L2 " << e.rel_l2 << ", max abs " << e.max_abs);
      CHECK(e.finite);
      CHECK(e.rel_l2 <= 2e-6);
      // The same inputs twice: bit-identical outputs.
      gpu::WeightStore ws(&device());
      gpu::VariantCtx ctx{&device(), &ws};
      Mat<float> first;
      for (int run = 0; run < 2; ++run) {
        gpu::OpArgs b = a;
        gpu::Registry::get().variant("moe_experts", "vulkan:route_pack").run(ctx, b);
        if (run == 0) first = b.t.at("y").f32();
        else CHECK(std::memcmp(first.data(), b.t.at("y").f32().data(), size_t(first.size()) * 4) == 0);
      }
    }
}

TEST_CASE("vk route_pack: quantized experts, the whole variant against the reference", "[vk][ops][quant]") {
  std::mt19937_64 g(24);
  // T = 64 reaches route_pack.dequant_tokens (64): the stacks dequantized on the device (dequant_rows.comp), then
  // the f32 GEMM, where all three are raw blocks; with dequant_tokens 0 the tiles decode the blocks themselves.
  for (uint32_t dequant : {64u, 0u}) {
    const vk::ScopedTuning tune(device().ctx().profile(), {{"moe_experts.route_pack.dequant_tokens", dequant}});
    for (const auto& [types, s] : kQuantCases)
      for (int T : {5, 64}) {
        if (dequant == 0 && T != 64) continue;
        INFO(quant::type_name(types[0]) << "/" << quant::type_name(types[1]) << "/" << quant::type_name(types[2]) << ", E "
                                        << s.E << ", k " << s.k << ", H " << s.H << ", F " << s.F << ", T " << T
                                        << ", dequant_tokens " << dequant);
        require_close("moe_experts", "vulkan:route_pack", experts_args(g, s, T, types), 2e-6);
      }
  }
}

// Two layers' experts through one weight store, recorded back to back: the dequantized stacks are the store's
// scratch, reused by the second layer while the first layer's GEMMs may still read them (the device orders the
// reuse). Each output equals that layer run alone, with a store of its own, bit for bit.
TEST_CASE("vk route_pack: the dequantized stacks are reused from layer to layer", "[vk][ops][quant]") {
  std::mt19937_64 g(27);
  const vk::ScopedTuning tune(device().ctx().profile(), {{"moe_experts.route_pack.dequant_tokens", 64u}});
  const auto& [types, s] = kQuantCases[0];
  const gpu::OpArgs l1 = experts_args(g, s, 64, types), l2 = experts_args(g, s, 64, types);
  const auto& v = gpu::Registry::get().variant("moe_experts", "vulkan:route_pack");
  auto alone = [&](const gpu::OpArgs& a) {
    gpu::WeightStore ws(&device());
    gpu::VariantCtx ctx{&device(), &ws};
    gpu::OpArgs b = a;
    v.run(ctx, b);
    return b.t.at("y").f32();
  };
  const Mat<float> y1 = alone(l1), y2 = alone(l2);
  gpu::WeightStore ws(&device());
  gpu::VariantCtx ctx{&device(), &ws};
  gpu::OpArgs a1 = l1, a2 = l2;
  v.run(ctx, a1);
  v.run(ctx, a2);  // no sync in between: the same scratch, rewritten
  REQUIRE(std::memcmp(y1.data(), a1.t.at("y").f32().data(), size_t(y1.size()) * 4) == 0);
  REQUIRE(std::memcmp(y2.data(), a2.t.at("y").f32().data(), size_t(y2.size()) * 4) == 0);
  CHECK(std::memcmp(y1.data(), y2.data(), size_t(y1.size()) * 4) != 0);  // two different layers
}

// The cooperative-matrix build: the same cases where the device has cooperative matrices (else a WARN, and
// only the refusal below runs).
TEST_CASE("vk route_pack_coopmat: refused with a clear error where the device has no cooperative matrices", "[vk][ops]") {
  const std::string why = gpu::route_pack::coopmat_unavailable(device());
  if (why.empty()) return;  // nothing to refuse here
  gpu::WeightStore ws(&device());
  gpu::VariantCtx ctx{&device(), &ws};
  std::mt19937_64 g(25);
  gpu::OpArgs a = experts_args(g, kShapes[0], 5);
  std::string msg;
  try {
    gpu::Registry::get().variant("moe_experts", "vulkan:route_pack_coopmat").run(ctx, a);
  } catch (const std::exception& e) {
    msg = e.what();
  }
  CHECK_THAT(msg, Catch::Contains("route_pack_coopmat cannot run") && Catch::Contains(why));
  CHECK(gpu::Registry::get().availability(gpu::Registry::get().variant("moe_experts", "vulkan:route_pack_coopmat"),
                                          &device()) == why);
}

TEST_CASE("vk route_pack_coopmat: stage 4, grouped GEMM per entry on cooperative matrices", "[vk][ops][coopmat]") {
  gpu::Device* d = coopmat_or_skip();
  if (!d) return;
  std::mt19937_64 g(26);
  // The default tiles, and the smallest legal ones for T = 5.
  for (const auto* tiles : {static_cast<const std::map<std::string, uint32_t>*>(nullptr), &kSmallCmTiles})
    for (const auto& c : gemm_cases())
      for (int T : {1, 5, 64}) {
        if ((tiles && T != 5) || c.shape.H % 64 || c.shape.F % 64) continue;  // whole steps of two units only
        const vk::ScopedTuning tune(d->ctx().profile(), tiles ? *tiles : std::map<std::string, uint32_t>{});
        INFO((tiles ? "small tiles" : "default tiles"));
        const double e = coopmat_gemm_error(*d, g, c, T);
        CHECK(e <= kCoopmatTol);
      }
}

// The same kernel with emulated matrices (qgemm_cm_emul.comp: A and B read in place from the shared tiles, each
// invocation holding its share of the accumulators) on any device with f16 arithmetic, lavapipe included: checks
// the tiling, strides, layouts and barriers of qgemm_cm.glsl in CI, with the same f16 roundings (so the same
// tolerance). Not the hardware path.
TEST_CASE("vk route_pack_coopmat: emulated matrices, stage 4 and the whole variant", "[vk][ops]") {
  if (!device().info().shader_float16) {
    WARN("SKIPPED: no shaderFloat16 on " << device().info().name);
    return;
  }
  std::mt19937_64 g(28);
  const vk::ScopedTuning emulate(device().ctx().profile(),
                                 {{"moe_experts.route_pack_coopmat.cm_emulate", 1}, {"moe_experts.route_pack.min_tokens", 1}});
  std::vector<QuantCase> cases = gemm_cases();
  cases.push_back({{Type::Q4_K, Type::Q4_K, Type::Q4_K}, {8, 2, 256, 256}});  // q4_K down: its runs prefetched too
  cases.push_back({{Type::Q4_K, Type::Q4_K, Type::Q5_K}, {8, 2, 256, 256}});  // q5_K down: raw words prefetched (7)
  // (case, small tiles): f32, the GGUF mix (q4_K/q6_K), q8_0 everywhere. The GEMM reads whole steps of two 32-value units (H
  // and F multiples of 64: every model's), so not the odd f32 shapes, and gate and up in one pass need one order of
  // values within a unit (every model's gate and up share a type): q5_K gate beside a q8_0 up is refused, clearly.
  // Prefetch 0 and 1: nothing held in registers across the products, and A alone (the weights loaded when staged).
  // Two and four units per step: each weight row's run of units prefetched behind one block head. Prefetch 7: the
  // q6_K and q5_K down units' raw words too; 15 and 11: the loads issued before the staging barrier.
  const std::tuple<size_t, bool, uint32_t, uint32_t> runs[] = {{1, true, 3, 1},  {1, false, 3, 1}, {3, true, 3, 1},
                                                               {6, true, 3, 1},  {1, false, 0, 1}, {1, false, 1, 1},
                                                               {3, false, 3, 2}, {1, true, 3, 4},  {3, false, 3, 4},
                                                               {7, false, 3, 1}, {7, false, 3, 4}, {3, true, 7, 1},
                                                               {8, false, 7, 1}, {3, true, 15, 1}, {8, false, 15, 1},
                                                               {1, false, 11, 2}};
  for (const auto& [i, small, prefetch, units] : runs) {
    std::map<std::string, uint32_t> t = small ? kSmallCmTiles : std::map<std::string, uint32_t>{};
    t["moe_experts.route_pack_coopmat.prefetch"] = prefetch;
    t["moe_experts.route_pack_coopmat.k_units"] = units;
    t["moe_experts.route_pack_coopmat.half_h"] = i % 2;  // h between the passes in f16, or in f32
    const vk::ScopedTuning tune(device().ctx().profile(), t);
    INFO((small ? "small tiles" : "default tiles") << ", prefetch " << prefetch << ", k_units " << units);
    const double e = coopmat_gemm_error(device(), g, cases[i], 5);
    CHECK(e <= kCoopmatTol);
  }
  // Chunk columns (columns: 1 down, 2 gate and up, 3 both): the K-quant stacks read from WeightStore::device_chunk_columns
  // on every staging path: Q4_K runs prefetched (prefetch 3, 15; one and two units), raw Q6_K / Q5_K words prefetched
  // (7), each unit loaded when staged (prefetch 0, and Q5_K gate/up); rows of two blocks (K 512), a partial column tile
  // (gate/up N 320 in tiles of 128 columns), several experts per group offset.
  cases.push_back({{Type::Q4_K, Type::Q4_K, Type::Q6_K}, {6, 2, 512, 256}});  // 9: gate/up two blocks per row
  cases.push_back({{Type::Q4_K, Type::Q4_K, Type::F32}, {6, 3, 256, 320}});   // 10: gate/up N 320 (4 x 4 tiles: 2.5), down f32
  cases.push_back({{Type::Q5_K, Type::Q5_K, Type::Q5_K}, {4, 2, 256, 512}});  // 11: q5_K, down two blocks per row
  const std::tuple<size_t, bool, uint32_t, uint32_t, uint32_t> col_runs[] = {
      {3, false, 7, 1, 3}, {9, true, 15, 1, 3}, {7, false, 0, 1, 3}, {10, false, 3, 2, 2},
      {11, false, 7, 1, 3}, {11, true, 3, 2, 1}, {9, false, 15, 2, 2}, {8, true, 7, 1, 1}};
  for (const auto& [i, small, prefetch, units, cols] : col_runs) {
    std::map<std::string, uint32_t> t = small ? kSmallCmTiles : std::map<std::string, uint32_t>{};
    t["moe_experts.route_pack_coopmat.prefetch"] = prefetch;
    t["moe_experts.route_pack_coopmat.k_units"] = units;
    t["moe_experts.route_pack_coopmat.columns"] = cols;
    if (i == 10) t["moe_experts.route_pack_coopmat.warp_cols"] = 4;
    const vk::ScopedTuning tune(device().ctx().profile(), t);
    INFO("columns " << cols << ", " << (small ? "small tiles" : "default tiles") << ", prefetch " << prefetch << ", k_units "
                    << units << ", case " << i);
    CHECK(coopmat_gemm_error(device(), g, cases[i], 9) <= kCoopmatTol);
  }
  // The thin kernels (16 rows per subgroup), 2 x 2 subgroups: the same 32-row tiles; the GGUF mix, q8_0, and f32 with
  // a small tile (16 rows, one subgroup row).
  for (const auto& [i, rows, prefetch] : {std::tuple{size_t(3), 2u, 3u}, {size_t(6), 2u, 3u}, {size_t(1), 1u, 0u}}) {
    const vk::ScopedTuning tune(device().ctx().profile(), {{"moe_experts.route_pack_coopmat.sub_rows", 16},
                                                           {"moe_experts.route_pack_coopmat.warp_rows", rows},
                                                           {"moe_experts.route_pack_coopmat.prefetch", prefetch}});
    INFO("sub_rows 16, warp_rows " << rows << ", prefetch " << prefetch << ", case " << i);
    CHECK(coopmat_gemm_error(device(), g, cases[i], 5) <= kCoopmatTol);
  }
  // gate/up's K in parts (split_k), each part's partial sums in its slice, added and SwiGLU applied by
  // route_swiglu.comp: 2 parts, 3 (uneven: 3 + 3 + 2 steps of 8) and 4, more than the steps allow (capped at 2 steps
  // each), h in f16 and in f32, small and default tiles; the GGUF mix, q8_0 (6 steps) and f32.
  for (const auto& [i, ks, half, small] : {std::tuple{size_t(3), 2u, 1u, false}, {size_t(3), 3u, 0u, true},
                                            {size_t(6), 4u, 1u, true}, {size_t(1), 2u, 0u, false}, {size_t(1), 9u, 1u, true}}) {
    std::map<std::string, uint32_t> t = small ? kSmallCmTiles : std::map<std::string, uint32_t>{};
    t["moe_experts.route_pack_coopmat.split_k"] = ks;
    t["moe_experts.route_pack_coopmat.half_h"] = half;
    const vk::ScopedTuning tune(device().ctx().profile(), t);
    INFO("split_k " << ks << ", half_h " << half << (small ? ", small tiles" : "") << ", case " << i);
    CHECK(coopmat_gemm_error(device(), g, cases[i], 40) <= kCoopmatTol);
  }
  {
    const vk::ScopedTuning tune(device().ctx().profile(), {{"moe_experts.route_pack_coopmat.sub_rows", 24}});
    CHECK_THROWS_WITH(coopmat_gemm_error(device(), g, cases[3], 5), Catch::Contains("not 16 or 32"));
  }
  CHECK_THROWS_WITH(coopmat_gemm_error(device(), g, cases[4], 5), Catch::Contains("order the values of a unit differently"));
  const double e = coopmat_vs_reference(device(), experts_args(g, kShapes[1], 16));
  INFO("whole variant, E 32, T 16: rel L2 " << e);
  CHECK(e <= kCoopmatTol);
  const vk::ScopedTuning split(device().ctx().profile(), {{"moe_experts.route_pack_coopmat.split_k", 2}});
  const double es = coopmat_vs_reference(device(), experts_args(g, kShapes[1], 16));
  INFO("whole variant, split_k 2: rel L2 " << es);
  CHECK(es <= kCoopmatTol);
}

// The same kernel on scalar FMAs (qgemm_gate_sc.comp / qgemm_down_sc.comp: A in f32, the weights' units in f16 tiles,
// each invocation 4 x 4 outputs): the real path of devices without cooperative matrices, run here on lavapipe. Only
// the weights are rounded to f16, so the coopmat tolerance bounds it. Default and small tiles (8 x 32: several
// column tiles, partial row tiles), prefetch 0 and 1, the refused mixed unit order, and the whole variant.
TEST_CASE("vk route_pack_qgemm: stage 4 on scalar FMAs, and the whole variant", "[vk][ops]") {
  if (const std::string why = gpu::route_pack::qgemm_unavailable(device()); !why.empty()) {
    WARN("SKIPPED: " << why);
    return;
  }
  std::mt19937_64 g(29);
  const std::vector<QuantCase> cases = gemm_cases();
  const std::string p = gpu::route_pack::kQgemmTune;
  const std::tuple<size_t, bool, uint32_t, int> runs[] = {{1, true, 3, 5}, {1, false, 3, 64}, {3, true, 3, 5}, {6, true, 3, 5},
                                                          {1, false, 0, 5}, {1, true, 1, 64}, {0, false, 3, 5}};
  for (const auto& [i, small, prefetch, T] : runs) {
    if (cases[i].shape.H % 64 || cases[i].shape.F % 64) continue;
    std::map<std::string, uint32_t> t{{p + "prefetch", prefetch}};
    if (small) t.insert({{p + "thread_rows", 2}, {p + "thread_cols", 8}});
    const vk::ScopedTuning tune(device().ctx().profile(), t);
    INFO((small ? "small tiles" : "default tiles") << ", prefetch " << prefetch);
    CHECK(coopmat_gemm_error(device(), g, cases[i], T, gpu::route_pack::Gemm::Qgemm) <= kCoopmatTol);
  }
  CHECK_THROWS_WITH(coopmat_gemm_error(device(), g, cases[4], 5, gpu::route_pack::Gemm::Qgemm),
                    Catch::Contains("order the values of a unit differently"));
  const vk::ScopedTuning tune(device().ctx().profile(), {{"moe_experts.route_pack.min_tokens", 1}});
  const double e = coopmat_vs_reference(device(), experts_args(g, kQuantCases[0].shape, 16, kQuantCases[0].types),
                                        "vulkan:route_pack_qgemm");
  INFO("whole variant, q4_K/q6_K, E 8, T 16: rel L2 " << e);
  CHECK(e > 1e-7);  // the weights' f16 rounding is real
  CHECK(e <= kCoopmatTol);
}

// The GEMM on 8-bit integer dot products (qgemm_i8_gate.comp / qgemm_i8_down.comp): x, then h, rounded to 8 bits per
// 32 values (kI8Tolerance, derived in route_pack.h), and checked really rounded. The GGUF mix (q4_K gate/up, q6_K down) at small and real widths (H 2048, F 512, 8 of 16 experts per
// token), q5_K/q4_K, q8_0 throughout; default and small tiles (several column tiles, partial row tiles), 1 to 4 slots
// per step, prefetch (and skipped empty rows) on and off; mixed gate/up types refused; the whole variant, and route_pack's pick of it where asked.
TEST_CASE("vk route_pack_i8: stage 4 on integer dot products, and the whole variant", "[vk][ops][quant]") {
  if (const std::string why = gpu::qgemm_i8_unavailable(device()); !why.empty()) {
    WARN("SKIPPED: " << why);
    return;
  }
  std::mt19937_64 g(31);
  const double tol = gpu::route_pack::kI8Tolerance;
  const std::string p = gpu::route_pack::kI8Tune;
  const QuantCase cases[] = {{{Type::Q4_K, Type::Q4_K, Type::Q6_K}, {8, 2, 256, 256}},
                             {{Type::Q5_K, Type::Q5_K, Type::Q4_K}, {6, 3, 512, 256}},
                             {{Type::Q8_0, Type::Q8_0, Type::Q8_0}, {5, 2, 192, 128}},
                             {{Type::Q4_K, Type::Q4_K, Type::Q6_K}, {16, 8, 2048, 512}}};
  const std::tuple<size_t, uint32_t, uint32_t, uint32_t, uint32_t, int> runs[] = {
      {0, 8, 32, 2, 1, 5}, {0, 8, 32, 2, 0, 5}, {0, 2, 8, 1, 1, 64}, {1, 2, 8, 4, 0, 40}, {1, 8, 32, 2, 1, 3},
      {2, 8, 32, 2, 1, 40}, {2, 3, 5, 3, 1, 7}, {3, 8, 32, 2, 1, 64}, {3, 4, 16, 1, 0, 20}, {3, 8, 32, 1, 1, 64}};
  for (const auto& [i, rows, cols, slots, prefetch, T] : runs) {
    // skip_rows with prefetch: both ways on each case.
    const vk::ScopedTuning tune(device().ctx().profile(), {{p + "thread_rows", rows}, {p + "thread_cols", cols}, {p + "slots", slots},
                                                           {p + "prefetch", prefetch}, {p + "skip_rows", prefetch}});
    INFO("tile " << rows << " x " << cols << ", slots " << slots << ", prefetch and skip_rows " << prefetch);
    const double e = coopmat_gemm_error(device(), g, cases[i], T, gpu::route_pack::Gemm::I8);
    CHECK(e > 1e-4);
    CHECK(e <= tol);
  }
  CHECK_THROWS_WITH(coopmat_gemm_error(device(), g, kQuantCases[2], 5, gpu::route_pack::Gemm::I8),
                    Catch::Contains("gate and up of one type"));
  const vk::ScopedTuning tune(device().ctx().profile(), {{"moe_experts.route_pack.min_tokens", 1}});
  const gpu::OpArgs a = experts_args(g, kQuantCases[0].shape, 16, kQuantCases[0].types);
  const double e = coopmat_vs_reference(device(), a, "vulkan:route_pack_i8");
  INFO("whole variant, q4_K/q6_K, E 8, T 16: rel L2 " << e);
  CHECK(e > 1e-4);
  CHECK(e <= tol);
  // route_pack hands prompt chunks to it where asked (i8 1, no cooperative matrices), not f32 experts.
  const vk::ScopedTuning on(device().ctx().profile(), {{"moe_experts.route_pack.i8", 1}, {"moe_experts.route_pack.coopmat", 0}});
  CHECK(resolved("moe_experts", "vulkan:route_pack", a) == "vulkan:route_pack_i8");
  CHECK(resolved("moe_experts", "vulkan:route_pack", experts_args(g, kShapes[0], 16)) != "vulkan:route_pack_i8");
}

TEST_CASE("vk route_pack_coopmat: the whole variant against the reference, and deterministic", "[vk][ops][coopmat]") {
  gpu::Device* d = coopmat_or_skip();
  if (!d) return;
  std::mt19937_64 g(27);
  const vk::ScopedTuning tune(d->ctx().profile(), {{"moe_experts.route_pack.min_tokens", 1}});
  for (const Shape& s : kShapes)
    for (int T : kTokens) {
      if (s.H % 64 || s.F % 64) continue;  // the GEMM reads whole steps of two 32-value units
      INFO("E " << s.E << ", k " << s.k << ", H " << s.H << ", F " << s.F << ", T " << T);
      const gpu::OpArgs a = experts_args(g, s, T);
      const double e = coopmat_vs_reference(*d, a);
      INFO("rel L2 " << e);
      CHECK(e <= kCoopmatTol);
      gpu::WeightStore ws(d);
      gpu::VariantCtx ctx{d, &ws};
      Mat<float> first;
      for (int run = 0; run < 2; ++run) {
        gpu::OpArgs b = a;
        for (auto& [n, t] : b.t) t = t.clone();
        gpu::Registry::get().variant("moe_experts", "vulkan:route_pack_coopmat").run(ctx, b);
        if (run == 0) first = b.t.at("y").f32();
        else CHECK(std::memcmp(first.data(), b.t.at("y").f32().data(), size_t(first.size()) * 4) == 0);
      }
    }
  for (const auto& [types, s] : kQuantCases)
    for (int T : {5, 64}) {
      if (s.H % 64 || s.F % 64) continue;
      INFO(quant::type_name(types[0]) << "/" << quant::type_name(types[1]) << "/" << quant::type_name(types[2]) << ", E "
                                      << s.E << ", k " << s.k << ", H " << s.H << ", F " << s.F << ", T " << T);
      const double e = coopmat_vs_reference(*d, experts_args(g, s, T, types));
      INFO("rel L2 " << e);
      CHECK(e <= kCoopmatTol);
    }
}

// vulkan:route_pack_warp with emulated matrices (route_warp_*_cm_emul.comp: the same kernel, each subgroup's products
// read in place from A in memory and from its shared tile) on any device with f16 arithmetic and 16-bit storage,
// lavapipe included, against the reference: f32 experts (units staged as decoded), the GGUF mix (q4_K gate/up from
// registers, q6_K down staged), q4_K everywhere with two row tiles per expert (4 experts, about 35 rows each: 8 experts
// at T = 200, or 4 at T = 100 with four units per step, ran past the stream's 60 s timeout on two busy cores) and four
// units per step, nothing prefetched, q8_0. The tolerance is route_pack_coopmat's: A, h and the weights rounded to f16, f32 accumulation.
TEST_CASE("vk route_pack_warp: emulated matrices, the whole variant against the reference", "[vk][ops]") {
  if (!device().info().shader_float16 || !device().info().storage_buffer_16bit) {
    WARN("SKIPPED: no shaderFloat16 or 16-bit storage on " << device().info().name);
    return;
  }
  std::mt19937_64 g(31);
  const vk::ScopedTuning emulate(device().ctx().profile(),
                                 {{"moe_experts.route_pack_warp.cm_emulate", 1}, {"moe_experts.route_pack.min_tokens", 1}});
  struct Run {
    std::array<Type, 3> types;
    Shape s;
    int T;
    uint32_t units, prefetch, a_units = 8, cols = 16;
  };
  // a_units: A staged in shared memory that many units of K at a time (8: two chunks of gate/up at H 512; 16: one; at K
  // 192, 6 units, chunks of 2); cols 32: 32 columns of gate and up (64 of down) per subgroup.
  const Run runs[] = {{{Type::F32, Type::F32, Type::F32}, kShapes[1], 16, 1, 1},
                      {{Type::Q4_K, Type::Q4_K, Type::Q6_K}, {8, 2, 256, 256}, 5, 1, 1},
                      {{Type::Q4_K, Type::Q4_K, Type::Q4_K}, {4, 2, 256, 256}, 70, 2, 1},
                      {{Type::Q4_K, Type::Q4_K, Type::Q4_K}, {8, 2, 256, 256}, 5, 4, 0},
                      {{Type::Q8_0, Type::Q8_0, Type::Q8_0}, {5, 2, 192, 128}, 5, 1, 1},
                      {{Type::Q4_K, Type::Q4_K, Type::Q6_K}, {8, 2, 512, 256}, 5, 1, 1, 8},
                      {{Type::Q4_K, Type::Q4_K, Type::Q6_K}, {8, 2, 512, 256}, 5, 1, 1, 16},
                      {{Type::Q4_K, Type::Q4_K, Type::Q6_K}, {8, 2, 512, 256}, 5, 1, 1, 8, 32},
                      {{Type::Q4_K, Type::Q4_K, Type::Q4_K}, {8, 2, 256, 256}, 5, 1, 1, 8, 32}};
  for (const Run& r : runs) {
    const vk::ScopedTuning tune(device().ctx().profile(), {{"moe_experts.route_pack_warp.k_units", r.units},
                                                           {"moe_experts.route_pack_warp.prefetch", r.prefetch},
                                                           {"moe_experts.route_pack_warp.a_units", r.a_units},
                                                           {"moe_experts.route_pack_warp.cols", r.cols}});
    INFO(quant::type_name(r.types[0]) << "/" << quant::type_name(r.types[2]) << ", E " << r.s.E << ", H " << r.s.H << ", F "
                                      << r.s.F << ", T " << r.T << ", k_units " << r.units << ", prefetch " << r.prefetch
                                      << ", a_units " << r.a_units << ", cols " << r.cols);
    const double e = coopmat_vs_reference(device(), experts_args(g, r.s, r.T, r.types), "vulkan:route_pack_warp");
    WARN("route_pack_warp rel L2 " << e);
    CHECK(e <= kCoopmatTol);
  }
  for (const uint32_t bad : {0u, 4u, 12u}) {
    const vk::ScopedTuning tune(device().ctx().profile(), {{"moe_experts.route_pack_warp.a_units", bad}});
    CHECK_THROWS_WITH(coopmat_vs_reference(device(), experts_args(g, runs[1].s, 5, runs[1].types), "vulkan:route_pack_warp"),
                      Catch::Contains("a_units = " + std::to_string(bad)));
  }
}
