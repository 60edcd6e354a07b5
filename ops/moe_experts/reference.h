// moe_experts: the routed experts of a sparse MoE block (SPEC 4.6): every token's k chosen experts,
// each a SwiGLU MLP, summed with the router weights.
#pragma once
#include <vector>

#include "ops/moe_experts/expert_mlp.h"
#include "ops/moe_router/reference.h"

namespace hl::ref {

// x [T, H]; routes [T, k]; experts[e] for every e that some token routes to (others may be null).
// Returns [T, H] = sum over slots of weight * expert_mlp(x_t). Contributions are accumulated in ascending
// expert id (HF eager order), so the result does not depend on threading.
template <class S>
Mat<S> moe_experts(const Mat<S>& x, const Routes<S>& routes, const std::vector<const ExpertMats<S>*>& experts);

}  // namespace hl::ref
