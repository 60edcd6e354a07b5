// Vulkan variants of the Gated DeltaNet ops (ssm_conv, l2norm, ssm_gates, ssm_scan, gated_rmsnorm) against
// the reference on fresh random inputs and carried states: small odd shapes and Qwen3.6's real ones
// (C = 8192 conv channels, 16 key / 32 value heads of 128), outputs and updated states compared.
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

// Tolerances of the pointwise ops: each output is a short f32 expression of its inputs (a 4-tap sum, a
// sum of squares over one head of at most 128 terms, exp/sigmoid/softplus), so a few f32 roundings:
// relative L2 1e-6 (the Vulkan spec lets exp() err by a few ulp, ~5e-7 relative). Measured on lavapipe:
// at most 2.1e-7 (ssm_conv y; its state is copied exactly), 1e-7 (norms, gates).

TEST_CASE("vk ops: ssm_conv with a carried state, odd and real widths", "[vk][ops][deltanet]") {
  std::mt19937_64 g(11);
  for (auto [C, K] : {std::pair{7, 4}, {256, 4}, {8192, 4}, {33, 3}})
    for (int T : {1, 2, 5, 40}) {
      INFO("C " << C << ", K " << K << ", T " << T);
      gpu::OpArgs a{{{"x", Tensor::from(randn(g, T, C))}, {"state", Tensor::from(randn(g, K - 1, C))}},
                    {{"w", weight("w", randn(g, C, K, 0.5))}},
                    {}};
      require_all_close("ssm_conv", a, 1e-6);
    }
}

TEST_CASE("vk ops: l2norm per head", "[vk][ops][deltanet]") {
  std::mt19937_64 g(12);
  for (auto [T, n, d] : {std::tuple{1, 16, 128}, {7, 16, 128}, {5, 2, 32}, {3, 5, 13}}) {
    gpu::OpArgs a{{{"x", Tensor::from(randn(g, T, n * d, 2.0))}}, {}, {{"head_dim", d}, {"scale", 1 / std::sqrt(d)}, {"eps", 1e-6}}};
    require_all_close("l2norm", a, 1e-6);
  }
}

TEST_CASE("vk ops: ssm_gates over softplus's whole range", "[vk][ops][deltanet]") {
  std::mt19937_64 g(13);
  for (auto [T, nv] : {std::pair{1, 32}, {40, 32}, {5, 3}}) require_all_close("ssm_gates", gates_args(g, T, nv), 1e-6);
}

TEST_CASE("vk ops: gated_rmsnorm per value head", "[vk][ops][deltanet]") {
  std::mt19937_64 g(14);
  for (auto [T, nv, dv] : {std::tuple{1, 32, 128}, {7, 32, 128}, {5, 4, 32}, {3, 5, 13}}) {
    gpu::OpArgs a{{{"o", Tensor::from(randn(g, T, nv * dv, 0.3))}, {"z", Tensor::from(randn(g, T, nv * dv, 2.0))}},
                  {{"gain", weight("gain", randn(g, 1, dv, 0.2, 1.0))}},
                  {{"eps", 1e-6}}};
    require_all_close("gated_rmsnorm", a, 1e-6);
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
  for (auto [cols, split, stage] : {std::tuple{7u, 16u, 3u}, {32u, 1u, 16u}, {4u, 32u, 1u}, {32u, 32u, 5u}}) {
    INFO("cols " << cols << ", split " << split << ", stage " << stage);
    std::vector<std::pair<std::string, uint32_t>> keys;
    for (const char* v : {"block_resident", "per_token"})
      for (auto [k, x] : {std::pair{"cols", cols}, {"split", split}, {"stage", stage}})
        keys.emplace_back(std::string("ssm_scan.") + v + "." + k, x);
    tuned(keys, [&] { require_all_close("ssm_scan", scan_args(g, nk, nv, d, T, 0.0), 1e-5); });
  }
}
