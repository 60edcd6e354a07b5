// gdn_decode on Vulkan: vulkan:fused_decode, ops/ssm_scan/ssm_scan_columns.glsl built with NORM and SCAN_PREP
// (gdn_decode.comp): one dispatch, a workgroup per value head.
#include <bit>

#include "ops/vulkan_variant.h"

namespace hl::gpu {

namespace {

void fused_decode(VariantCtx& c, OpArgs& a) {
  Device& d = c.device();
  const std::string what = "gdn_decode vulkan:fused_decode";
  const Tensor &x = a.in("x"), &b = a.in("b"), &ap = a.in("a"), &z = a.in("z");
  Tensor &conv_state = a.state("conv_state"), &state = a.state("state");
  const Tensor w = c.weights->device(a.weight("w")), A = c.weights->device(a.weight("A")),
               dt = c.weights->device(a.weight("dt_bias")), gain = c.weights->device(a.weight("gain"));
  const int64_t nk = a.iparam("n_k_heads"), dk = a.iparam("head_dim"), nv = A.numel(), C = x.cols(), K = w.cols();
  if (x.rows() != 1) fail("{}: one token (decode) only, got {}", what, x.rows());
  const int64_t vd = C - 2 * nk * dk, dv = nv > 0 && vd > 0 ? vd / nv : 0;
  const bool ok = nk > 0 && dk > 0 && nv > 0 && nv % nk == 0 && dv > 0 && vd == nv * dv && w.rows() == C && K >= 2 &&
                  conv_state.rows() == K - 1 && conv_state.cols() == C && b.rows() == 1 && b.cols() == nv && ap.rows() == 1 &&
                  ap.cols() == nv && dt.numel() == nv && z.rows() == 1 && z.cols() == nv * dv && gain.numel() == dv &&
                  state.rows() == nv && state.cols() == dk * dv;
  if (!ok)
    fail("{}: x [{}, {}], b [{}, {}], a [{}, {}], z [{}, {}], w [{}, {}], dt_bias [{}], gain [{}], conv state [{}, {}], state "
         "[{}, {}] do not fit {} key heads of {} and {} value heads", what, x.rows(), C, b.rows(), b.cols(), ap.rows(),
         ap.cols(), z.rows(), z.cols(), w.rows(), K, dt.numel(), gain.numel(), conv_state.rows(), conv_state.cols(),
         state.rows(), state.cols(), nk, dk, nv);
  // gdn_output's tunables (the same scan): invocations per column, capped so that the head fits one workgroup; the
  // contiguous k/q layout.
  // blocks: column blocks per value head (its state over more workgroups). With the norm in the step (the tunable) the
  // head's last block finishes it; without (norm = 0, the param parts) each block writes its sum of squares, no ticket.
  const bool norm = a.param("norm") != 0;
  const int64_t parts = norm ? 0 : a.iparam("parts");
  if (!norm && (parts <= 0 || dv % parts)) fail("{}: parts = {} must divide the value head dim {}", what, parts, dv);
  const uint32_t blocks = norm ? d.tune("gdn_decode.fused_decode.blocks") : u32(parts);
  if (blocks == 0 || dv % blocks)
    fail("{}: gdn_decode.fused_decode.blocks = {} must divide the value head dim {}", what, blocks, dv);
  const uint32_t cols = u32(dv) / blocks, max_inv = d.info().max_workgroup_invocations;
  uint32_t split = d.tune("gdn_output.fused_decode.split");
  if (!std::has_single_bit(split)) fail("{}: gdn_output.fused_decode.split = {} must be a power of two", what, split);
  split = std::max(1u, std::min({split, std::bit_floor(u32(dk)), std::bit_floor(std::max(1u, max_inv / cols))}));
  if (cols > max_inv) fail("{}: value heads of {} exceed the device's {} invocations per workgroup", what, dv, max_inv);
  const uint32_t wg = cols * split, contig = d.tune("gdn_output.fused_decode.contig") != 0;
  const uint32_t acc = d.tune("gdn_output.fused_decode.acc");
  if (acc != 1 && acc != 2 && acc != 4) fail("{}: gdn_output.fused_decode.acc = {} must be 1, 2 or 4", what, acc);
  const uint64_t rc = (uint64_t(dk + split - 1) / split + 3) / 4 * 4, krow = contig ? split * (rc + 4) : uint64_t(dk);
  const uint64_t shared = 4 * (2 * krow + cols + 2 + 2 * wg + 1 + 2 * uint64_t(dk) + cols + 1);
  if (shared > d.info().max_shared_memory)
    fail("{}: heads of {} x {} need {} bytes of shared memory, the device has {}", what, dk, dv, shared, d.info().max_shared_memory);
  // A ticket counter per key head and per value head (0 between calls: each one's last workgroup resets it), then the
  // blocks' sums of squares.
  const int64_t nt = nk + nv + nv * blocks;
  Tensor tickets = c.weights->constant(fmt::format("gdn_decode.tickets {} {} {}", nk, nv, blocks),
                                       [&] { return Tensor::from_i32(IMat::Zero(1, nt)); });
  // diag (undeclared; diagnosis only, results wrong): parts of the step left out (ssm_scan_columns.glsl's DIAG).
  const auto& p = d.pipeline("gdn_decode", {{0, wg}, {1, cols}, {2, split}, {3, u32(dk)}, {4, 1u}, {5, norm ? 1u : 2u}, {6, contig}, {7, u32(K)},
                                            {8, d.profile().get("gdn_decode.fused_decode.diag", 0)}, {11, acc},
                                            {12, d.tune("gdn_decode.fused_decode.late_ticket") != 0}},
                             13, 11 * 4);
  Tensor y = Tensor::device(d, 1, nv * dv), sumsq = norm ? tickets : Tensor::device(d, 1, nv * blocks);
  struct {
    uint32_t t0, T, nk, nv, dv, blocks, tiled;
    float eps;
    uint32_t C;
    float scale, l2eps;
  } pc{0, 1, u32(nk), u32(nv), u32(dv), blocks, a.param("tiled") != 0, float(a.param("eps")), u32(C), float(a.param("scale")),
       float(a.param("l2_eps"))};
  const Grid gr = grid(uint64_t(nv) * blocks);
  d.dispatch(p, {x.buffer(d), b.buffer(d), ap.buffer(d), w.buffer(d), A.buffer(d), state.buffer_mut(d), y.buffer_mut(d),
                 z.buffer(d), gain.buffer(d), dt.buffer(d), conv_state.buffer_mut(d), tickets.buffer_mut(d),
                 sumsq.buffer_mut(d)},  // with the norm in the step: unwritten (the tickets bound in its place)
             pc, gr.x, gr.y);
  a.set("y", y);
  if (!norm) a.set("sumsq", sumsq);
}

}  // namespace

void register_gdn_decode_vulkan(Registry& r) {
  Variant v = vulkan_variant("gdn_decode", "vulkan:fused_decode",
                             "one token, one dispatch: a workgroup per value head (or per block of its columns) forms its "
                             "q, k, v (conv, silu, L2 norms) and gates from the projections, steps its state in registers "
                             "and writes the gated norm (norm = 0: the gate alone and each block's sum of squares)",
                             fused_decode, true);
  // Column blocks per value head with the norm in the step (without it: the param parts); the rest are gdn_output's
  // (split, contig). late_ticket: the key head's ticket read at the step's end (the step does not wait on the atomic).
  v.tunables = {{"gdn_decode.fused_decode.blocks", 1}, {"gdn_decode.fused_decode.late_ticket", 0}};
  r.add_variant(std::move(v));
}

}  // namespace hl::gpu
