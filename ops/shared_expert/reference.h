// shared_expert: the always-on expert of every MoE block, scaled by a per-token sigmoid gate (SPEC 4.6).
#pragma once
#include "ops/moe_experts/expert_mlp.h"

namespace hl::ref {

// x [T, H]; gate_w [H] -> sigmoid(x . gate_w) * expert_mlp(x), [T, H].
template <class S> Mat<S> shared_expert(const Mat<S>& x, const ExpertMats<S>& e, const Vec<S>& gate_w);

}  // namespace hl::ref
