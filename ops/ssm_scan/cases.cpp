// ssm_scan: its cases, at test, quick and full scale (inputs, shapes, the bytes and flops each must move and compute),
// which its tests and experiment run, and its golden case.
#include "ops/cases.h"
#include "ops/ssm_scan/reference.h"
#include "ops/ssm_scan/scan_inputs.h"

namespace hl::gpu {

// Declared in scan_inputs.h.
OpArgs scan_inputs(std::mt19937_64& g, int64_t T, int64_t nk, int64_t nv, int64_t dk, int64_t dv, bool tiled) {
  std::uniform_real_distribution<float> beta(0.05f, 0.95f), decay(-2.0f, -0.001f);
  Mat<float> b(T, nv), gl(T, nv);
  for (int64_t i = 0; i < b.size(); ++i) b.data()[i] = beta(g), gl.data()[i] = decay(g);
  return OpArgs{{{"q", Tensor::from(unit_heads(randn(g, T, nk * dk), dk, 1 / std::sqrt(float(dk))))},
                 {"k", Tensor::from(unit_heads(randn(g, T, nk * dk), dk, 1.0f))},
                 {"v", Tensor::from(randn(g, T, nv * dv))},
                 {"beta", Tensor::from(b)},
                 {"g", Tensor::from(gl)},
                 {"state", Tensor::from(randn(g, nv, dk * dv, 0.1))}},
                {},
                {{"n_k_heads", double(nk)}, {"decode", T == 1 ? 1.0 : 0.0}, {"chunk", 64}, {"tiled", tiled ? 1.0 : 0.0}}};
}

namespace {

// ssm_scan's cases: the gated delta rule at the model's head shape, 16 key / 32 value heads, 128 x 128 state, with
// a carried-in state, T = 1 (decode) to 4096. Bytes: q, k, v, beta, g read, o written, the state (2 MiB) read and
// written once. Flops: ~7 d_k d_v per value head and token for the recurrence (decay, recall S^T k, rank-1 update,
// S^T q). Quick: 2 key / 4 value heads, T <= 64.
Case scan_case(int64_t T, int64_t nk, int64_t nv, int64_t dk, int64_t dv, bool describe, bool tiled = false) {
  Case c;
  c.label = fmt::format("T={}{}{}", T, !describe ? "" : fmt::format(" {} key / {} value heads of {} x {}", nk, nv, dk, dv),
                        tiled ? " tiled head order" : "");
  c.group = T == 1 ? "decode" : "prefill";
  c.shape = {{"T", double(T)}, {"key_heads", double(nk)}, {"value_heads", double(nv)}, {"d_k", double(dk)}, {"d_v", double(dv)}};
  c.cost = {4.0 * double(T * (2 * nk * dk + 2 * nv * dv + 2 * nv) + 2 * nv * dk * dv), 7.0 * double(T * nv * dk * dv)};
  c.inputs = [=](std::mt19937_64& g) { return scan_inputs(g, T, nk, nv, dk, dv, tiled); };
  return c;
}

std::vector<Case> cases(Scale s) {
  std::vector<Case> v;
  if (s == Scale::Test) {
    v.push_back(scan_case(1, 1, 2, 128, 128, true));
    v.push_back(scan_case(70, 2, 4, 32, 32, true));           // a chunk and a part of one
    v.push_back(scan_case(19, 1, 3, 48, 40, true, true));     // odd head dims, 3 value heads per key head, GGUF's order
    v.push_back(scan_case(33, 1, 2, 128, 128, true));
    return v;
  }
  const int64_t nk = s == Scale::Quick ? 2 : 16;
  for (int64_t T : s == Scale::Quick ? std::vector<int64_t>{1, 16, 64} : std::vector<int64_t>{1, 16, 64, 256, 512, 1024, 4096})
    v.push_back(scan_case(T, nk, 2 * nk, 128, 128, false));
  return v;
}
// The recurrence in f32 over up to 4096 steps, summed in other orders than the oracle's chunked form: errors grow
// slowly with T; 1e-4 relative L2 on the outputs and the final state separates a right kernel (~1e-6) from a wrong
// one (O(1)).
constexpr double kTolerance = 1e-4;

// Its golden case (golden/ops/): inputs drawn with the slot's seed, the oracle's outputs in f32 and f64.
std::vector<OpCase> goldens() {
  std::vector<OpCase> v;
  v.push_back({"ssm_scan", 9, "1 key / 2 value heads, 128 x 128 state, T = 70 (chunk 64), non-zero carried state",
               [](auto& g) {
                 const int T = 70;
                 return TensorMap{{"q", golden_case::unit_rows(golden_case::randn(g, T, 128), 128, 1 / std::sqrt(128.0))},
                                  {"k", golden_case::unit_rows(golden_case::randn(g, T, 128), 128, 1.0)},
                                  {"v", golden_case::randn(g, T, 256)},
                                  {"beta", golden_case::uniform(g, T, 2, 0.05, 0.95)},
                                  {"g", golden_case::uniform(g, T, 2, -0.5, -0.001)},
                                  {"state", golden_case::randn(g, 2, 128 * 128, 0.1)}};
               },
               [](const TensorMap& m, Precision p) {
                 auto f = [&]<class S>() {
                   Mat<S> s1 = golden_case::in<S>(m, "state"), s2 = s1;
                   auto o1 = ref::ssm_scan_recurrent(golden_case::in<S>(m, "q"), golden_case::in<S>(m, "k"), golden_case::in<S>(m, "v"), golden_case::in<S>(m, "beta"),
                                                     golden_case::in<S>(m, "g"), s1, 1);
                   auto o2 = ref::ssm_scan_chunked(golden_case::in<S>(m, "q"), golden_case::in<S>(m, "k"), golden_case::in<S>(m, "v"), golden_case::in<S>(m, "beta"),
                                                   golden_case::in<S>(m, "g"), s2, 1, 64);
                   return TensorMap{{"o_recurrent", golden_case::out(o1)}, {"state_recurrent", golden_case::out(s1)},
                                    {"o_chunked", golden_case::out(o2)}, {"state_chunked", golden_case::out(s2)}};
                 };
                 return golden_case::dispatch(p, f);
               }});
  return v;
}

}  // namespace

OpDef ssm_scan_with_cases(OpDef d) {
  d.cases = cases;
  d.tolerance = kTolerance;
  d.goldens = goldens();
  return d;
}

}  // namespace hl::gpu
