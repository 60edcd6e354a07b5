// Every Halide variant (halide:<op>:<schedule> on the CPU, halide-vulkan:<op>:<schedule> through Halide's
// Vulkan runtime, on lavapipe in CI) against the reference, on fresh random inputs: shapes that are not
// multiples of any tile or vector width, and the model's real head shapes where that is fast.
// Tolerances as the Vulkan variants' (tests/gpu): sums in another order than Eigen's.
#include "ops/halide/halide.h"
#include "quant/blocks.h"
#include "variant_check.h"

using namespace hl;
using namespace hl::test;

namespace {

// Every Halide variant of an op (both families).
std::vector<std::string> halide_variants(const std::string& op) {
  std::vector<std::string> v;
  for (auto* x : gpu::Registry::get().variants(op))
    if (x->family == "halide" || x->family == "halide-vulkan") v.push_back(x->name);
  return v;
}

// `vulkan` false: the CPU schedules only (shapes too slow for lavapipe).
void check_all(const std::string& op, const gpu::OpArgs& a, double tol, bool vulkan = true) {
  const auto vs = halide_variants(op);
  REQUIRE(vs.size() >= 2);  // plain and tuned at least
  for (auto& v : vs) {
    if (!vulkan && v.starts_with("halide-vulkan:")) continue;
    INFO(op << " " << v);
    require_close(op, v, a, tol);
  }
}

// A Q8_0 weight: ggml blocks as the raw rows, their exact dequantization as the values.
class Q8Source final : public TensorSource {
 public:
  Q8Source(std::string name, const Mat<float>& m)
      : TensorSource(std::move(name), m.rows(), m.cols()), rb_(quant::row_bytes(quant::Type::Q8_0, m.cols())),
        raw_(rb_ * size_t(m.rows())) {
    for (int64_t r = 0; r < m.rows(); ++r) quant::quantize_row(quant::Type::Q8_0, m.row(r).data(), raw_.data() + rb_ * r, m.cols());
  }
  void read_rows(int64_t r0, int64_t n, float* out) const override {
    for (int64_t r = 0; r < n; ++r) quant::dequantize_row(quant::Type::Q8_0, raw_.data() + rb_ * (r0 + r), out + r * cols(), cols());
  }
  quant::Type storage_type() const override { return quant::Type::Q8_0; }
  void read_raw_rows(int64_t r0, int64_t n, void* out) const override {
    std::memcpy(out, raw_.data() + rb_ * r0, rb_ * size_t(n));
  }

 private:
  size_t rb_;
  std::vector<uint8_t> raw_;
};

Mat<float> unit_heads(Mat<float> m, int64_t d, float scale) {
  for (int64_t r = 0; r < m.rows(); ++r)
    for (int64_t c = 0; c < m.cols(); c += d) m.row(r).segment(c, d) *= scale / m.row(r).segment(c, d).norm();
  return m;
}

}  // namespace

TEST_CASE("halide: the registry lists plain and tuned CPU schedules of every op, tuned the family default", "[halide]") {
  const auto& r = gpu::Registry::get();
  for (const char* op : {"rmsnorm", "gated_rmsnorm", "matmul", "lm_head", "ssm_conv", "ssm_scan", "attention", "moe_experts"}) {
    INFO(op);
    CHECK(r.variant(op, std::string("halide:") + op + ":plain").family == "halide");
    const gpu::Variant* d = r.family_default(op, "halide");
    REQUIRE(d);
    CHECK(d->name == std::string("halide:") + op + ":tuned");
    CHECK(!d->needs_device);
  }
#ifdef HYBRIDLAB_HALIDE_VULKAN
  for (const char* op : {"rmsnorm", "gated_rmsnorm", "matmul", "lm_head", "ssm_conv", "ssm_scan", "attention", "moe_experts"}) {
    INFO(op);
    CHECK(r.variant(op, std::string("halide-vulkan:") + op + ":gpu_plain").family == "halide-vulkan");
    const gpu::Variant* d = r.family_default(op, "halide-vulkan");
    REQUIRE(d);
    CHECK(d->name == std::string("halide-vulkan:") + op + ":gpu_tuned");
    CHECK(d->needs_device);
    CHECK(r.availability(*d, &device()).empty());  // lavapipe in CI: Halide's runtime finds it too
  }
#endif
  CHECK(gpu::halide::cpu_threads() >= 1);
}

TEST_CASE("halide ops: rmsnorm over rows and head groups", "[halide][ops]") {
  std::mt19937_64 g(2);
  for (auto [r, c, G] : {std::tuple{1, 2048, 2048}, {7, 2048, 2048}, {5, 16 * 256, 256}, {3, 130, 13}, {2, 37, 37}}) {
    gpu::OpArgs a{{{"x", Tensor::from(randn(g, r, c, 3.0))}}, {{"gain", weight("gain", randn(g, 1, G, 0.2, 1.0))}}, {{"eps", 1e-6}}};
    INFO("x [" << r << ", " << c << "], G " << G);
    check_all("rmsnorm", a, 1e-6);
  }
}

TEST_CASE("halide ops: gated_rmsnorm", "[halide][ops]") {
  std::mt19937_64 g(4);
  for (auto [T, n, d] : {std::tuple{1, 32, 128}, {9, 32, 128}, {3, 3, 37}}) {
    gpu::OpArgs a{{{"o", Tensor::from(randn(g, T, n * d, 2.0))}, {"z", Tensor::from(randn(g, T, n * d))}},
                  {{"gain", weight("gain", randn(g, 1, d, 0.2, 1.0))}},
                  {{"eps", 1e-6}}};
    INFO("T " << T << " heads " << n << " d " << d);
    check_all("gated_rmsnorm", a, 1e-6);
  }
}

TEST_CASE("halide ops: matmul and lm_head, f32 weights, odd and real shapes", "[halide][ops]") {
  std::mt19937_64 g(3);
  for (auto [T, K, N] : {std::tuple{1, 37, 53}, {3, 100, 17}, {9, 64, 40}, {33, 129, 70}, {1, 2048, 512}, {20, 2048, 256}}) {
    gpu::OpArgs a{{{"x", Tensor::from(randn(g, T, K))}}, {{"w", weight("w", randn(g, N, K, 1.0 / std::sqrt(K)))}}, {}};
    INFO("T " << T << " in " << K << " out " << N);
    for (const char* op : {"matmul", "lm_head"}) check_all(op, a, 2e-6);
  }
}

TEST_CASE("halide ops: matmul on Q8_0 weights, decoded in the pipeline", "[halide][ops]") {
  std::mt19937_64 g(5);
  for (auto [T, K, N] : {std::tuple{1, 64, 37}, {5, 96, 70}, {3, 2048, 256}}) {
    auto src = std::make_shared<Q8Source>("wq", randn(g, N, K, 1.0 / std::sqrt(K)));
    gpu::OpArgs a{{{"x", Tensor::from(randn(g, T, K))}}, {{"w", whole(src)}}, {}};
    REQUIRE(a.weight("w").storage_type() == quant::Type::Q8_0);
    INFO("T " << T << " in " << K << " out " << N);
    // Against the reference on the dequantized weights (the oracle's contract): the same values.
    check_all("matmul", a, 2e-6);
  }
}

TEST_CASE("halide ops: ssm_conv with carried state", "[halide][ops]") {
  std::mt19937_64 g(6);
  for (auto [T, C] : {std::pair{1, 37}, {19, 100}, {2, 13}, {64, 8192}}) {
    gpu::OpArgs a{{{"x", Tensor::from(randn(g, T, C))}, {"state", Tensor::from(randn(g, 3, C))}},
                  {{"w", weight("w", randn(g, C, 4, 0.5))}},
                  {}};
    INFO("T " << T << " C " << C);
    check_all("ssm_conv", a, 1e-6);
  }
}

// The Vulkan schedules (chunks of 64) see T = 1, a padded last chunk, three chunks, both head orders, odd
// head sizes and the real 128 x 128 state at short T (their state pass is serial per value column: the
// long real-shape case runs on the CPU schedules only).
TEST_CASE("halide ops: ssm_scan, chunked form, padded last chunk, both head orders, real head shape", "[halide][ops]") {
  std::mt19937_64 g(7);
  // (T, n_k, n_v, d_k, d_v, tiled)
  for (auto [T, nk, nv, dk, dv, tiled] : {std::tuple{1, 2, 4, 16, 16, 0}, {70, 2, 4, 16, 24, 0}, {33, 2, 4, 8, 8, 1},
                                          {5, 1, 3, 7, 9, 1}, {130, 2, 4, 16, 16, 1}, {1, 2, 4, 128, 128, 1},
                                          {20, 2, 4, 128, 128, 0}, {130, 1, 2, 128, 128, 0}}) {
    std::uniform_real_distribution<float> beta(0.05f, 0.95f), decay(-2.0f, -0.001f);
    Mat<float> b(T, nv), gl(T, nv);
    for (int64_t i = 0; i < b.size(); ++i) b.data()[i] = beta(g), gl.data()[i] = decay(g);
    gpu::OpArgs a{{{"q", Tensor::from(unit_heads(randn(g, T, nk * dk), dk, 1 / std::sqrt(float(dk))))},
                   {"k", Tensor::from(unit_heads(randn(g, T, nk * dk), dk, 1.0f))},
                   {"v", Tensor::from(randn(g, T, nv * dv))},
                   {"beta", Tensor::from(b)},
                   {"g", Tensor::from(gl)},
                   {"state", Tensor::from(randn(g, nv, dk * dv, 0.1))}},
                  {},
                  {{"n_k_heads", double(nk)}, {"decode", T == 1 ? 1.0 : 0.0}, {"chunk", 64}, {"tiled", double(tiled)}}};
    INFO("T " << T << " heads " << nk << "/" << nv << " d " << dk << "x" << dv << " tiled " << tiled);
    // f32 sums over d_k and the chunk in another order than the oracle's: the Vulkan schedules measured <= 3e-7.
    check_all("ssm_scan", a, 1e-5, dk < 128 || T < 64);
  }
}

#ifdef HYBRIDLAB_HALIDE_VULKAN
TEST_CASE("halide ops: ssm_scan's Vulkan schedules refuse a state pass past lavapipe's loop limit", "[halide][ops]") {
  if (device().info().driver_id != VK_DRIVER_ID_MESA_LLVMPIPE) return;  // the limit is lavapipe's
  std::mt19937_64 g(17);
  const int T = 300, d = 128;  // 5 chunks x 129 x 128 iterations in one thread; refused before any work
  gpu::OpArgs a{{{"q", Tensor::from(randn(g, T, d))}, {"k", Tensor::from(randn(g, T, d))}, {"v", Tensor::from(randn(g, T, d))},
                 {"beta", Tensor::from(randn(g, T, 1))}, {"g", Tensor::from(randn(g, T, 1))},
                 {"state", Tensor::from(randn(g, 1, d * d))}},
                {},
                {{"n_k_heads", 1.0}}};
  gpu::WeightStore ws(&device());
  gpu::VariantCtx ctx{&device(), &ws};
  for (const char* v : {"halide-vulkan:ssm_scan:gpu_plain", "halide-vulkan:ssm_scan:gpu_tuned"})
    REQUIRE_THROWS_WITH(gpu::Registry::get().variant("ssm_scan", v).run(ctx, a), Catch::Contains("lavapipe's limit"));
}
#endif

TEST_CASE("halide ops: attention prefill over the KV cache", "[halide][ops]") {
  std::mt19937_64 g(8);
  // (T, past, n_q, n_kv, D)
  for (auto [T, past, nq, nkv, D] : {std::tuple{5, 3, 4, 2, 16}, {1, 0, 2, 1, 8}, {13, 0, 6, 2, 24}, {33, 40, 4, 2, 256}}) {
    const int64_t cap = past + T + 3;
    gpu::OpArgs a{{{"q", Tensor::from(randn(g, T, nq * D))},
                   {"k", Tensor::from(randn(g, T, nkv * D))},
                   {"v", Tensor::from(randn(g, T, nkv * D))},
                   {"gate", Tensor::from(randn(g, T, nq * D))},
                   {"k_cache", Tensor::from(randn(g, cap, nkv * D))},
                   {"v_cache", Tensor::from(randn(g, cap, nkv * D))}},
                  {},
                  {{"n_q_heads", double(nq)}, {"n_kv_heads", double(nkv)}, {"kv_len", double(past)}}};
    INFO("T " << T << " past " << past << " heads " << nq << "/" << nkv << " D " << D);
    check_all("attention", a, 2e-6);
  }
}

TEST_CASE("halide ops: moe_experts over packed expert-grouped rows", "[halide][ops]") {
  std::mt19937_64 g(9);
  // (T, E, k, H, F): odd sizes (T = 1, k = 3: 3 packed rows), most experts without a token, every expert with
  // every token (k = E), one expert, a wide reduction (the model's hidden 2048 and width 512).
  for (auto [T, E, k, H, F] : {std::tuple{5, 8, 3, 37, 19}, {1, 8, 3, 37, 19}, {1, 8, 2, 16, 8}, {7, 4, 4, 37, 19},
                               {3, 1, 1, 5, 3}, {9, 32, 8, 256, 64}, {3, 2, 2, 2048, 512}}) {
    IMat ex(T, k);
    Mat<float> w(T, k);
    std::uniform_int_distribution<int> pick(0, E - 1);
    std::uniform_real_distribution<float> uw(0.05f, 1.0f);
    for (int64_t t = 0; t < T; ++t)
      for (int64_t j = 0; j < k; ++j) {
        int e;
        do e = pick(g);
        while ((ex.row(t).head(j).array() == e).any());  // distinct experts per token, as top-k gives
        ex(t, j) = e;
        w(t, j) = uw(g);
      }
    gpu::OpArgs a{{{"x", Tensor::from(randn(g, T, H))}, {"expert", Tensor::from_i32(ex)}, {"weight", Tensor::from(w)}},
                  {{"gate", weight("gate", randn(g, E * F, H, 1.0 / std::sqrt(H)))},
                   {"up", weight("up", randn(g, E * F, H, 1.0 / std::sqrt(H)))},
                   {"down", weight("down", randn(g, E * H, F, 1.0 / std::sqrt(F)))}},
                  {{"n_experts", double(E)}}};
    INFO("T " << T << " E " << E << " k " << k << " H " << H << " F " << F);
    // f32 sums of H and F products in another order than Eigen's: ~sqrt(H) ulps, 1.6e-6 measured at H = 2048.
    check_all("moe_experts", a, H >= 1024 ? 4e-6 : 2e-6);
  }
}
