#include "ops/cases.h"

#include <filesystem>

#include "io/safetensors.h"
#include "ref_executor.h"

namespace hl {

namespace {

Mat<double> randn(std::mt19937_64& rng, int64_t r, int64_t c, double std = 1.0, double mean = 0.0) {
  std::normal_distribution<double> d(mean, std);
  Mat<double> m(r, c);
  for (int64_t i = 0; i < m.size(); ++i) m.data()[i] = double(float(d(rng)));  // float-representable
  return m;
}

Mat<double> uniform(std::mt19937_64& rng, int64_t r, int64_t c, double lo, double hi) {
  std::uniform_real_distribution<double> d(lo, hi);
  Mat<double> m(r, c);
  for (int64_t i = 0; i < m.size(); ++i) m.data()[i] = double(float(d(rng)));
  return m;
}

Mat<double> unit_rows(Mat<double> m, int d, double scale) {  // l2-normalised heads, rounded to float
  for (int64_t r = 0; r < m.rows(); ++r)
    for (int64_t g = 0; g < m.cols(); g += d) m.row(r).segment(g, d) *= scale / m.row(r).segment(g, d).norm();
  return m.cast<float>().cast<double>();
}

template <class S> Mat<S> in(const TensorMap& m, const char* name) { return m.at(name).template cast<S>(); }
template <class S> Vec<S> in_vec(const TensorMap& m, const char* name) {
  const Mat<double>& x = m.at(name);
  return Eigen::Map<const Vec<double>>(x.data(), x.size()).template cast<S>();
}
template <class S> Mat<double> out(const Mat<S>& x) { return x.template cast<double>(); }

// Runs f<float> or f<double>.
#define HL_DISPATCH(prec, f) ((prec) == Precision::F64 ? f.template operator()<double>() : f.template operator()<float>())

std::vector<OpCase> make_cases() {
  std::vector<OpCase> v;
  v.push_back({"rmsnorm", "x [8, 2048], gain [2048]",
               [](auto& g) { return TensorMap{{"x", randn(g, 8, 2048, 3.0)}, {"gain", randn(g, 1, 2048, 0.2, 1.0)}}; },
               [](const TensorMap& m, Precision p) {
                 auto f = [&]<class S>() { return TensorMap{{"y", out(ref::rmsnorm(in<S>(m, "x"), in_vec<S>(m, "gain"), 1e-6))}}; };
                 return HL_DISPATCH(p, f);
               }});
  v.push_back({"rmsnorm_heads", "q/k norm: x [5, 16 * 256], gain [256]",
               [](auto& g) { return TensorMap{{"x", randn(g, 5, 4096)}, {"gain", randn(g, 1, 256, 0.2, 1.0)}}; },
               [](const TensorMap& m, Precision p) {
                 auto f = [&]<class S>() { return TensorMap{{"y", out(ref::rmsnorm(in<S>(m, "x"), in_vec<S>(m, "gain"), 1e-6))}}; };
                 return HL_DISPATCH(p, f);
               }});
  v.push_back({"matmul", "x [5, 512], w [384, 512]",
               [](auto& g) { return TensorMap{{"x", randn(g, 5, 512)}, {"w", randn(g, 384, 512, 0.044)}}; },
               [](const TensorMap& m, Precision p) {
                 auto f = [&]<class S>() { return TensorMap{{"y", out(ref::matmul(in<S>(m, "x"), in<S>(m, "w")))}}; };
                 return HL_DISPATCH(p, f);
               }});
  v.push_back({"slice", "x [3, 4 * 24]: columns [8, 16) of every block of 24",
               [](auto& g) { return TensorMap{{"x", randn(g, 3, 96)}}; },
               [](const TensorMap& m, Precision p) {
                 auto f = [&]<class S>() { return TensorMap{{"y", out(ref::slice(in<S>(m, "x"), 24, 8, 8))}}; };
                 return HL_DISPATCH(p, f);
               }});
  v.push_back({"rope", "x [6, 2 * 256], 64 rotary dims, theta 1e7, positions 1000..1005",
               [](auto& g) { return TensorMap{{"x", randn(g, 6, 512)}}; },
               [](const TensorMap& m, Precision p) {
                 auto f = [&]<class S>() { return TensorMap{{"y", out(ref::rope(in<S>(m, "x"), 256, 64, 1e7, 1000))}}; };
                 return HL_DISPATCH(p, f);
               }});
  v.push_back({"attention", "16 q / 2 kv heads of 256; 7 cached + 5 new tokens; gated",
               [](auto& g) {
                 return TensorMap{{"q", randn(g, 5, 4096, 0.5)}, {"k", randn(g, 5, 512, 0.5)}, {"v", randn(g, 5, 512)},
                                  {"gate", randn(g, 5, 4096)}, {"cache_k", randn(g, 7, 512, 0.5)},
                                  {"cache_v", randn(g, 7, 512)}};
               },
               [](const TensorMap& m, Precision p) {
                 auto f = [&]<class S>() {
                   ref::KvCache<S> c{in<S>(m, "cache_k"), in<S>(m, "cache_v")};
                   auto o = ref::attention(in<S>(m, "q"), in<S>(m, "k"), in<S>(m, "v"), in<S>(m, "gate"), c, 16, 2);
                   return TensorMap{{"o", out(o)}};
                 };
                 return HL_DISPATCH(p, f);
               }});
  v.push_back({"ssm_conv", "8192 channels, kernel 4, 5 tokens, carried state [3, 8192]",
               [](auto& g) {
                 return TensorMap{{"x", randn(g, 5, 8192)}, {"w", randn(g, 8192, 4, 0.3)}, {"state", randn(g, 3, 8192)}};
               },
               [](const TensorMap& m, Precision p) {
                 auto f = [&]<class S>() {
                   Mat<S> st = in<S>(m, "state");
                   auto y = ref::ssm_conv(in<S>(m, "x"), in<S>(m, "w"), st);
                   return TensorMap{{"y", out(y)}, {"state", out(st)}};
                 };
                 return HL_DISPATCH(p, f);
               }});
  v.push_back({"l2norm", "x [4, 16 * 128], scale 1/sqrt(128)",
               [](auto& g) { return TensorMap{{"x", randn(g, 4, 2048)}}; },
               [](const TensorMap& m, Precision p) {
                 auto f = [&]<class S>() {
                   return TensorMap{{"y", out(ref::l2norm(in<S>(m, "x"), 128, S(1 / std::sqrt(128.0)), 1e-6))}};
                 };
                 return HL_DISPATCH(p, f);
               }});
  v.push_back({"ssm_gates", "b, a [6, 32]; A = -exp(A_log), dt_bias [32]",
               [](auto& g) {
                 Mat<double> A = -uniform(g, 1, 32, -1.0, 1.5).array().exp();
                 return TensorMap{{"b", randn(g, 6, 32, 2.0)}, {"a", randn(g, 6, 32, 4.0)},
                                  {"A", A.cast<float>().cast<double>()}, {"dt_bias", randn(g, 1, 32, 0.5)}};
               },
               [](const TensorMap& m, Precision p) {
                 auto f = [&]<class S>() {
                   auto r = ref::ssm_gates(in<S>(m, "b"), in<S>(m, "a"), in_vec<S>(m, "A"), in_vec<S>(m, "dt_bias"));
                   return TensorMap{{"beta", out(r.beta)}, {"g", out(r.g)}};
                 };
                 return HL_DISPATCH(p, f);
               }});
  v.push_back({"ssm_scan", "1 key / 2 value heads, 128 x 128 state, T = 70 (chunk 64), non-zero carried state",
               [](auto& g) {
                 const int T = 70;
                 return TensorMap{{"q", unit_rows(randn(g, T, 128), 128, 1 / std::sqrt(128.0))},
                                  {"k", unit_rows(randn(g, T, 128), 128, 1.0)},
                                  {"v", randn(g, T, 256)},
                                  {"beta", uniform(g, T, 2, 0.05, 0.95)},
                                  {"g", uniform(g, T, 2, -0.5, -0.001)},
                                  {"state", randn(g, 2, 128 * 128, 0.1)}};
               },
               [](const TensorMap& m, Precision p) {
                 auto f = [&]<class S>() {
                   Mat<S> s1 = in<S>(m, "state"), s2 = s1;
                   auto o1 = ref::ssm_scan_recurrent(in<S>(m, "q"), in<S>(m, "k"), in<S>(m, "v"), in<S>(m, "beta"),
                                                     in<S>(m, "g"), s1, 1);
                   auto o2 = ref::ssm_scan_chunked(in<S>(m, "q"), in<S>(m, "k"), in<S>(m, "v"), in<S>(m, "beta"),
                                                   in<S>(m, "g"), s2, 1, 64);
                   return TensorMap{{"o_recurrent", out(o1)}, {"state_recurrent", out(s1)},
                                    {"o_chunked", out(o2)}, {"state_chunked", out(s2)}};
                 };
                 return HL_DISPATCH(p, f);
               }});
  v.push_back({"gated_rmsnorm", "o, z [4, 32 * 128], gain [128]",
               [](auto& g) {
                 return TensorMap{{"o", randn(g, 4, 4096)}, {"z", randn(g, 4, 4096)}, {"gain", randn(g, 1, 128, 0.2, 1.0)}};
               },
               [](const TensorMap& m, Precision p) {
                 auto f = [&]<class S>() {
                   return TensorMap{{"y", out(ref::gated_rmsnorm(in<S>(m, "o"), in<S>(m, "z"), in_vec<S>(m, "gain"), 1e-6))}};
                 };
                 return HL_DISPATCH(p, f);
               }});
  v.push_back({"moe_router", "logits [16, 256], top-8",
               [](auto& g) { return TensorMap{{"logits", randn(g, 16, 256, 2.0)}}; },
               [](const TensorMap& m, Precision p) {
                 auto f = [&]<class S>() {
                   auto r = ref::moe_router(in<S>(m, "logits"), 8);
                   return TensorMap{{"expert", r.expert.template cast<double>()}, {"weight", out(r.weight)}};
                 };
                 return HL_DISPATCH(p, f);
               }});
  v.push_back({"moe_experts", "x [6, 256]; 8 experts of width 64, top-2 routes",
               [](auto& g) {
                 TensorMap m{{"x", randn(g, 6, 256)}};
                 Mat<double> ex(6, 2), w(6, 2);
                 std::uniform_int_distribution<int> pick(0, 7);
                 for (int t = 0; t < 6; ++t) {
                   ex(t, 0) = pick(g);
                   do ex(t, 1) = pick(g); while (ex(t, 1) == ex(t, 0));
                   w(t, 0) = double(float(std::uniform_real_distribution<double>(0.5, 1.0)(g)));
                   w(t, 1) = double(float(1.0 - w(t, 0)));
                 }
                 m["expert"] = ex, m["weight"] = w;
                 for (int e = 0; e < 8; ++e) {
                   m[fmt::format("gate.{}", e)] = randn(g, 64, 256, 0.0625);
                   m[fmt::format("up.{}", e)] = randn(g, 64, 256, 0.0625);
                   m[fmt::format("down.{}", e)] = randn(g, 256, 64, 0.125);
                 }
                 return m;
               },
               [](const TensorMap& m, Precision p) {
                 auto f = [&]<class S>() {
                   std::vector<ref::ExpertMats<S>> ex;
                   for (int e = 0; e < 8; ++e)
                     ex.push_back({m.at(fmt::format("gate.{}", e)).template cast<S>(),
                                   m.at(fmt::format("up.{}", e)).template cast<S>(),
                                   m.at(fmt::format("down.{}", e)).template cast<S>()});
                   std::vector<const ref::ExpertMats<S>*> ptr;
                   for (auto& e : ex) ptr.push_back(&e);
                   ref::Routes<S> r{m.at("expert").cast<int32_t>(), in<S>(m, "weight")};
                   return TensorMap{{"y", out(ref::moe_experts(in<S>(m, "x"), r, ptr))}};
                 };
                 return HL_DISPATCH(p, f);
               }});
  v.push_back({"shared_expert", "x [4, 256]; width 64; sigmoid gate",
               [](auto& g) {
                 return TensorMap{{"x", randn(g, 4, 256)}, {"gate", randn(g, 64, 256, 0.0625)},
                                  {"up", randn(g, 64, 256, 0.0625)}, {"down", randn(g, 256, 64, 0.125)},
                                  {"gate_w", randn(g, 1, 256, 0.0625)}};
               },
               [](const TensorMap& m, Precision p) {
                 auto f = [&]<class S>() {
                   ref::ExpertMats<S> e{in<S>(m, "gate"), in<S>(m, "up"), in<S>(m, "down")};
                   return TensorMap{{"y", out(ref::shared_expert(in<S>(m, "x"), e, in_vec<S>(m, "gate_w")))}};
                 };
                 return HL_DISPATCH(p, f);
               }});
  v.push_back({"embed", "table [50, 32], 7 tokens",
               [](auto& g) {
                 Mat<double> t(1, 7);
                 t << 0, 49, 3, 3, 17, 8, 42;
                 return TensorMap{{"table", randn(g, 50, 32)}, {"tokens", t}};
               },
               [](const TensorMap& m, Precision p) {
                 auto f = [&]<class S>() {
                   const Mat<double>& t = m.at("tokens");
                   std::vector<int32_t> ids(t.data(), t.data() + t.size());
                   auto table = whole(host_source("table", m.at("table").cast<float>()));
                   return TensorMap{{"y", out(ref::embed<S>(table, ids))}};
                 };
                 return HL_DISPATCH(p, f);
               }});
  return v;
}

#undef HL_DISPATCH

}  // namespace

const std::vector<OpCase>& op_cases() {
  static const std::vector<OpCase> cases = make_cases();
  return cases;
}

const OpCase& op_case(const std::string& name) {
  for (auto& c : op_cases())
    if (c.name == name) return c;
  fail("unknown op case '{}'", name);
}

void write_op_goldens(const std::string& dir, uint64_t seed) {
  std::filesystem::create_directories(dir);
  uint64_t i = 0;
  for (auto& c : op_cases()) {
    std::mt19937_64 rng(seed * 1000003 + i++);
    const TensorMap ins = c.inputs(rng);
    std::vector<OutTensor> t;
    for (auto& [n, m] : ins) t.push_back(OutTensor::from_mat("in." + n, m, DType::F32));
    for (auto& [n, m] : c.compute(ins, Precision::F32)) t.push_back(OutTensor::from_mat("out." + n, m, DType::F32));
    for (auto& [n, m] : c.compute(ins, Precision::F64)) t.push_back(OutTensor::from_mat("out64." + n, m, DType::F64));
    write_safetensors(dir + "/" + c.name + ".safetensors", t, {{"op_case", c.name}, {"about", c.about}, {"seed", std::to_string(seed)}});
  }
}

}  // namespace hl
