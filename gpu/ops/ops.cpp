// The signatures of the forward pass's ops (SPEC section 4). Shapes: T tokens; activations [T, width].
#include "gpu/ops/registry.h"

namespace hl::gpu {

void register_ops(Registry& r) {
  r.add_op({"embed", "token ids [1, T] (i32) -> rows of table [V, H]: y [T, H]", {"tokens"}, {"table"}, {}, {"y"}, {}});
  r.add_op({"rmsnorm", "x [T, n*G] -> each group of G = len(gain): x / rms(x) * gain", {"x"}, {"gain"}, {}, {"y"}, {"eps"}});
  r.add_op({"add_rmsnorm",
            "x, a [T, n*G] (and optionally b, a second addend) -> y = x + a, or x + (a + b) (the residual stream), "
            "n = rmsnorm(y) with gain (G = len(gain))",
            {"x", "a"}, {"gain"}, {}, {"y", "n"}, {"eps"}});
  r.add_op({"matmul", "x [T, in], w [out, in] -> y = x w^T [T, out]", {"x"}, {"w"}, {}, {"y"}, {}});
  r.add_op({"lm_head", "x [T, H], w [V, H] -> logits [T, V] (a matmul with a vocabulary-sized output)", {"x"}, {"w"}, {}, {"y"}, {}});
  r.add_op({"add", "residual add: y = a + b", {"a", "b"}, {}, {}, {"y"}, {}});
  r.add_op({"slice", "x [T, n*period] -> columns [offset, offset+width) of every block: y [T, n*width]", {"x"}, {}, {}, {"y"},
            {"period", "offset", "width"}});
  r.add_op({"rope", "x [T, heads*D]: NeoX rotation of dims [0, R) at positions pos0 + t", {"x"}, {}, {}, {"y"},
            {"head_dim", "rot_dims", "theta", "pos0"}});
  r.add_op({"attention",
            "causal GQA softmax over the KV cache (k, v appended at rows [kv_len, kv_len+T)), times sigmoid(gate): "
            "o [T, n_q*D]",
            {"q", "k", "v", "gate"}, {}, {"k_cache", "v_cache"}, {"o"}, {"n_q_heads", "n_kv_heads", "kv_len"}});
  r.add_op({"ssm_conv", "x [T, C], w [C, K], state [K-1, C] (carried) -> silu(causal depthwise conv) [T, C]", {"x"}, {"w"},
            {"state"}, {"y"}, {}});
  r.add_op({"l2norm", "x [T, n*d] -> each group of d: x * rsqrt(sum x^2 + eps) * scale", {"x"}, {}, {}, {"y"},
            {"head_dim", "scale", "eps"}});
  r.add_op({"ssm_gates", "b, a [T, n_v] -> beta = sigmoid(b), g = A * softplus(a + dt_bias)", {"b", "a"}, {"A", "dt_bias"}, {},
            {"beta", "g"}, {}});
  r.add_op({"gdn_prep",
            "x [T, C] = q | k | v (n_k heads of head_dim, then n_v value heads), b, a [T, n_v], conv w [C, K], state "
            "[K-1, C] (carried) -> u = silu(conv); q = l2norm(u_q) * scale, k = l2norm(u_k), v = u_v; beta, g as ssm_gates",
            {"x", "b", "a"}, {"w", "A", "dt_bias"}, {"state"}, {"q", "k", "v", "beta", "g"},
            {"n_k_heads", "head_dim", "scale", "eps"}});
  r.add_op({"ssm_scan",
            "gated delta rule: q, k [T, n_k*d_k], v [T, n_v*d_v], beta, g [T, n_v], state [n_v, d_k*d_v] (carried) -> "
            "o [T, n_v*d_v]",
            {"q", "k", "v", "beta", "g"}, {}, {"state"}, {"o"}, {"n_k_heads", "decode", "chunk", "tiled"}});
  r.add_op({"gated_rmsnorm", "o, z [T, n_v*d_v] -> each head: o / rms(o) * gain * silu(z)", {"o", "z"}, {"gain"}, {}, {"y"},
            {"eps"}});
  r.add_op({"moe_router", "logits [T, E] -> softmax, top-k, renormalised: expert (i32) [T, k], weight [T, k]", {"logits"}, {},
            {}, {"expert", "weight"}, {"k"}});
  r.add_op({"moe_experts",
            "x [T, H], routes -> sum over slots of weight * down(silu(gate x) * up x); experts stacked: gate, up "
            "[E*F, H], down [E*H, F]",
            {"x", "expert", "weight"}, {"gate", "up", "down"}, {}, {"y"}, {"n_experts"}});
  r.add_op({"shared_expert", "x [T, H] -> sigmoid(x . gate_w) * down(silu(gate x) * up x)", {"x"},
            {"gate", "up", "down", "gate_w"}, {}, {"y"}, {}});
}

}  // namespace hl::gpu
