// The two forms of the gated delta rule must agree to rounding at the real head shape (128 x 128 state),
// with a non-zero carried-in state and lengths that are not multiples of the chunk.
#include <catch2/catch.hpp>

#include "ops/l2norm/reference.h"
#include "ops/ssm_scan/reference.h"
#include "test_util.h"

using namespace hl;

namespace {

template <class S> struct ScanInputs {
  Mat<S> q, k, v, beta, g, state;
};

template <class S> ScanInputs<S> scan_inputs(uint64_t seed, int T, int nk, int nv, int dk, int dv) {
  std::mt19937_64 rng(seed);
  ScanInputs<S> in;
  in.q = ref::l2norm(test::randn<S>(rng, T, nk * dk), dk, S(1 / std::sqrt(double(dk))), 1e-6);
  in.k = ref::l2norm(test::randn<S>(rng, T, nk * dk), dk, S(1), 1e-6);
  in.v = test::randn<S>(rng, T, nv * dv);
  in.beta = test::randn<S>(rng, T, nv).unaryExpr([](S x) { return sigmoid(x); });
  // log decays from near 0 (slow forgetting) to about -5 (fast), as softplus-gated A produces.
  in.g = -(test::randn<S>(rng, T, nv).array().abs() * S(1.5)).matrix();
  in.state = test::randn<S>(rng, nv, dk * dv, 0.1);
  return in;
}

}  // namespace

TEST_CASE("ssm_scan: chunked equals recurrent at 128 x 128 heads, carried state, T not a multiple of C", "[ssm_scan]") {
  const int nk = 2, nv = 4, dk = 128, dv = 128;
  for (int T : {1, 63, 150}) {
    for (int C : {16, 64, 128}) {
      auto d = scan_inputs<double>(100 + T, T, nk, nv, dk, dv);
      Mat<double> s_rec = d.state, s_chk = d.state;
      const Mat<double> o_rec = ref::ssm_scan_recurrent(d.q, d.k, d.v, d.beta, d.g, s_rec, nk);
      const Mat<double> o_chk = ref::ssm_scan_chunked(d.q, d.k, d.v, d.beta, d.g, s_chk, nk, C);
      INFO("f64 T=" << T << " C=" << C);
      CHECK(rel_l2(o_chk, o_rec) < 1e-12);
      CHECK(rel_l2(s_chk, s_rec) < 1e-12);

      // f32: both forms within float rounding of the f64 truth.
      auto f = scan_inputs<float>(100 + T, T, nk, nv, dk, dv);
      Mat<float> fs_rec = f.state, fs_chk = f.state;
      const Mat<float> fo_rec = ref::ssm_scan_recurrent(f.q, f.k, f.v, f.beta, f.g, fs_rec, nk);
      const Mat<float> fo_chk = ref::ssm_scan_chunked(f.q, f.k, f.v, f.beta, f.g, fs_chk, nk, C);
      Mat<double> s64 = f.state.cast<double>();
      const Mat<double> o64 = ref::ssm_scan_recurrent<double>(f.q.cast<double>(), f.k.cast<double>(), f.v.cast<double>(),
                                                              f.beta.cast<double>(), f.g.cast<double>(), s64, nk);
      INFO("f32 rel errors: recurrent " << rel_l2(fo_rec, o64) << ", chunked " << rel_l2(fo_chk, o64));
      CHECK(rel_l2(fo_rec, o64) < 1e-5);
      CHECK(rel_l2(fo_chk, o64) < 1e-5);
      CHECK(rel_l2(fs_chk, s64) < 1e-5);
    }
  }
}

TEST_CASE("ssm_scan: splitting the tokens across calls carries the state exactly", "[ssm_scan]") {
  const int nk = 1, nv = 2, dk = 16, dv = 8, T = 40;
  auto d = scan_inputs<double>(5, T, nk, nv, dk, dv);
  Mat<double> s_all = d.state, s_split = d.state;
  const Mat<double> o_all = ref::ssm_scan_chunked(d.q, d.k, d.v, d.beta, d.g, s_all, nk, 16);
  Mat<double> o_split(T, nv * dv);
  int t0 = 0;
  for (int len : {7, 1, 20, 12}) {
    auto rows = [&](const Mat<double>& m) { return Mat<double>(m.middleRows(t0, len)); };
    o_split.middleRows(t0, len) =
        len == 1 ? ref::ssm_scan_recurrent(rows(d.q), rows(d.k), rows(d.v), rows(d.beta), rows(d.g), s_split, nk)
                 : ref::ssm_scan_chunked(rows(d.q), rows(d.k), rows(d.v), rows(d.beta), rows(d.g), s_split, nk, 16);
    t0 += len;
  }
  CHECK(rel_l2(o_split, o_all) < 1e-12);
  CHECK(rel_l2(s_split, s_all) < 1e-12);
}

TEST_CASE("ssm_scan: strong decay (g near -inf) and no decay (g = 0) stay finite and agree", "[ssm_scan]") {
  const int nk = 1, nv = 1, dk = 32, dv = 32, T = 70;
  auto d = scan_inputs<double>(9, T, nk, nv, dk, dv);
  for (int t = 0; t < T; ++t) d.g(t, 0) = t % 3 == 0 ? -80.0 : (t % 3 == 1 ? 0.0 : -1e-7);
  Mat<double> s1 = d.state, s2 = d.state;
  const Mat<double> o1 = ref::ssm_scan_recurrent(d.q, d.k, d.v, d.beta, d.g, s1, nk);
  const Mat<double> o2 = ref::ssm_scan_chunked(d.q, d.k, d.v, d.beta, d.g, s2, nk, 64);
  REQUIRE(o2.allFinite());
  CHECK(rel_l2(o2, o1) < 1e-10);
  CHECK(rel_l2(s2, s1) < 1e-10);
}
