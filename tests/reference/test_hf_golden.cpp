// The oracle against Hugging Face transformers' own outputs for golden/hf-tiny (see its README):
// one-shot prefill (f32 and f64), every hidden state, chunked prefill with carried state, and decode.
#include <catch2/catch.hpp>

#include "quant/blocks.h"
#include "io/safetensors.h"
#include "model/runner.h"
#include "test_util.h"

using namespace hl;

namespace {

struct Golden {
  SafetensorsFile file = SafetensorsFile::open(test::hf_tiny() + "/golden.safetensors");
  std::vector<int32_t> ids;
  Golden() {
    for (int64_t x : file.at("input_ids").read_i64()) ids.push_back(int32_t(x));
  }
  Mat<double> get(const std::string& name) const { return file.at(name).to_mat<double>(); }
  std::vector<int32_t> first(size_t n) const { return {ids.begin(), ids.begin() + long(n)}; }
};

const Golden& golden() {
  static const Golden g;
  return g;
}

const ModelWeights& tiny() {
  static const ModelWeights w = load_hf(test::hf_tiny() + "/model");
  return w;
}

// Rounds another source's values to bf16, as the official-layout checkpoint stores them.
class Bf16Rounded final : public TensorSource {
 public:
  explicit Bf16Rounded(std::shared_ptr<const TensorSource> s) : TensorSource(s->name(), s->rows(), s->cols()), s_(std::move(s)) {}
  void read_rows(int64_t r0, int64_t n, float* out) const override {
    s_->read_rows(r0, n, out);
    for (int64_t i = 0; i < n * cols(); ++i) out[i] = quant::bf16_to_fp32(quant::fp32_to_bf16(out[i]));
  }

 private:
  std::shared_ptr<const TensorSource> s_;
};

}  // namespace

TEST_CASE("hf-tiny: one-shot prefill matches transformers (f32 and f64 oracle)", "[golden][hf]") {
  const auto& g = golden();
  const Mat<double> want = g.get("prefill.logits_f64");
  RunOptions o;
  const Mat<float> l32 = run_reference(tiny(), g.first(150), o);
  o.precision = Precision::F64;
  const Mat<float> l64 = run_reference(tiny(), g.first(150), o);
  const double e32 = rel_l2(l32, want), e64 = rel_l2(l64, want);
  WARN("prefill vs prefill.logits_f64: f32 oracle " << e32 << ", f64 oracle " << e64 << " (relative L2)");
  CHECK(e32 < 1e-4);
  CHECK(e64 < 3e-5);
}

TEST_CASE("hf-tiny: every hidden state of the prefill matches", "[golden][hf]") {
  const auto& g = golden();
  RefExecutor<float> ex;
  Forward<RefExecutor<float>> fwd(ex, tiny());
  std::vector<Mat<float>> hidden;
  fwd.set_observer([&](int, const Mat<float>& h) { hidden.push_back(h); });
  fwd.step(g.first(150), Phase::Prefill);
  REQUIRE(hidden.size() == 6);  // embedding, 4 layers, final norm
  for (int i = 0; i <= 4; ++i) {
    // transformers' hidden_states: [0] embeddings, [1..3] layer outputs, [4] after the final norm.
    const Mat<float>& mine = i == 4 ? hidden[5] : hidden[size_t(i)];
    const double e = rel_l2(mine, g.get(fmt::format("prefill.hidden.{}", i)));
    WARN("prefill.hidden." << i << ": " << e);
    CHECK(e < 1e-4);
  }
}

TEST_CASE("hf-tiny: chunked prefill (100 + 50) and 12 decode steps match", "[golden][hf]") {
  const auto& g = golden();
  RunOptions o;
  o.prefill_chunk = 100;
  const double ec = rel_l2(run_reference(tiny(), g.first(150), o), g.get("chunked.logits"));
  o.decode_from = 150;
  const Mat<float> all = run_reference(tiny(), g.ids, o);
  const double ed = rel_l2(all.bottomRows(12), g.get("decode.logits"));
  WARN("chunked.logits: " << ec << ", decode.logits: " << ed);
  CHECK(ec < 1e-4);
  CHECK(ed < 1e-4);
  // The oracle's own prefill forms agree with each other far more tightly than with transformers.
  RunOptions r;
  r.scan.prefill_form = ScanForm::Recurrent;
  r.prefill_chunk = 37;
  CHECK(rel_l2(run_reference(tiny(), g.first(150), r), run_reference(tiny(), g.first(150), RunOptions{})) < 1e-5);
}

TEST_CASE("hf-tiny official layout: bf16 fused experts load to the same tensors and logits", "[golden][hf]") {
  ModelWeights official = load_hf(test::hf_tiny() + "/official-layout");
  ModelWeights rounded = tiny();
  for_each_weight(rounded, [](const std::string&, WeightRef& w) { w.src = std::make_shared<Bf16Rounded>(w.src); });
  std::map<std::string, WeightRef> a;
  for_each_weight(rounded, [&](const std::string& role, WeightRef& w) { a[role] = w; });
  size_t n = 0;
  for_each_weight(official, [&](const std::string& role, WeightRef& w) {
    INFO(role);
    REQUIRE(a.count(role));
    const auto& r = a.at(role);
    REQUIRE(r.rows == w.rows);
    REQUIRE(r.cols == w.cols);
    CHECK(r.transform == w.transform);
    CHECK(max_abs(r.to_mat<float>(), w.to_mat<float>()) == 0);
    ++n;
  });
  CHECK(n == a.size());
  const auto ids = golden().first(40);
  CHECK(max_abs(run_reference(official, ids, {}), run_reference(rounded, ids, {})) == 0);
}
