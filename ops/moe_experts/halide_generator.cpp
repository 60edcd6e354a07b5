// moe_experts as a Halide pipeline over a packed, expert-grouped row list (CPU): the wrapper packs the T*k
// (token, slot) pairs by expert (rows of one expert contiguous, in (token, slot) order), gathers their
// inputs xp [R, H] and expert ids; the pipeline computes each packed row's SwiGLU expert
//   yp = down_e(silu(gate_e x) * up_e x)
// and the weighted sum over each token's k slots, y [T, H] (pos[t, j]: the packed row of slot j).
// Experts are stacked as in the op: gate, up [E*F, H], down [E*H, F].
// CPU schedules: plain computes every stage whole, scalar. tuned: tasks of rows_per_task packed rows in parallel,
// the three products on register tiles of tile_f outputs of gate and of up (tile_h of down) x tile_p rows of one
// expert (the wrapper pads each expert's rows to whole tiles, so a weight vector serves tile_p rows), each output's
// reduction in `vec` lanes (rfactor, the reduction index innermost in weights and activations), the lanes of a tile
// held in registers over the whole reduction.
// packed=false (the GPU builds): no packing; x and the routes are read where they are (on the device), row t*k + j
// being slot j of token t, so a block's rows rarely share an expert's weights.
// GPU schedules (weights read in place, Halide's Vulkan runtime): gpu_plain computes the activations, the
// expert outputs and the slot sum each as its own kernel, one thread per value (its reduction serial in the
// thread). gpu_tuned: blocks of gpu_rows outputs x gpu_tile_p packed rows, each reduction split over the
// block's gpu_threads threads (consecutive threads read consecutive weights), partials in shared memory.
#include "ops/halide/matmul_schedule.h"

namespace hl::halide_gen {

class MoeExperts : public Generator<MoeExperts> {
 public:
  GeneratorParam<int> vec{"vec", 8};            // lanes of both reductions (1: scalar)
  GeneratorParam<int> rows_per_task{"rows_per_task", 4};  // packed rows per parallel task (0: plain, serial)
  GeneratorParam<int> tile_f{"tile_f", 4};      // CPU: outputs of gate and of up per register tile
  GeneratorParam<int> tile_h{"tile_h", 8};      // CPU: outputs of down per register tile
  GeneratorParam<int> tile_p{"tile_p", 1};      // CPU: packed rows per register tile, all of the tile's first row's
                                                // expert (the wrapper pads each expert's rows to whole tiles)
  GeneratorParam<bool> packed{"packed", true};  // false: xp is x (H, T) itself, row t*k + j slot j of token t
  GeneratorParam<bool> gpu{"gpu", false};
  GeneratorParam<int> gpu_threads{"gpu_threads", 64};  // GPU: threads per block
  GeneratorParam<bool> gpu_split{"gpu_split", true};   // GPU: reductions split over a block's threads
  GeneratorParam<int> gpu_rows{"gpu_rows", 4};         // GPU (split): outputs per block ...
  GeneratorParam<int> gpu_tile_p{"gpu_tile_p", 4};     // GPU (split): ... times packed rows per block

  Input<Buffer<float, 2>> xp{"xp"};         // (H, R) packed rows (packed=false: x, (H, T))
  Input<Buffer<int32_t, 1>> eid{"eid"};     // (R) expert of each packed row (packed=false: the routes, t*k + j)
  Input<Buffer<float, 2>> gate{"gate"};     // (H, E*F)
  Input<Buffer<float, 2>> up{"up"};         // (H, E*F)
  Input<Buffer<float, 2>> down{"down"};     // (F, E*H)
  Input<Buffer<int32_t, 2>> pos{"pos"};     // (k, T) packed row of (token, slot) (packed=false: not read)
  Input<Buffer<float, 2>> weight{"weight"}; // (k, T) route weights
  Output<Buffer<float, 2>> y{"y"};          // (H, T)

  void generate() {
    Var f("f"), h("h"), p("p"), t("t"), u("u");
    const Expr H = xp.dim(0).extent(), F = down.dim(0).extent(), K = pos.dim(0).extent();
    const Expr R = packed ? xp.dim(1).extent() : eid.dim(0).extent();
    Func xb("xb"), eb("eb");
    if (packed) xb = BoundaryConditions::repeat_edge(xp, {{Expr(), Expr()}, {0, R}});
    else xb(h, p) = xp(h, clamp(p / K, 0, xp.dim(1).extent() - 1));
    const Expr E = gate.dim(1).extent() / F;
    const int P = gpu ? 1 : std::max(1, int(tile_p));
    // the wrapper checks ids; clamps bound the gathers. A tile's rows share its first row's expert.
    eb(p) = clamp(eid(clamp(p / P * P, 0, R - 1)), 0, E - 1);
    RDom rk(0, K, "rk");
    Func g("g"), v("v"), act("act"), dm("dm"), yp("yp");
    // Rows clamped to the expert's: register tiles past F (or H, for down) read rows they never store.
    const Expr fr = eb(p) * F + (gpu ? f : clamp(f, 0, F - 1));
    // Each reduction in whole blocks of `lanes` (define_dot: no bound test in the vectorised loop) and a tail.
    const int lanes = gpu ? 1 : std::max(1, int(vec));
    auto rg = define_dot(g, f, p, H, lanes, [&](Expr k) { return xb(k, p) * gate(k, fr); });
    auto rv = define_dot(v, f, p, H, lanes, [&](Expr k) { return xb(k, p) * up(k, fr); });
    act(f, p) = silu(g(f, p)) * v(f, p);
    const Expr hr = eb(p) * H + (gpu ? h : clamp(h, 0, H - 1));
    // down's tail as a sum of its own beside the blocks' (dm): both read act, computed per row
    const auto dterm = [&](Expr k) { return act(k, p) * down(k, hr); };
    auto rd = define_dot(dm, h, p, F, lanes, dterm, false);
    yp(h, p) = dm(h, p) + sum(dterm(rd.tail));
    y(h, t) = 0.0f;
    y(h, t) += weight(rk, t) * yp(h, packed ? clamp(pos(rk, t), 0, R - 1) : t * K + rk);

    if (gpu) {
      schedule_gpu(g, v, act, dm, yp, f, h, p, t, rg.rk[1], rd.rk[1]);
      return;
    }
    if (rows_per_task <= 0) {
      for (Func s : {g, v, act, dm, yp}) s.compute_root();
      return;
    }
    Var po("po"), pi("pi"), fo("fo"), fi("fi"), ho("ho"), hi("hi");
    const int tf = std::max(1, int(tile_f)), th = std::max(1, int(tile_h));
    // Tasks of whole row tiles. Within a task, each tile of outputs walks the task's row tiles (mostly one expert's),
    // so its weight rows are loaded from memory once per task and then from L1.
    const int rpt = std::max(P, int(rows_per_task) / P * P);
    Var pr("pr"), pt("pt"), pp("pp"), qt("qt"), qp("qp");
    yp.compute_root().split(p, po, pr, rpt, kGuard).split(pr, pt, pp, P, kGuard).split(h, ho, hi, th, kGuard)
        .reorder(hi, pp, pt, ho, po).parallel(po).unroll(hi).unroll(pp);
    // gate's and up's products for the task's rows stored (gw, vw), so SwiGLU runs `vec` wide over them
    Func gw = g.in(), vw = v.in();
    for (Func w : {gw, vw})
      w.compute_at(yp, po).bound_extent(p, rpt).split(f, fo, fi, tf, kGuard).split(p, qt, qp, P)
          .reorder(fi, qp, qt, fo).unroll(fi).unroll(qp);
    act.compute_at(yp, po).bound_extent(p, rpt).vectorize(f, lanes, kGuard);
    // A tile's outputs and their lanes: constant-size realizations in registers, lanes innermost (a vector each),
    // unrolled over the tile, the lanes summed across the vector once at the end.
    const auto tile = [&](Func acc, std::vector<RVar> r, Var x, int n, Func at, Var where) {
      acc.compute_at(at, where).bound_extent(x, n).bound_extent(p, P).store_in(MemoryType::Register).unroll(x).unroll(p);
      for (int i = 1; i < acc.num_update_definitions(); ++i) acc.update(i).unroll(x).unroll(p);
      if (lanes > 1) acc.update(0).atomic().vectorize(r[0]);
      acc.update(0).unroll(x).unroll(p);
      Func part = acc.update(0).rfactor(r[0], u);
      part.compute_at(at, where).bound_extent(x, n).bound_extent(p, P).reorder_storage(u, x, p)
          .store_in(MemoryType::Register).vectorize(u).unroll(x).unroll(p);
      part.update().reorder(u, x, p, r[1]).vectorize(u).unroll(x).unroll(p);
    };
    tile(g, rg.rk, f, tf, gw, qt);
    tile(v, rv.rk, f, tf, vw, qt);
    tile(dm, rd.rk, h, th, yp, pt);
    y.parallel(t);
    if (vec > 1) {
      y.vectorize(h, vec, kGuard);
      y.update().vectorize(h, vec, kGuard);
    }
  }

  void schedule_gpu(Func g, Func v, Func act, Func dm, Func yp, Var f, Var h, Var p, Var t, RVar rh, RVar rf) {
    Var fo("fo"), fi("fi"), ho("ho"), hi("hi"), po("po"), pi("pi"), to("to"), ti("ti"), u("u");
    RVar ro("ro"), ri("ri");
    Func ypw = yp;  // the kernel that stores yp; dm accumulates
    // The slot sum: one thread per output value, its k slots serial (both stages of the output).
    y.gpu_tile(h, t, ho, to, hi, ti, gpu_threads, 1, kGuard);
    y.update().gpu_tile(h, t, ho, to, hi, ti, gpu_threads, 1, kGuard);
    if (!gpu_split) {
      act.compute_root().gpu_tile(f, p, fo, po, fi, pi, gpu_threads, 1, kGuard);
      g.compute_at(act, fi);
      v.compute_at(act, fi);
      ypw.compute_root().gpu_tile(h, p, ho, po, hi, pi, gpu_threads, 1, kGuard);
      dm.compute_at(ypw, hi);
      return;
    }
    // Block = gpu_rows outputs x gpu_tile_p rows; each reduction in gpu_threads partial sums (rfactor), which
    // the outputs' threads then add up.
    const auto split = [&](Func acc, Func w, Var x, Var xo, RVar r) {
      acc.compute_at(w, xo).gpu_threads(x, p);
      Func part = acc.update().split(r, ro, ri, gpu_threads, kGuard).rfactor(ri, u);
      acc.update().gpu_threads(x, p);
      if (acc.num_update_definitions() > 1) acc.update(1).gpu_threads(x, p);  // define_dot's tail: empty (lanes = 1)
      part.compute_at(w, xo).gpu_threads(u);
      part.update().reorder(x, p, ro, u).gpu_threads(u);
    };
    act.compute_root().gpu_tile(f, p, fo, po, fi, pi, gpu_rows, gpu_tile_p, kGuard);
    split(g, act, f, fo, rh);
    split(v, act, f, fo, rh);
    ypw.compute_root().gpu_tile(h, p, ho, po, hi, pi, gpu_rows, gpu_tile_p, kGuard);
    split(dm, ypw, h, ho, rf);
  }
};

}  // namespace hl::halide_gen

HALIDE_REGISTER_GENERATOR(hl::halide_gen::MoeExperts, hl_moe_experts)
