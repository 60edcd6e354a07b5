// Regression against golden/ops/: the oracle recomputes every op case from its stored inputs and must
// reproduce the stored outputs. A change to the oracle's numbers fails here (regenerate with `make golden`
// only when the change is intended, and say why in the commit).
#include <catch2/catch.hpp>

#include "io/safetensors.h"
#include "ops/cases.h"
#include "test_util.h"

using namespace hl;

TEST_CASE("golden op tensors: the oracle reproduces every stored output", "[golden][ops]") {
  for (const OpCase& c : op_cases()) {
    const std::string path = test::root() + "/golden/ops/" + c.name + ".safetensors";
    INFO("op case " << c.name << " (" << path << ")");
    const auto file = SafetensorsFile::open(path);
    TensorMap ins;
    for (auto& [name, v] : file.tensors())
      if (name.rfind("in.", 0) == 0) ins[name.substr(3)] = v.to_mat<double>();
    REQUIRE(!ins.empty());
    for (Precision p : {Precision::F32, Precision::F64}) {
      const std::string prefix = p == Precision::F32 ? "out." : "out64.";
      const double tol = p == Precision::F32 ? 1e-6 : 1e-13;
      const TensorMap outs = c.compute(ins, p);
      for (auto& [name, m] : outs) {
        const TensorView& want = file.at(prefix + name);
        INFO(prefix << name);
        REQUIRE(want.numel() == m.size());
        const Mat<double> w = want.to_mat<double>(m.rows(), m.cols());
        REQUIRE(w.cwiseAbs().maxCoeff() > 0);  // never compare against all-zero data
        CHECK(rel_l2(m, w) <= tol);
      }
    }
  }
}
