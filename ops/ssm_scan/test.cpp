// ssm_scan: the oracle's conventions (head mapping, the delta rule written out, GGUF's head order), every variant
// against the reference on the op's cases, and the Vulkan kernels at Qwen3.6's real shapes, with carried states and
// other tunings. Tolerances: f32 recurrences summed in another order, 1e-4 over long sequences (see cases.cpp).
#include "ops/ssm_scan/reference.h"
#include "variant_check.h"

using namespace hl;
using namespace hl::test;

namespace {

Mat<float> uniform(std::mt19937_64& g, int64_t r, int64_t c, double lo, double hi) {
  std::uniform_real_distribution<double> d(lo, hi);
  Mat<float> m(r, c);
  for (int64_t i = 0; i < m.size(); ++i) m.data()[i] = float(d(g));
  return m;
}

// Each group of d columns scaled to L2 norm `norm`, as q (norm 1/sqrt(d)) and k (norm 1) reach ssm_scan.
Mat<float> unit_groups(Mat<float> m, int64_t d, double norm) {
  for (int64_t r = 0; r < m.rows(); ++r)
    for (int64_t c = 0; c < m.cols(); c += d) m.row(r).segment(c, d) *= float(norm / m.row(r).segment(c, d).norm());
  return m;
}

// ssm_gates inputs: a + dt_bias spans about [-40, 40] (the log1p tail, the middle, past the threshold 20).
gpu::OpArgs gates_args(std::mt19937_64& g, int T, int nv) {
  return {{{"b", Tensor::from(randn(g, T, nv, 4.0))}, {"a", Tensor::from(randn(g, T, nv, 15.0))}},
          {{"A", weight("A", Mat<float>((-randn(g, 1, nv)).array().exp().matrix()))}, {"dt_bias", weight("dt_bias", randn(g, 1, nv))}},
          {}};
}

// ssm_scan inputs as the model makes them: q, k L2-normalised per key head (q scaled by 1/sqrt(d)),
// log decays g in [-5, 0), beta in (0, 1), and a non-zero carried state.
gpu::OpArgs scan_args(std::mt19937_64& g, int nk, int nv, int d, int T, double decode) {
  return {{{"q", Tensor::from(unit_groups(randn(g, T, nk * d), d, 1 / std::sqrt(d)))},
           {"k", Tensor::from(unit_groups(randn(g, T, nk * d), d, 1.0))},
           {"v", Tensor::from(randn(g, T, nv * d))},
           {"beta", Tensor::from(uniform(g, T, nv, 0.01, 0.99))},
           {"g", Tensor::from(uniform(g, T, nv, -5.0, 0.0))},
           {"state", Tensor::from(randn(g, nv, d * d, 0.5))}},
          {},
          {{"n_k_heads", nk}, {"decode", decode}, {"chunk", 64}}};
}

void require_all_close(const std::string& op, const gpu::OpArgs& a, double tol) {
  for (auto& v : vulkan_variants(op)) require_close(op, v, a, tol);
}

}  // namespace

HL_TEST_EVERY_VARIANT("ssm_scan")

TEST_CASE("ssm_scan: value head h reads key head h / (n_v / n_k), here 3 value heads per key head", "[ops][ssm_scan]") {
  std::mt19937_64 g(7);
  const int nk = 2, nv = 6, dk = 8, dv = 5, T = 11;
  const Mat<double> q = test::randn<double>(g, T, nk * dk), k = test::randn<double>(g, T, nk * dk) * 0.3;
  const Mat<double> v = test::randn<double>(g, T, nv * dv);
  const Mat<double> beta = test::randn<double>(g, T, nv).unaryExpr([](double x) { return sigmoid(x); });
  const Mat<double> gl = -test::randn<double>(g, T, nv).cwiseAbs();
  Mat<double> st = test::randn<double>(g, nv, dk * dv);
  const Mat<double> st0 = st;
  const Mat<double> o = ref::ssm_scan_recurrent(q, k, v, beta, gl, st, nk);
  for (int h = 0; h < nv; ++h) {
    const int kh = h / 3;
    Mat<double> s1 = st0.row(h);
    const Mat<double> o1 = ref::ssm_scan_recurrent(Mat<double>(q.middleCols(kh * dk, dk)), Mat<double>(k.middleCols(kh * dk, dk)),
                                                   Mat<double>(v.middleCols(h * dv, dv)), Mat<double>(beta.col(h)),
                                                   Mat<double>(gl.col(h)), s1, 1);
    CHECK(max_abs(o1, Mat<double>(o.middleCols(h * dv, dv))) < 1e-12);
    CHECK(max_abs(s1, Mat<double>(st.row(h))) < 1e-12);
  }
}

TEST_CASE("ssm_scan: one step equals the delta rule written out", "[ops][ssm_scan]") {
  // d_k = 2, d_v = 1: S = [s0; s1], k = [1, 0], q = [0, 1], beta = 0.5, g = log(0.5).
  Mat<double> q(1, 2), k(1, 2), v(1, 1), beta(1, 1), g(1, 1), st(1, 2);
  q << 0, 1;
  k << 1, 0;
  v << 3;
  beta << 0.5;
  g << std::log(0.5);
  st << 2, 4;
  const Mat<double> o = ref::ssm_scan_recurrent(q, k, v, beta, g, st, 1);
  // decay: S = [1, 2]; recall r = S^T k = 1; delta = 0.5 * (3 - 1) = 1; S += k delta = [2, 2]; o = S^T q = 2.
  CHECK(st(0, 0) == Approx(2));
  CHECK(st(0, 1) == Approx(2));
  CHECK(o(0, 0) == Approx(2));
}

TEST_CASE("ssm_scan: GGUF's tiled value-head order equals HF's grouped order with heads permuted", "[ops][ssm_scan]") {
  // Tiled position p holds grouped head o(p) = r * (p % n_k) + p / n_k (SPEC 8.3 with r value heads per key head).
  std::mt19937_64 g(11);
  const int nk = 2, r = 3, nv = nk * r, dk = 6, dv = 4, T = 9;
  const Mat<double> q = test::randn<double>(g, T, nk * dk), k = test::randn<double>(g, T, nk * dk) * 0.3;
  const Mat<double> v = test::randn<double>(g, T, nv * dv), beta = test::randn<double>(g, T, nv).cwiseAbs() * 0.3;
  const Mat<double> gl = -test::randn<double>(g, T, nv).cwiseAbs(), s0 = test::randn<double>(g, nv, dk * dv);
  Mat<double> vt(T, nv * dv), bt(T, nv), gt(T, nv), st(nv, dk * dv);
  for (int p = 0; p < nv; ++p) {
    const int o = r * (p % nk) + p / nk;
    vt.middleCols(p * dv, dv) = v.middleCols(o * dv, dv);
    bt.col(p) = beta.col(o), gt.col(p) = gl.col(o), st.row(p) = s0.row(o);
  }
  Mat<double> sg = s0;
  const Mat<double> og = ref::ssm_scan_recurrent(q, k, v, beta, gl, sg, nk);
  const Mat<double> ot = ref::ssm_scan_chunked(q, k, vt, bt, gt, st, nk, 4, ref::HeadOrder::Tiled);
  for (int p = 0; p < nv; ++p) {
    const int o = r * (p % nk) + p / nk;
    CHECK(max_abs(Mat<double>(ot.middleCols(p * dv, dv)), Mat<double>(og.middleCols(o * dv, dv))) < 1e-12);
    CHECK(max_abs(Mat<double>(st.row(p)), Mat<double>(sg.row(o))) < 1e-12);
  }
}

// ssm_scan: the recurrence in f32 against the reference's chunked form (prefill) or its recurrence
// (decode), in another summation order. Each step sums d_k = 128 products, and the state carries the
// rounding of earlier steps, decayed by exp(g) < 1 and contracted by (I - beta k k^T): errors do not
// grow with T. Measured on lavapipe: relative L2 1e-7..3e-7 typically, at most 8.5e-7 (o) and 8.6e-7
// (state), against either form; 1e-5 leaves room for other devices' exp() (an H200 passes too).
TEST_CASE("vk ops: ssm_scan, every variant, carried state, both reference forms", "[vk][ops][deltanet]") {
  std::mt19937_64 g(15);
  struct Shape {
    int nk, nv, d, T;
  };
  std::vector<Shape> shapes;
  for (auto [nk, nv] : {std::pair{2, 4}, {1, 3}})
    for (int d : {128, 32})
      for (int T : {1, 7, 70}) shapes.push_back({nk, nv, d, T});
  shapes.push_back({16, 32, 128, 4});  // Qwen3.6's heads
  shapes.push_back({2, 2, 5, 9});      // odd head dims
  for (auto [nk, nv, d, T] : shapes) {
    for (double decode : {0.0, 1.0}) {
      INFO("n_k " << nk << ", n_v " << nv << ", d " << d << ", T " << T << ", decode " << decode);
      require_all_close("ssm_scan", scan_args(g, nk, nv, d, T, decode), 1e-5);
    }
  }
}

TEST_CASE("vk ops: ssm_scan in GGUF's tiled value-head order", "[vk][ops][deltanet]") {
  std::mt19937_64 g(17);
  for (auto [nk, nv, T] : {std::tuple{2, 4, 9}, {2, 6, 33}}) {
    gpu::OpArgs a = scan_args(g, nk, nv, 32, T, 0.0);
    a.p["tiled"] = 1;
    require_all_close("ssm_scan", a, 1e-5);  // as above
  }
}

// The kernels must stay correct whatever the device profile sets their tunables to: workgroup sizes
// from 32 to 1024; invocations per head of the norms and per column of ssm_scan both within a subgroup
// (shuffle sums) and wider than lavapipe's subgroups of 8 (shared-memory sums); ssm_scan's column
// blocks (odd ones too) and tokens staged per pass.
TEST_CASE("vk ops: deltanet kernels under other tunings", "[vk][ops][deltanet]") {
  auto& prof = device().ctx().profile();
  const auto tuned = [&](std::vector<std::pair<std::string, uint32_t>> keys, const std::function<void()>& check) {
    const vk::ScopedTuning scope(prof, {keys.begin(), keys.end()});
    check();
  };
  std::mt19937_64 g(16);
  for (auto [wg, group] : {std::pair{32u, 32u}, {1024u, 4u}}) {
    INFO("workgroup " << wg << ", group " << group);
    tuned({{"ssm_conv.channel.wg", wg}, {"ssm_conv.channel.tokens", group}}, [&] {  // 4 or 32 tokens a block
      gpu::OpArgs a{{{"x", Tensor::from(randn(g, 45, 300))}, {"state", Tensor::from(randn(g, 3, 300))}},
                    {{"w", weight("w", randn(g, 300, 4, 0.5))}}, {}};
      require_all_close("ssm_conv", a, 1e-6);
    });
    tuned({{"l2norm.rowgroup.wg", wg}, {"gated_rmsnorm.rowgroup.wg", wg}, {"l2norm.rowgroup.group", group},
           {"gated_rmsnorm.rowgroup.group", group}, {"ssm_gates.elementwise.wg", wg}}, [&] {
      gpu::OpArgs l{{{"x", Tensor::from(randn(g, 3, 4 * 128))}}, {}, {{"head_dim", 128}, {"scale", 0.5}, {"eps", 1e-6}}};
      require_all_close("l2norm", l, 1e-6);
      gpu::OpArgs n{{{"o", Tensor::from(randn(g, 3, 4 * 128))}, {"z", Tensor::from(randn(g, 3, 4 * 128))}},
                    {{"gain", weight("gain", randn(g, 1, 128, 0.2, 1.0))}}, {{"eps", 1e-6}}};
      require_all_close("gated_rmsnorm", n, 1e-6);
      require_all_close("ssm_gates", gates_args(g, 40, 32), 1e-6);
    });
  }
  const int nk = 2, nv = 4, d = 32, T = 20;
  // contig 1: each invocation's entries contiguous (runs past d_k at split 16 and 32, at 3 x 8 = 24 > 20 entries
  // with d_k 20 at split 8, none at all for some invocations).
  // unroll 1: block_resident's staged chunks unrolled (T = 20 leaves a partial chunk for the rolled loop).
  // acc: partial sums per dot product (more than an invocation's entries at split 16 and 32: some chains empty).
  for (auto [cols, split, stage, contig, unroll, acc] :
       {std::tuple{7u, 16u, 3u, 0u, 0u, 1u}, {32u, 1u, 16u, 0u, 0u, 4u}, {4u, 32u, 1u, 0u, 0u, 2u}, {32u, 32u, 5u, 0u, 1u, 4u},
        {7u, 16u, 3u, 1u, 1u, 2u}, {32u, 1u, 16u, 1u, 0u, 1u}, {4u, 32u, 1u, 1u, 0u, 4u}, {32u, 8u, 16u, 1u, 0u, 2u},
        {32u, 8u, 8u, 0u, 1u, 2u}, {16u, 8u, 16u, 1u, 1u, 4u}}) {
    INFO("cols " << cols << ", split " << split << ", stage " << stage << ", contig " << contig << ", unroll " << unroll
                 << ", acc " << acc);
    std::vector<std::pair<std::string, uint32_t>> keys{{"ssm_scan.block_resident.unroll", unroll}};
    for (const char* v : {"block_resident", "per_token"})
      for (auto [k, x] : {std::pair{"cols", cols}, {"split", split}, {"stage", stage}, {"contig", contig}, {"acc", acc}})
        keys.emplace_back(std::string("ssm_scan.") + v + "." + k, x);
    tuned(keys, [&] { require_all_close("ssm_scan", scan_args(g, nk, nv, d, T, 0.0), 1e-5); });
    if (contig) {
      INFO("d_k 20");
      tuned(keys, [&] { require_all_close("ssm_scan", scan_args(g, nk, nv, 20, T, 0.0), 1e-5); });
    }
  }
  // k.q summed once per staged token (ssm_scan_columns.glsl's kq_staged(): 16 tokens of 128 entries over 128
  // invocations, 16 entries each, a token's 8 invocations in one subgroup on every device here) at the model's head
  // size, rolled and unrolled, contiguous entries or not; 37 tokens leave a partial chunk.
  for (auto [contig, unroll, acc] : {std::tuple{0u, 0u, 1u}, {0u, 1u, 1u}, {1u, 1u, 1u}, {0u, 1u, 4u}, {1u, 1u, 2u}}) {
    INFO("d_k 128, cols 16, split 8, contig " << contig << ", unroll " << unroll << ", acc " << acc);
    tuned({{"ssm_scan.block_resident.cols", 16}, {"ssm_scan.block_resident.split", 8}, {"ssm_scan.block_resident.stage", 16},
           {"ssm_scan.block_resident.contig", contig}, {"ssm_scan.block_resident.unroll", unroll},
           {"ssm_scan.block_resident.acc", acc}},
          [&] { require_close("ssm_scan", "vulkan:block_resident", scan_args(g, 1, 2, 128, 37, 0.0), 1e-5); });
  }
}
