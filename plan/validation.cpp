#include "plan/validation.h"

namespace hl::gpu {

void Validation::run(VariantCtx& c, const std::string& op, const Variant& v, OpArgs& a, int layer, const std::string& where,
                     const std::function<void()>& run_variant) {
  OpArgs ref = a;
  for (auto& [name, t] : ref.t) t = t.clone();
  if (run_variant) run_variant();
  else v.run(c, a);
  try {
    Registry::get().variant(op, "reference").run(c, ref);
  } catch (const std::exception& e) {
    fail("validate: the reference of op {} at {} cannot run on the inputs the plan's variants made: {}", op,
         layer < 0 ? std::string("model level") : fmt::format("layer {}{}", layer, where.empty() ? "" : " (" + where + ")"),
         e.what());
  }
  const OpDef& def = Registry::get().op(op);
  // States with a capacity (a KV cache and its kv_len): only rows [0, kv_len + T) hold data.
  const int64_t rows = a.p.count("kv_len") ? a.iparam("kv_len") + a.in(def.inputs.at(0)).rows() : -1;
  OpErrorStats& s = stats_[op];
  s.calls++;
  s.variants.insert(v.name);
  for (auto& name : def.outputs_set(ref)) compare(op, name, a.t.at(name), ref.t.at(name), -1, layer);
  for (auto& name : def.states) compare(op, name, a.t.at(name), ref.t.at(name), rows, layer);
}

void Validation::compare(const std::string& op, const std::string& name, const Tensor& got, const Tensor& want,
                         int64_t rows, int layer) {
  OpErrorStats& s = stats_[op];
  if (got.rows() != want.rows() || got.cols() != want.cols() || got.type() != want.type())
    fail("validate: {} output '{}' is [{}, {}], the reference's [{}, {}]", op, name, got.rows(), got.cols(), want.rows(),
         want.cols());
  if (rows < 0) rows = got.rows();
  if (got.type() == Tensor::Type::I32) {
    s.ids_total += rows * got.cols();
    s.ids_mismatch += (got.i32().topRows(rows).array() != want.i32().topRows(rows).array()).count();
    return;
  }
  const auto g = got.f32().topRows(rows), w = want.f32().topRows(rows);
  const int64_t bad = g.size() - g.array().isFinite().count();
  if (bad) {
    s.nonfinite += bad;
    if (s.first_nonfinite_layer == -2) {
      s.first_nonfinite_layer = layer;
      nonfinite_order_.emplace_back(op, layer);
    }
    return;
  }
  const double abs = g.size() ? max_abs(g, w) : 0, rel = rel_l2(g, w);
  s.max_abs = std::max(s.max_abs, abs);
  if (rel >= s.max_rel_l2) {
    s.max_rel_l2 = rel;
    s.worst_layer = layer;
    s.worst_output = name;
  }
}

std::string Validation::report() const {
  std::string s = fmt::format("{:<18} {:<24} {:>6} {:>11} {:>11} {:>11} {}\n", "op", "variant", "calls", "max abs",
                              "rel L2", "worst layer", "notes");
  for (auto& [op, st] : stats_) {
    std::string notes, variants;
    for (auto& v : st.variants) variants += (variants.empty() ? "" : ", ") + v;
    if (st.nonfinite)
      notes += fmt::format("{} NaN/Inf values, first at layer {}; ", st.nonfinite, st.first_nonfinite_layer);
    if (st.ids_total)
      notes += fmt::format("routing agreement {:.4f} ({} of {} expert ids differ); ",
                           1.0 - double(st.ids_mismatch) / double(st.ids_total), st.ids_mismatch, st.ids_total);
    if (!st.worst_output.empty()) notes += "worst output '" + st.worst_output + "'";
    s += fmt::format("{:<18} {:<24} {:>6} {:>11.3e} {:>11.3e} {:>11} {}\n", op, variants, st.calls, st.max_abs, st.max_rel_l2,
                     st.worst_layer < 0 ? std::string("model") : std::to_string(st.worst_layer), notes);
  }
  auto at = [](int layer) { return layer < 0 ? std::string("model level (outside the layers)") : fmt::format("layer {}", layer); };
  for (size_t i = 0; i < nonfinite_order_.size(); ++i)
    s += i == 0 ? fmt::format("first NaN/Inf: op {} at {}", nonfinite_order_[i].first, at(nonfinite_order_[i].second))
                : fmt::format("{} op {} at {}", i == 1 ? "; then" : ",", nonfinite_order_[i].first, at(nonfinite_order_[i].second));
  if (!nonfinite_order_.empty()) s += "\n";
  return s;
}

}  // namespace hl::gpu
