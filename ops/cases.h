// One declarative case per op: how to draw its inputs (seeded, real head dims where the data stays small)
// and how the oracle computes its outputs. `make golden` writes inputs and outputs to golden/ops/; the
// tests recompute the outputs from the stored inputs, so any change to the oracle's numbers is caught.
#pragma once
#include <functional>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "common.h"

namespace hl {

using TensorMap = std::map<std::string, Mat<double>>;

struct OpCase {
  std::string name;   // golden/ops/<name>.safetensors
  std::string about;  // shapes, in one line
  std::function<TensorMap(std::mt19937_64&)> inputs;                 // float-representable values
  std::function<TensorMap(const TensorMap&, Precision)> compute;     // the oracle in f32 or f64
};

const std::vector<OpCase>& op_cases();
const OpCase& op_case(const std::string& name);

// Writes golden/ops/<case>.safetensors for every case: in.<x> (F32), out.<y> (F32, f32 oracle) and
// out64.<y> (F64, f64 oracle on the same inputs).
void write_op_goldens(const std::string& dir, uint64_t seed);

}  // namespace hl
