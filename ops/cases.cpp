#include "ops/cases.h"

#include <filesystem>

#include "io/safetensors.h"
#include "model/quant_source.h"

namespace hl {

const std::vector<OpCase>& op_cases() {
  static const std::vector<OpCase> cases = [] {
    std::vector<OpCase> v;
    for (auto& op : gpu::Registry::get().ops()) v.insert(v.end(), op.goldens.begin(), op.goldens.end());
    return v;
  }();
  return cases;
}

const OpCase& op_case(const std::string& name) {
  for (auto& c : op_cases())
    if (c.name == name) return c;
  fail("unknown op case '{}'", name);
}

void write_op_goldens(const std::string& dir, uint64_t seed) {
  std::filesystem::create_directories(dir);
  for (auto& c : op_cases()) {
    std::mt19937_64 rng(seed * 1000003 + uint64_t(c.slot));
    const TensorMap ins = c.inputs(rng);
    std::vector<OutTensor> t;
    for (auto& [n, m] : ins) t.push_back(OutTensor::from_mat("in." + n, m, DType::F32));
    for (auto& [n, m] : c.compute(ins, Precision::F32)) t.push_back(OutTensor::from_mat("out." + n, m, DType::F32));
    for (auto& [n, m] : c.compute(ins, Precision::F64)) t.push_back(OutTensor::from_mat("out64." + n, m, DType::F64));
    write_safetensors(dir + "/" + c.name + ".safetensors", t, {{"op_case", c.name}, {"about", c.about}, {"seed", std::to_string(seed)}});
  }
}

}  // namespace hl

namespace hl::gpu {

Mat<float> randn(std::mt19937_64& g, int64_t rows, int64_t cols, double std, double mean) {
  Mat<float> m(rows, cols);
  synthetic_source("randn", rows, cols, g(), {SynthInit::Normal, float(mean), float(std)})->read_rows(0, rows, m.data());
  return m;
}

WeightRef weight(const std::string& name, Mat<float> m) { return whole(host_source(name, std::move(m))); }

std::vector<Case> with_add_norm(std::vector<Case> part, const std::string& width_key, const std::string& addend, int rows_written) {
  for (Case& c : part) {
    const auto inputs = c.inputs;
    const int64_t W = int64_t(c.shape.at(width_key)), T = int64_t(c.shape.at("T"));
    c.cost.bytes += 4.0 * double((1 + rows_written) * T * W + W);
    c.inputs = [=](std::mt19937_64& g) {
      OpArgs a = inputs(g);
      a.set(addend, Tensor::from(randn(g, T, W)));
      a.w.emplace("gain", weight("gain", randn(g, 1, W, 0.2, 1.0)));
      a.p["eps"] = 1e-6;
      return a;
    };
  }
  return part;
}

WeightRef random_weight(std::mt19937_64& g, const std::string& name, int64_t rows, int64_t cols, double std) {
  return whole(synthetic_source(name, rows, cols, g(), {SynthInit::Normal, 0.0f, float(std)}));
}

WeightRef random_quantized(std::mt19937_64& g, const std::string& name, int64_t rows, int64_t cols, quant::Type t, double std) {
  return whole(random_quantized_source(name, rows, cols, t, g(), float(std)));
}

Mat<float> unit_heads(Mat<float> m, int64_t d, float scale) {
  for (int64_t r = 0; r < m.rows(); ++r)
    for (int64_t c = 0; c < m.cols(); c += d) m.row(r).segment(c, d) *= scale / m.row(r).segment(c, d).norm();
  return m;
}

}  // namespace hl::gpu
