// embed: token ids -> rows of the embedding table (SPEC 4.1). No scaling.
#pragma once
#include "common.h"
#include "model/weights.h"

namespace hl::ref {

// tokens [T] (each in [0, V)), table [V, H] -> [T, H]. Reads only the rows it needs.
template <class S> Mat<S> embed(const WeightRef& table, const std::vector<int32_t>& tokens);

}  // namespace hl::ref
