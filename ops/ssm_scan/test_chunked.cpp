// vulkan:chunked ssm_scan (the chunk-parallel form, SPEC 5) against the reference's recurrence and its
// chunked form, and against the recurrence in f64: every chunk size; T = 1, shorter than a chunk, a
// multiple of it, one more, several chunks; d = 32 (the tiny model) and 128; 2 key / 4 value and 1 / 3
// heads in both value-head orders; Qwen3.6's 16 / 32 heads of 128; a non-zero carried state; decays from
// ~1 to e^-30; o and the final state compared. The worst errors are printed per case.
//
// Tolerances (relative L2). The kernel keeps the cumulative log decay gamma as a compensated sum (see
// ssm_chunk_gemm.comp), so it is as accurate as the f32 recurrence: both measured 0.5..2.5e-7 from the
// f64 recurrence here, their products being f32 sums of at most d_k + C <= 256 terms, and the solve's
// entries |beta k_r . k_s Gamma| < 1 for unit keys; each chunk decays and contracts the state, so
// rounding does not build up along T. Against the f64 recurrence and the f32 one: 1e-6 (room for other
// devices' exp(), ~2 ulp). Against the oracle's chunked form: 1e-5, its own error: its plain f32 cumsum
// reaches |gamma| ~ 100..300 in a chunk, ulp 1e-5..3e-5, the relative error of every Gamma entry. From
// f64 it measured (60 random cases each) up to 1.7e-6 at chunk 16, 2.4e-6 at 32, 5.1e-6 at 64 and
// 9.6e-6 at 128, so the oracle runs with chunks of 16 or 32 here (any chunking is the same function).
#include "ops/ssm_scan/reference.h"
#include "variant_check.h"

using namespace hl;
using namespace hl::test;

namespace {

constexpr double kTolExact = 1e-6, kTolOracleChunked = 1e-5;  // see above

// Rows of d-wide heads scaled to L2 norm `norm` (a row-major [T, n * d] is a [T * n, d] of heads).
Mat<float> heads_of_norm(Mat<float> m, int64_t d, float norm) {
  Eigen::Map<Mat<float>> h(m.data(), m.size() / d, d);
  h.rowwise().normalize();
  h *= norm;
  return m;
}

// Values in (lo, hi): a logistic squash of normal ones.
Mat<float> squashed(std::mt19937_64& g, int64_t r, int64_t c, float lo, float hi) {
  return (lo + (hi - lo) / (1 + (-randn(g, r, c, 2.0)).array().exp())).matrix();
}

// ssm_scan's inputs as the model makes them (q, k unit per key head, q scaled by 1/sqrt(d); beta in
// (0, 1)); log decays in [-5, 0) with about 1 in 8 near 0 (no decay hides errors) and 1 in 16 at -30
// (Gamma must come from differences: e^{+30 per row} would overflow). decode 1: the oracle's
// recurrence, else its chunked form with chunks of ref_chunk.
gpu::OpArgs scan_args(std::mt19937_64& g, int nk, int nv, int d, int T, bool tiled, bool decode, int ref_chunk = 16) {
  Mat<float> decay = squashed(g, T, nv, -5, 0);
  std::uniform_int_distribution<int> pick(0, 15);
  for (int64_t i = 0; i < decay.size(); ++i) {
    const int p = pick(g);
    if (p < 2) decay.data()[i] = float(-1e-3 * (p + 0.5));
    if (p == 2) decay.data()[i] = -30.0f;
  }
  return {{{"q", Tensor::from(heads_of_norm(randn(g, T, nk * d), d, 1 / std::sqrt(float(d))))},
           {"k", Tensor::from(heads_of_norm(randn(g, T, nk * d), d, 1))},
           {"v", Tensor::from(randn(g, T, nv * d))},
           {"beta", Tensor::from(squashed(g, T, nv, 0, 1))},
           {"g", Tensor::from(decay)},
           {"state", Tensor::from(randn(g, nv, d * d, 0.5))}},
          {},
          {{"n_k_heads", nk}, {"decode", decode ? 1.0 : 0.0}, {"chunk", ref_chunk}, {"tiled", tiled ? 1.0 : 0.0}}};
}

struct Worst {
  const char* what;
  double o = 0, state = 0;
  void add(const std::string& name, double e) {
    double& x = name == "o" ? o : state;
    x = std::max(x, e);
  }
  ~Worst() { std::printf("vulkan:chunked, %s: worst rel L2 o %.2e, state %.2e\n", what, o, state); }
};

// vulkan:chunked with chunks of C (and other tunables) against the reference on `a`.
void check(Worst& w, const gpu::OpArgs& a, uint32_t C, std::map<std::string, uint32_t> tune = {}) {
  tune["ssm_scan.chunked.chunk"] = C;
  tune.emplace("ssm_scan.chunked.min_tokens", 1);  // T = 1 too through the chunked kernels
  tune.emplace("ssm_scan.chunked.two_pass", 0);    // its own kernels, not chunked_two_pass's (f16 operands)
  const vk::ScopedTuning scope(device().ctx().profile(), tune);
  const double tol = a.param("decode") != 0 ? kTolExact : kTolOracleChunked;
  for (auto& [name, e] : compare_with_reference("ssm_scan", "vulkan:chunked", a)) {
    INFO("C " << C << ", output '" << name << "': rel L2 " << e.rel_l2 << ", max abs " << e.max_abs);
    CHECK(e.finite);
    CHECK(e.rel_l2 <= tol);
    w.add(name, e.rel_l2);
  }
}

}  // namespace

TEST_CASE("vk ops: ssm_scan chunked, every chunk size and odd lengths, d = 32", "[vk][ops][ssm_chunked]") {
  std::mt19937_64 g(21);
  Worst rec{"d 32 vs the recurrence"}, chk{"d 32 vs the chunked oracle"};
  for (uint32_t C : {16u, 32u, 64u, 128u})
    for (int T : {1, 15, 64, 65, 130})
      for (auto [nk, nv, tiled] : {std::tuple{2, 4, false}, {1, 3, true}, {2, 4, true}})
        for (bool decode : {false, true}) {
          INFO("n_k " << nk << ", n_v " << nv << ", tiled " << tiled << ", T " << T << ", decode " << decode);
          check(decode ? rec : chk, scan_args(g, nk, nv, 32, T, tiled, decode, C == 16 ? 16 : 32), C);
        }
}

TEST_CASE("vk ops: ssm_scan chunked, d = 128", "[vk][ops][ssm_chunked]") {
  std::mt19937_64 g(22);
  Worst rec{"d 128 vs the recurrence"}, chk{"d 128 vs the chunked oracle"};
  for (uint32_t C : {16u, 64u, 128u})
    for (int T : {1, 65, 130})
      for (auto [nk, nv, tiled, decode] : {std::tuple{2, 4, false, true}, {1, 3, true, false}}) {
        INFO("n_k " << nk << ", n_v " << nv << ", tiled " << tiled << ", T " << T << ", decode " << decode);
        check(decode ? rec : chk, scan_args(g, nk, nv, 128, T, tiled, decode, 32), C);
      }
}

TEST_CASE("vk ops: ssm_scan chunked, Qwen3.6's 16 key / 32 value heads of 128", "[vk][ops][ssm_chunked]") {
  std::mt19937_64 g(23);
  Worst rec{"16 / 32 heads vs the recurrence"}, chk{"16 / 32 heads vs the chunked oracle"};
  for (bool tiled : {false, true}) check(tiled ? rec : chk, scan_args(g, 16, 32, 128, 64, tiled, tiled), 64);
}

// Against the f64 recurrence computed here: the kernel is as exact as the f32 recurrence.
TEST_CASE("vk ops: ssm_scan chunked against the f64 recurrence", "[vk][ops][ssm_chunked]") {
  std::mt19937_64 g(26);
  Worst w{"vs f64"};
  for (uint32_t C : {16u, 64u, 128u})
    for (int d : {32, 128}) {
      INFO("C " << C << ", d " << d);
      const gpu::OpArgs a = scan_args(g, 1, 3, d, 130, true, false);
      const auto f64 = [&](const char* n) -> Mat<double> { return a.in(n).f32().cast<double>(); };
      Mat<double> state = f64("state");
      const Mat<double> o =
          ref::ssm_scan_recurrent<double>(f64("q"), f64("k"), f64("v"), f64("beta"), f64("g"), state, 1, ref::HeadOrder::Tiled);
      gpu::WeightStore ws(&device());
      gpu::VariantCtx ctx{&device(), &ws};
      gpu::OpArgs got = a;
      for (auto& [n, t] : got.t) t = t.clone();
      const vk::ScopedTuning scope(device().ctx().profile(), {{"ssm_scan.chunked.chunk", C}, {"ssm_scan.chunked.two_pass", 0}});
      gpu::Registry::get().variant("ssm_scan", "vulkan:chunked").run(ctx, got);
      for (auto [name, want] : {std::pair{"o", &o}, {"state", &state}}) {
        const double e = (got.t.at(name).f32().cast<double>() - *want).norm() / want->norm();
        INFO(name << ": rel L2 " << e);
        CHECK(e <= kTolExact);
        w.add(name, e);
      }
      require_no_validation_messages();
    }
}

// Other tunings: tiles and micro-tiles (small and large workgroups), state-pass workgroups of 32 to 1024
// and column blocks of 1 to 64, and passes of one or two chunks (the state carried between passes).
TEST_CASE("vk ops: ssm_scan chunked under other tunings", "[vk][ops][ssm_chunked]") {
  std::mt19937_64 g(24);
  Worst w{"tunings"};
  const std::vector<std::map<std::string, uint32_t>> tunings{
      {{"ssm_scan.chunked.tile", 16}, {"ssm_scan.chunked.micro", 1}, {"ssm_scan.chunked.wg", 32}, {"ssm_scan.chunked.cols", 1}},
      {{"ssm_scan.chunked.tile", 128}, {"ssm_scan.chunked.micro", 8}, {"ssm_scan.chunked.cols", 64}},
      {{"ssm_scan.chunked.wg", 1024}, {"ssm_scan.chunked.segment", 16}},
      {{"ssm_scan.chunked.wg", 32}, {"ssm_scan.chunked.cols", 8}, {"ssm_scan.chunked.segment", 40}},
      {{"ssm_scan.chunked.slice", 16}, {"ssm_scan.chunked.cols", 4}},
      {{"ssm_scan.chunked.slice", 32}, {"ssm_scan.chunked.chunk", 32}, {"ssm_scan.chunked.cols", 16}},
  };
  for (size_t i = 0; i < tunings.size(); ++i)
    for (auto [d, T] : {std::pair{32, 70}, {128, 33}}) {
      INFO("tuning " << i << ", d " << d << ", T " << T);
      check(w, scan_args(g, 2, 4, d, T, false, true), 16, tunings[i]);
    }
}

// Many chunks in one pass: lavapipe ends any loop once an invocation has run 65535 iterations in all, so
// this checks that the state pass's inner loops unroll and its per-chunk count stays small.
TEST_CASE("vk ops: ssm_scan chunked, 64 chunks in one pass", "[vk][ops][ssm_chunked]") {
  std::mt19937_64 g(25);
  Worst w{"64 chunks"};
  check(w, scan_args(g, 1, 1, 128, 1024, false, true), 16);
}

// ---- vulkan:chunked_coopmat: the per-chunk products on cooperative matrices (f16 operands, f32 accumulation;
// gamma, the forward substitution and the state pass in f32). Its tolerance is the variant's precision_tolerance (derived in
// ops/ssm_scan/vulkan_chunked.cpp). Real matrices where the device has them (else a WARN); everywhere with
// shaderFloat16 the same kernel with emulated matrices (ssm_chunk_gemm_cm_emul.comp: the same f16 roundings,
// so the same tolerance), which checks its tiling, layouts, strides and barriers on lavapipe in CI.
namespace {

const char* const kCoopmat = "vulkan:chunked_coopmat";

struct CmCase {
  int nk, nv, d, T;
  uint32_t C;
  bool tiled;
};
// T = 1; T not a multiple of the chunk (one and several chunks); chunks of 16 and 64; d = 128 (the model's
// heads) and 32; both head orders; d = 40 (not a multiple of 16: the f32 state pass). Every case carries a
// non-zero state in (scan_args).
constexpr CmCase kCmCases[] = {{1, 2, 128, 1, 16, true},  {2, 4, 32, 37, 16, false}, {1, 2, 128, 70, 64, false},
                               {1, 3, 128, 33, 16, true}, {2, 4, 32, 130, 64, true}, {1, 2, 40, 37, 16, false}};

// vulkan:chunked_coopmat on d (with extra tunings) against the reference; returns the worst rel L2.
double check_coopmat(gpu::Device& d, const gpu::OpArgs& a, uint32_t C, std::map<std::string, uint32_t> tune = {}) {
  tune["ssm_scan.chunked_coopmat.chunk"] = C;
  tune.emplace("ssm_scan.chunked.min_tokens", 1);  // T = 1 too through the chunked kernels
  const vk::ScopedTuning scope(d.ctx().profile(), tune);
  const double tol = gpu::Registry::get().variant("ssm_scan", kCoopmat).precision_tolerance;
  double worst = 0;
  for (auto& [name, e] : compare_with_reference("ssm_scan", kCoopmat, a, &d)) {
    INFO("C " << C << ", output '" << name << "': rel L2 " << e.rel_l2 << ", max abs " << e.max_abs);
    CHECK(e.finite);
    CHECK(e.rel_l2 <= tol);
    worst = std::max(worst, e.rel_l2);
  }
  return worst;
}

void coopmat_cases(gpu::Device& d, std::mt19937_64& g, const char* what, std::map<std::string, uint32_t> tune) {
  for (const CmCase& c : kCmCases) {
    INFO("n_k " << c.nk << ", n_v " << c.nv << ", d " << c.d << ", T " << c.T << ", C " << c.C << ", tiled " << c.tiled);
    const double e = check_coopmat(d, scan_args(g, c.nk, c.nv, c.d, c.T, c.tiled, false, 16), c.C, tune);
    std::printf("%s %s: n_v %d, d %d, T %d, C %u: rel L2 %.2e\n", kCoopmat, what, c.nv, c.d, c.T, c.C, e);
  }
}

}  // namespace

TEST_CASE("vk ops: ssm_scan chunked_coopmat refused where the device has no cooperative matrices", "[vk][ops][ssm_chunked]") {
  const std::string why = gpu::coopmat_unavailable(device(), false);
  if (why.empty()) return;  // nothing to refuse here
  gpu::WeightStore ws(&device());
  gpu::VariantCtx ctx{&device(), &ws};
  std::mt19937_64 g(27);
  gpu::OpArgs a = scan_args(g, 1, 2, 32, 20, false, false);
  std::string msg;
  try {
    gpu::Registry::get().variant("ssm_scan", kCoopmat).run(ctx, a);
  } catch (const std::exception& e) {
    msg = e.what();
  }
  CHECK_THAT(msg, Catch::Contains("chunked_coopmat cannot run") && Catch::Contains(why));
  CHECK(gpu::Registry::get().availability(gpu::Registry::get().variant("ssm_scan", kCoopmat), &device()) == why);
}

TEST_CASE("vk ops: ssm_scan chunked_coopmat, emulated matrices", "[vk][ops][ssm_chunked]") {
  if (!device().info().shader_float16) {
    WARN("SKIPPED: no shaderFloat16 on " << device().info().name);
    return;
  }
  std::mt19937_64 g(28);
  coopmat_cases(device(), g, "emulated", {{"ssm_scan.chunked_coopmat.cm_emulate", 1}});
  // The smallest tiles (16 x 32: several row and column tiles, MODE 0's skipped strips) and passes of two chunks.
  coopmat_cases(device(), g, "emulated, 16 x 32 tiles",
                {{"ssm_scan.chunked_coopmat.cm_emulate", 1},
                 {"ssm_scan.chunked_coopmat.rows", 16},
                 {"ssm_scan.chunked_coopmat.cols", 32},
                 {"ssm_scan.chunked.segment", 32}});
  // 64 chunks in one pass: lavapipe ends any loop once an invocation has run 65535 iterations in all, so this
  // checks the host's bound on chunks per pass for the emulated state pass.
  const double e = check_coopmat(device(), scan_args(g, 1, 1, 128, 1024, false, false, 16), 16,
                                 {{"ssm_scan.chunked_coopmat.cm_emulate", 1}});
  std::printf("%s emulated: n_v 1, d 128, T 1024, C 16: rel L2 %.2e\n", kCoopmat, e);
}

TEST_CASE("vk ops: ssm_scan chunked_coopmat on cooperative matrices", "[vk][ops][ssm_chunked][coopmat]") {
  gpu::Device* d = coopmat_or_skip(kCoopmat);
  if (!d) return;
  std::mt19937_64 g(29);
  coopmat_cases(*d, g, "cooperative matrices", {});
  coopmat_cases(*d, g, "cooperative matrices, 16 x 32 tiles",
                {{"ssm_scan.chunked_coopmat.rows", 16}, {"ssm_scan.chunked_coopmat.cols", 32}});
  // Long sequences: the model's 16 / 32 heads, and T = 4096 (errors along the state pass), every chunk size.
  for (uint32_t C : {16u, 32u, 64u, 128u}) {
    const double e = check_coopmat(*d, scan_args(g, 2, 4, 128, 4096, true, false, 32), C);
    std::printf("%s: n_v 4, d 128, T 4096, C %u: rel L2 %.2e\n", kCoopmat, C, e);
  }
  const double e = check_coopmat(*d, scan_args(g, 16, 32, 128, 512, true, false, 32), 64);
  std::printf("%s: 16 / 32 heads, d 128, T 512, C 64: rel L2 %.2e\n", kCoopmat, e);
}

// ---- vulkan:chunked_two_pass: C = 64, every product on cooperative matrices (f16 operands, f32 accumulation), T
// and A in f16, the substitution and the carried state in f32; tolerance its precision_tolerance (derivation in
// ops/ssm_scan/vulkan_two_pass.cpp). Emulated matrices on lavapipe (the same kernels and roundings), real ones where
// the device has them.
namespace {

const char* const kTwoPass = "vulkan:chunked_two_pass";

struct TwoPassCase {
  int nk, nv, d, T;
  bool tiled;
};
// T = 1; within one chunk; a whole chunk; one more than a chunk; several chunks with a partial last one; d = 128
// (the model's heads) and 32; both head orders; every case with a non-zero carried state (scan_args).
constexpr TwoPassCase kTwoPassCases[] = {{1, 2, 128, 1, true},   {2, 4, 32, 37, false}, {1, 2, 128, 64, false},
                                         {1, 3, 128, 65, true},  {2, 4, 32, 130, true}, {1, 2, 128, 200, false}};

double check_two_pass(gpu::Device& d, const gpu::OpArgs& a, std::map<std::string, uint32_t> tune = {}) {
  tune.emplace("ssm_scan.chunked_two_pass.min_tokens", 1);  // T = 1 too through the two passes
  const vk::ScopedTuning scope(d.ctx().profile(), tune);
  const double tol = gpu::Registry::get().variant("ssm_scan", kTwoPass).precision_tolerance;
  double worst = 0;
  for (auto& [name, e] : compare_with_reference("ssm_scan", kTwoPass, a, &d)) {
    INFO("output '" << name << "': rel L2 " << e.rel_l2 << ", max abs " << e.max_abs);
    CHECK(e.finite);
    CHECK(e.rel_l2 <= tol);
    worst = std::max(worst, e.rel_l2);
  }
  return worst;
}

void two_pass_cases(gpu::Device& d, std::mt19937_64& g, const char* what, std::map<std::string, uint32_t> tune) {
  for (const TwoPassCase& c : kTwoPassCases) {
    INFO("n_k " << c.nk << ", n_v " << c.nv << ", d " << c.d << ", T " << c.T << ", tiled " << c.tiled);
    const double e = check_two_pass(d, scan_args(g, c.nk, c.nv, c.d, c.T, c.tiled, false, 16), tune);
    std::printf("%s %s: n_v %d, d %d, T %d: rel L2 %.2e\n", kTwoPass, what, c.nv, c.d, c.T, e);
  }
}

}  // namespace

TEST_CASE("vk ops: ssm_scan chunked_two_pass, emulated matrices", "[vk][ops][ssm_chunked]") {
  if (!gpu::coopmat_unavailable(device(), true).empty() || !device().info().storage_buffer_16bit) {
    WARN("SKIPPED: no emulated cooperative matrices or 16-bit storage on " << device().info().name);
    return;
  }
  std::mt19937_64 g(30);
  two_pass_cases(device(), g, "emulated", {{"ssm_scan.chunked_two_pass.cm_emulate", 1}});
  // Passes of one chunk (the state carried between passes through memory); the prep's loads without prefetch.
  two_pass_cases(device(), g, "emulated, one chunk per pass, no prefetch",
                 {{"ssm_scan.chunked_two_pass.cm_emulate", 1}, {"ssm_scan.chunked.segment", 64},
                  {"ssm_scan.chunked_two_pass.prefetch", 0}});
  // Scan workgroups of 32 value columns (the default is 16), on 4 and on 8 subgroups; the prep's pieces of 64 columns
  // (d_k = 32 keeps pieces of 32).
  two_pass_cases(device(), g, "emulated, 32 columns, pieces of 64",
                 {{"ssm_scan.chunked_two_pass.cm_emulate", 1}, {"ssm_scan.chunked_two_pass.cols", 32},
                  {"ssm_scan.chunked_two_pass.piece", 64}});
  two_pass_cases(device(), g, "emulated, 32 columns on 8 subgroups",
                 {{"ssm_scan.chunked_two_pass.cm_emulate", 1}, {"ssm_scan.chunked_two_pass.cols", 32},
                  {"ssm_scan.chunked_two_pass.scan_subgroups", 8}});
  // Many chunks: the host's bound on chunks per pass keeps the emulated state pass under lavapipe's loop limit.
  const double e = check_two_pass(device(), scan_args(g, 1, 1, 128, 2048, false, false, 16),
                                  {{"ssm_scan.chunked_two_pass.cm_emulate", 1}});
  std::printf("%s emulated: n_v 1, d 128, T 2048: rel L2 %.2e\n", kTwoPass, e);
}

// Heads its kernels do not take: its own kernel refuses them with a clear error, and the plan's resolution hands
// them to vulkan:chunked (and decode to vulkan:block_resident).
TEST_CASE("vk ops: ssm_scan chunked_two_pass hands on heads it does not take", "[vk][ops][ssm_chunked]") {
  if (!gpu::coopmat_unavailable(device(), true).empty() || !device().info().storage_buffer_16bit) return;
  const vk::ScopedTuning scope(device().ctx().profile(), {{"ssm_scan.chunked_two_pass.cm_emulate", 1}});
  gpu::WeightStore ws(&device());
  gpu::VariantCtx ctx{&device(), &ws};
  std::mt19937_64 g(31);
  for (int d : {40, 16, 160}) {
    gpu::OpArgs a = scan_args(g, 1, 2, d, 20, false, false);
    CHECK(resolved("ssm_scan", kTwoPass, a) == "vulkan:chunked");
    CHECK_THROWS_WITH(gpu::Registry::get().variant("ssm_scan", kTwoPass).run(ctx, a),
                      Catch::Contains("d_k a multiple of 32 up to 128"));
  }
  CHECK(resolved("ssm_scan", kTwoPass, scan_args(g, 1, 2, 128, 20, false, false)) == kTwoPass);
  CHECK(resolved("ssm_scan", kTwoPass, scan_args(g, 1, 2, 128, 1, false, true)) == "vulkan:block_resident");
  // The family default, vulkan:chunked, hands prompt chunks of at least ssm_scan.chunked.two_pass tokens to it.
  CHECK(resolved("ssm_scan", "vulkan:chunked", scan_args(g, 1, 2, 128, 20, false, false)) == "vulkan:chunked");
  const vk::ScopedTuning on(device().ctx().profile(), {{"ssm_scan.chunked.two_pass", 1}});
  CHECK(resolved("ssm_scan", "vulkan:chunked", scan_args(g, 1, 2, 128, 20, false, false)) == kTwoPass);
  CHECK(resolved("ssm_scan", "vulkan:chunked", scan_args(g, 1, 2, 40, 20, false, false)) == "vulkan:chunked");
  CHECK(resolved("ssm_scan", "vulkan:chunked", scan_args(g, 1, 2, 128, 1, false, true)) == "vulkan:block_resident");
  const vk::ScopedTuning from21(device().ctx().profile(), {{"ssm_scan.chunked.two_pass", 21}});
  CHECK(resolved("ssm_scan", "vulkan:chunked", scan_args(g, 1, 2, 128, 20, false, false)) == "vulkan:chunked");
  CHECK(resolved("ssm_scan", "vulkan:chunked", scan_args(g, 1, 2, 128, 21, false, false)) == kTwoPass);
}

// Tunables out of range: a one-line error naming the key, not a pipeline built for shapes the kernels do not take.
TEST_CASE("vk ops: ssm_scan chunked_two_pass refuses tunables it does not take", "[vk][ops][ssm_chunked]") {
  if (!gpu::coopmat_unavailable(device(), true).empty() || !device().info().storage_buffer_16bit) return;
  gpu::WeightStore ws(&device());
  gpu::VariantCtx ctx{&device(), &ws};
  std::mt19937_64 g(33);
  const std::pair<const char*, uint32_t> bad[] = {{"piece", 48}, {"cols", 24}, {"scan_subgroups", 6}};
  for (const auto& [key, value] : bad) {
    const std::string name = std::string("ssm_scan.chunked_two_pass.") + key;
    INFO(name << " = " << value);
    const vk::ScopedTuning scope(device().ctx().profile(), {{"ssm_scan.chunked_two_pass.cm_emulate", 1}, {name, value}});
    gpu::OpArgs a = scan_args(g, 1, 2, 128, 20, false, false);
    CHECK_THROWS_WITH(gpu::Registry::get().variant("ssm_scan", kTwoPass).run(ctx, a), Catch::Contains(name));
  }
}

TEST_CASE("vk ops: ssm_scan chunked_two_pass on cooperative matrices", "[vk][ops][ssm_chunked][coopmat]") {
  gpu::Device* d = coopmat_or_skip(kTwoPass);
  if (!d) return;
  std::mt19937_64 g(32);
  two_pass_cases(*d, g, "cooperative matrices", {});
  // Long sequences (errors along the state pass) and the model's 16 / 32 heads.
  const double e = check_two_pass(*d, scan_args(g, 2, 4, 128, 4096, true, false, 32));
  std::printf("%s: n_v 4, d 128, T 4096: rel L2 %.2e\n", kTwoPass, e);
  const double m = check_two_pass(*d, scan_args(g, 16, 32, 128, 512, true, false, 32));
  std::printf("%s: 16 / 32 heads, d 128, T 512: rel L2 %.2e\n", kTwoPass, m);
}
