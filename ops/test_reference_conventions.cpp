// Per-op unit tests on cases small enough to check by hand: the conventions SPEC.md warns about.
#include <catch2/catch.hpp>

#include "ops/attention/reference.h"
#include "ops/gated_rmsnorm/reference.h"
#include "ops/l2norm/reference.h"
#include "ops/moe_experts/reference.h"
#include "ops/rmsnorm/reference.h"
#include "ops/rope/reference.h"
#include "ops/shared_expert/reference.h"
#include "ops/slice/reference.h"
#include "ops/ssm_conv/reference.h"
#include "ops/ssm_gates/reference.h"
#include "ops/ssm_scan/reference.h"
#include "model/weights.h"
#include "test_util.h"

using namespace hl;

TEST_CASE("rmsnorm: zero-centred HF weight becomes gain 1 + w; groups normalise separately", "[ops][rmsnorm]") {
  Mat<float> hf_w(1, 2);
  hf_w << 0.0f, 1.0f;  // HF stores w; the math multiplies by 1 + w
  const Vec<double> gain = whole(host_source("w", hf_w), Transform::PlusOne).to_vec<double>();
  REQUIRE(gain(0) == 1.0);
  REQUIRE(gain(1) == 2.0);
  Mat<double> x(1, 4);
  x << 3, 4, -1, 1;  // groups [3, 4] (rms sqrt(12.5)) and [-1, 1] (rms 1)
  const Mat<double> y = ref::rmsnorm(x, gain, 0.0);
  CHECK(y(0, 0) == Approx(3 / std::sqrt(12.5)));
  CHECK(y(0, 1) == Approx(2 * 4 / std::sqrt(12.5)));
  CHECK(y(0, 2) == Approx(-1.0));
  CHECK(y(0, 3) == Approx(2.0));
}

TEST_CASE("rope: NeoX pairs (i, i + R/2), only the first R dims rotate", "[ops][rope]") {
  const int D = 8, R = 4;
  const double theta = 100.0;
  const int64_t pos = 3;
  Mat<double> x = Mat<double>::Zero(1, 2 * D);
  x(0, 0) = 1;           // head 0, pair (0, 2), frequency 1
  x(0, D + 1) = 1;       // head 1, pair (1, 3), frequency theta^(-1/2) = 0.1
  x(0, D + 5) = 7;       // head 1, dim 5 >= R: passes through
  const Mat<double> y = ref::rope(x, D, R, theta, pos);
  CHECK(y(0, 0) == Approx(std::cos(3.0)));
  CHECK(y(0, 2) == Approx(std::sin(3.0)));
  CHECK(y(0, 1) == 0);
  CHECK(y(0, D + 1) == Approx(std::cos(0.3)));
  CHECK(y(0, D + 3) == Approx(std::sin(0.3)));
  CHECK(y(0, D + 5) == 7);
  CHECK(y.row(0).norm() == Approx(x.row(0).norm()));  // a rotation
}

TEST_CASE("moe_router: softmax over all experts, top-k, renormalised; ties keep the lower id", "[ops][router]") {
  Mat<double> logits(2, 4);
  logits << std::log(1.0), std::log(2.0), std::log(3.0), std::log(4.0),  // p = .1 .2 .3 .4
      0.5, 0.5, 0.5, 0.5;
  const auto r = ref::moe_router(logits, 2);
  CHECK(r.expert(0, 0) == 3);
  CHECK(r.expert(0, 1) == 2);
  CHECK(r.weight(0, 0) == Approx(4.0 / 7));
  CHECK(r.weight(0, 1) == Approx(3.0 / 7));
  CHECK(r.expert(1, 0) == 0);
  CHECK(r.expert(1, 1) == 1);
  CHECK(r.weight(1, 0) == Approx(0.5));
}

TEST_CASE("ssm_conv: tap 0 is the oldest input; the state carries across calls", "[ops][ssm_conv]") {
  Mat<double> w(1, 4);
  w << 0.001, 0.01, 0.1, 1.0;
  Mat<double> x(4, 1);
  x << 1, 2, 3, 4;
  Mat<double> st = Mat<double>::Zero(3, 1);
  const Mat<double> y = ref::ssm_conv(x, w, st);
  const double pre[4] = {1.0, 0.1 + 2, 0.01 + 0.2 + 3, 0.001 + 0.02 + 0.3 + 4};
  for (int t = 0; t < 4; ++t) CHECK(y(t, 0) == Approx(silu(pre[t])));
  CHECK(st(0, 0) == 2);  // the last three inputs, oldest first
  CHECK(st(2, 0) == 4);

  std::mt19937_64 g(1);
  const Mat<double> xs = test::randn<double>(g, 9, 5), ws = test::randn<double>(g, 5, 4);
  Mat<double> s1 = test::randn<double>(g, 3, 5), s2 = s1;
  const Mat<double> whole_run = ref::ssm_conv(xs, ws, s1);
  Mat<double> pieces(9, 5);
  pieces.topRows(2) = ref::ssm_conv(Mat<double>(xs.topRows(2)), ws, s2);
  pieces.middleRows(2, 1) = ref::ssm_conv(Mat<double>(xs.middleRows(2, 1)), ws, s2);
  pieces.bottomRows(6) = ref::ssm_conv(Mat<double>(xs.bottomRows(6)), ws, s2);
  CHECK(max_abs(pieces, whole_run) < 1e-14);
  CHECK(max_abs(s1, s2) == 0);
}

TEST_CASE("attention: GQA maps query head n to KV head n / group; causal; sigmoid gate", "[ops][attention]") {
  const int D = 4, T = 3;
  // q = 0 makes the softmax uniform over visible positions; v of KV head m at time tau is (m + 1) * (tau + 1).
  Mat<double> q = Mat<double>::Zero(T, 4 * D), k = Mat<double>::Zero(T, 2 * D), v(T, 2 * D), gate = Mat<double>::Zero(T, 4 * D);
  for (int t = 0; t < T; ++t)
    for (int m = 0; m < 2; ++m) v.block(t, m * D, 1, D).setConstant((m + 1) * (t + 1));
  gate(2, 3 * D) = 50;  // sigmoid(50) = 1 for one element
  ref::KvCache<double> cache;
  const Mat<double> o = ref::attention(q, k, v, gate, cache, 4, 2);
  for (int t = 0; t < T; ++t)
    for (int n = 0; n < 4; ++n) {
      const double mean = (n / 2 + 1) * (t + 2) / 2.0;  // mean of (m+1) * (1..t+1)
      CHECK(o(t, n * D + 1) == Approx(0.5 * mean));
    }
  CHECK(o(2, 3 * D) == Approx(2 * 2.0));
  CHECK(cache.len() == T);

  // The same tokens fed one at a time through the cache give the same outputs.
  ref::KvCache<double> c2;
  for (int t = 0; t < T; ++t) {
    const Mat<double> ot = ref::attention(Mat<double>(q.row(t)), Mat<double>(k.row(t)), Mat<double>(v.row(t)),
                                          Mat<double>(gate.row(t)), c2, 4, 2);
    CHECK(max_abs(ot, Mat<double>(o.row(t))) < 1e-14);
  }
}

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

TEST_CASE("ssm_gates, l2norm, gated_rmsnorm, slice: conventions", "[ops]") {
  Mat<double> b(1, 2), a(1, 2);
  b << 0, 0;
  a << 0, 30;  // softplus threshold: x > 20 returns x
  Vec<double> A(2), dt(2);
  A << -1, -2;
  dt << 0, 0;
  const auto gt = ref::ssm_gates(b, a, A, dt);
  CHECK(gt.beta(0, 0) == Approx(0.5));
  CHECK(gt.g(0, 0) == Approx(-std::log(2.0)));
  CHECK(gt.g(0, 1) == Approx(-60.0));

  Mat<double> x(1, 4);
  x << 3, 4, 0, 2;
  const Mat<double> l = ref::l2norm(x, 2, 0.5, 0.0);
  CHECK(l(0, 0) == Approx(0.3));
  CHECK(l(0, 1) == Approx(0.4));
  CHECK(l(0, 3) == Approx(0.5));

  // Gated norm: plain gain (no + 1), normalised per head, times silu(z).
  Mat<double> o(1, 4), z(1, 4);
  o << 3, 4, 1, 1;
  z << 0, 20, 1, -1;
  Vec<double> gain(2);
  gain << 2, 3;
  const Mat<double> y = ref::gated_rmsnorm(o, z, gain, 0.0);
  CHECK(y(0, 0) == 0);
  CHECK(y(0, 1) == Approx(4 / std::sqrt(12.5) * 3 * silu(20.0)));
  CHECK(y(0, 2) == Approx(2 * silu(1.0)));
  CHECK(y(0, 3) == Approx(3 * silu(-1.0)));

  Mat<double> s(1, 6);
  s << 0, 1, 2, 3, 4, 5;
  const Mat<double> sl = ref::slice(s, 3, 1, 2);  // blocks [0 1 2] [3 4 5] -> [1 2] [4 5]
  CHECK(sl.cols() == 4);
  CHECK((sl.array() == (Mat<double>(1, 4) << 1, 2, 4, 5).finished().array()).all());
}

TEST_CASE("moe_experts and shared_expert: weighted SwiGLU experts, sigmoid-gated shared expert", "[ops][moe]") {
  std::mt19937_64 g(3);
  const int H = 6, F = 4, T = 3;
  std::vector<ref::ExpertMats<double>> ex;
  for (int e = 0; e < 3; ++e)
    ex.push_back({test::randn<double>(g, F, H), test::randn<double>(g, F, H), test::randn<double>(g, H, F)});
  const Mat<double> x = test::randn<double>(g, T, H);
  ref::Routes<double> r{IMat(T, 2), Mat<double>(T, 2)};
  r.expert << 0, 2, 2, 0, 1, 2;  // expert 1 only for token 2
  r.weight << 0.7, 0.3, 0.6, 0.4, 0.9, 0.1;
  const Mat<double> y = ref::moe_experts(x, r, {&ex[0], &ex[1], &ex[2]});
  for (int t = 0; t < T; ++t) {
    Mat<double> want = Mat<double>::Zero(1, H);
    for (int j = 0; j < 2; ++j) {
      const auto& e = ex[size_t(r.expert(t, j))];
      const Mat<double> xt = x.row(t);
      const Mat<double> hmid = (xt * e.gate.transpose()).unaryExpr([](double v) { return silu(v); }).cwiseProduct(xt * e.up.transpose());
      want += r.weight(t, j) * hmid * e.down.transpose();
    }
    CHECK(max_abs(Mat<double>(y.row(t)), want) < 1e-12);
  }
  // An expert nobody routes to may be absent.
  ref::Routes<double> r0{IMat::Zero(T, 1), Mat<double>::Ones(T, 1)};
  CHECK_NOTHROW(ref::moe_experts(x, r0, {&ex[0], nullptr, nullptr}));
  CHECK_THROWS_WITH(ref::moe_experts(x, r, {&ex[0], nullptr, &ex[2]}), Catch::Contains("expert 1"));

  const Vec<double> zero_gate = Vec<double>::Zero(H);
  CHECK(max_abs(ref::shared_expert(x, ex[0], zero_gate), Mat<double>(0.5 * ref::expert_mlp(x, ex[0]))) < 1e-14);
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
