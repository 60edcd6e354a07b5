// moe_router as a Halide pipeline: logits [T, E] -> p = softmax over the E experts; the k experts of largest p (the
// lower id first among equal p, as the reference's sort), in that order, and their p renormalised over the k.
// Top-k without a sort: each expert's rank (how many come before it in that order, E comparisons), then slot j's
// expert is the one of rank j, so every stage is a data-parallel reduction.
#include "ops/halide/generator_common.h"

namespace hl::halide_gen {

class MoeRouter : public Generator<MoeRouter> {
 public:
  // CPU: tokens per parallel task (0: serial), vec-wide along the experts (1: scalar). GPU: a block per token,
  // gpu_threads experts per block for the per-expert stages.
  GeneratorParam<int> vec{"vec", 8};
  GeneratorParam<int> rows_per_task{"rows_per_task", 4};
  GeneratorParam<bool> gpu{"gpu", false};
  GeneratorParam<int> gpu_threads{"gpu_threads", 64};
  Input<Buffer<float, 2>> logits{"logits"};  // (E, T)
  Input<int32_t> k{"k"};
  Output<Buffer<int32_t, 2>> expert{"expert"};  // (k, T)
  Output<Buffer<float, 2>> weight{"weight"};    // (k, T)

  void generate() {
    Var i("i"), t("t"), j("j");
    const Expr E = logits.dim(0).extent();
    RDom r(0, E, "r");
    mx(t) = maximum(logits(r, t));
    e(i, t) = exp(logits(i, t) - mx(t));
    s(t) = sum(e(r, t));
    p(i, t) = e(i, t) / s(t);
    // The experts ahead of i: larger p, or the same p and a lower id.
    RDom q(0, E, "q");
    rank(i, t) = sum(select(p(q, t) > p(i, t) || (p(q, t) == p(i, t) && q < i), 1, 0));
    RDom u(0, E, "u");
    slot(j, t) = minimum(select(rank(u, t) == j, u, E));  // the expert of rank j (ranks are distinct)
    const Expr ej = clamp(slot(j, t), 0, E - 1);
    RDom v(0, k, "v");
    chosen(t) = 0.0f;
    chosen(t) += p(clamp(slot(v, t), 0, E - 1), t);  // in slot order, as the reference sums
    expert(j, t) = slot(j, t);
    weight(j, t) = p(ej, t) / chosen(t);

    Var o("o"), to("to"), oi("oi"), ti("ti");
    const std::vector<Func> per_token{mx, s, chosen};
    if (gpu) {  // one thread per (expert, token) for the ranks, per (slot, token) for the outputs; p and the slots
                // recomputed where used (fewer device intermediates)
      for (Func f : {mx, s, chosen}) f.compute_root().gpu_tile(t, to, ti, gpu_threads, kGuard);
      chosen.update().gpu_tile(t, to, ti, gpu_threads, kGuard);  // its sum over the slots too: no stage on the host
      rank.compute_root().gpu_tile(i, t, o, to, oi, ti, gpu_threads, 1, kGuard);
      for (Func f : {Func(expert), Func(weight)}) f.gpu_tile(j, t, o, to, oi, ti, 8, 1, kGuard);
      return;
    }
    // Every stage once per token (the ranks' E x E comparisons are the work), tokens in parallel tasks.
    for (Func f : {mx, s, p, rank, slot, chosen}) f.compute_root();
    if (rows_per_task > 0)
      for (Func f : {mx, s, p, rank, slot, chosen, Func(expert), Func(weight)})
        f.split(t, to, ti, rows_per_task, kGuard).parallel(to);
    if (vec > 1) p.vectorize(i, vec, kGuard), rank.vectorize(i, vec, kGuard);
  }

 private:
  Func mx{"mx"}, e{"e"}, s{"s"}, p{"p"}, rank{"rank"}, slot{"slot"}, chosen{"chosen"};
};

}  // namespace hl::halide_gen

HALIDE_REGISTER_GENERATOR(hl::halide_gen::MoeRouter, hl_moe_router)
