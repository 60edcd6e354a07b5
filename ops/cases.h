// Every op's cases, and the helpers its case generator (ops/<op>/cases.cpp) draws inputs with.
#pragma once
#include "ops/registry.h"

namespace hl {

const std::vector<OpCase>& op_cases();  // every op's golden cases (OpDef::goldens), in the registry's order
const OpCase& op_case(const std::string& name);

// Writes golden/ops/<case>.safetensors for every golden case: in.<x> (F32), out.<y> (F32, f32 oracle) and
// out64.<y> (F64, f64 oracle on the same inputs).
void write_op_goldens(const std::string& dir, uint64_t seed);

}  // namespace hl

namespace hl::gpu {

// Gaussian values (counter-based and parallel: even the lm_head's 500 M values are drawn in a moment).
Mat<float> randn(std::mt19937_64& g, int64_t rows, int64_t cols, double std = 1.0, double mean = 0.0);
WeightRef weight(const std::string& name, Mat<float> m);
// A random weight produced on use (never held whole on the host unless a host variant needs it).
WeightRef random_weight(std::mt19937_64& g, const std::string& name, int64_t rows, int64_t cols, double std);
// Random weights quantized to t (ggml blocks), produced on use.
WeightRef random_quantized(std::mt19937_64& g, const std::string& name, int64_t rows, int64_t cols, quant::Type t, double std);
// Every head of d columns scaled to norm `scale` (the l2-normalised q and k of the delta rule).
Mat<float> unit_heads(Mat<float> m, int64_t d, float scale);
// The cases of an op with a residual add and rmsnorm folded in (add_rmsnorm_matmul_group, add_rmsnorm_moe_block):
// each of `part`'s cases (T rows of `width` values, from its shape keys "T" and width_key), its inputs plus `addend`
// [T, width] (fresh random values), a gain [width] around 1 and eps; bytes: the addend read, `rows_written` more rows
// of width written (the sum, the norm), the gain.
std::vector<Case> with_add_norm(std::vector<Case> part, const std::string& width_key, const std::string& addend, int rows_written);

}  // namespace hl::gpu
