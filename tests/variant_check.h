// Checking a variant against the reference on identical inputs: the shared machinery of every per-op
// GPU test (and the model of validate mode). Inputs are fresh random data, never zeros.
#pragma once
#include <catch2/catch.hpp>

#include <memory>

#include "ops/registry.h"
#include "ops/vulkan_variant.h"
#include "ops/cases.h"
#include "test_util.h"

namespace hl::test {

// One Vulkan device for the whole test binary (validation layers on through HYBRIDLAB_VALIDATION=1), released after
// the tests (hl_test_at_teardown).
inline std::unique_ptr<gpu::Device>& device_slot() {
  static std::unique_ptr<gpu::Device> d;
  return d;
}
inline gpu::Device& device() {
  auto& d = device_slot();
  if (!d) {
    d = std::make_unique<gpu::Device>();
    hl_test_at_teardown([] { device_slot().reset(); });
  }
  return *d;
}

// Fails the current test if the validation layers said anything since the last call.
inline void require_no_validation_messages() {
  auto& ctx = device().ctx();
  const auto msgs = ctx.validation_messages();
  ctx.clear_validation_messages();
  INFO((msgs.empty() ? std::string() : msgs.front()));
  REQUIRE(msgs.empty());
}

struct OutputError {
  double rel_l2 = 0, max_abs = 0;
  int64_t mismatched = 0;  // integer outputs
  bool finite = true;
};

// Runs `variant` of `op` and the reference on copies of the same OpArgs; compares every output and state
// (states of an op with a kv_len parameter: only rows [0, kv_len + T)). Returns errors by name. dev: another
// device than device() (e.g. coopmat_device()).
inline std::map<std::string, OutputError> compare_with_reference(const std::string& op, const std::string& variant,
                                                                 const gpu::OpArgs& args, gpu::Device* dev = nullptr,
                                                                 gpu::VariantCtx* with = nullptr) {
  const auto& reg = gpu::Registry::get();
  gpu::WeightStore ws(dev ? dev : &device());
  gpu::VariantCtx own{dev ? dev : &device(), &ws};
  gpu::VariantCtx& ctx = with ? *with : own;  // with: the caller's weight store (state kept there between calls)
  gpu::OpArgs got = args, want = args;
  for (auto& [n, t] : got.t) t = t.clone();
  for (auto& [n, t] : want.t) t = t.clone();
  reg.variant(op, variant).run(ctx, got);
  reg.variant(op, "reference").run(ctx, want);
  const gpu::OpDef& def = reg.op(op);
  std::vector<std::string> names = def.outputs_set(want);
  names.insert(names.end(), def.states.begin(), def.states.end());
  // Caches: only rows [0, kv_len + T) are compared (T: the first input's rows, the tokens).
  const int64_t rows = args.p.count("kv_len") ? args.iparam("kv_len") + args.in(def.inputs.front()).rows() : -1;
  std::map<std::string, OutputError> out;
  for (auto& n : names) {
    const Tensor &g = got.t.at(n), &w = want.t.at(n);
    REQUIRE(g.rows() == w.rows());
    REQUIRE(g.cols() == w.cols());
    const int64_t r = rows < 0 || def.outputs.end() != std::find(def.outputs.begin(), def.outputs.end(), n) ? g.rows() : rows;
    OutputError e;
    if (g.type() == Tensor::Type::I32) {
      e.mismatched = (g.i32().topRows(r).array() != w.i32().topRows(r).array()).count();
    } else {
      const Mat<float> gm = g.f32().topRows(r), wm = w.f32().topRows(r);
      REQUIRE(wm.cwiseAbs().maxCoeff() > 0);  // a comparison against all zeros proves nothing
      e.finite = gm.allFinite();
      e.rel_l2 = rel_l2(gm, wm);
      e.max_abs = max_abs(gm, wm);
    }
    out[n] = e;
  }
  if (!dev || dev == &device()) require_no_validation_messages();
  return out;
}

// The device that kernels on real cooperative matrices run on (gpu::coopmat_unavailable): the tests' device
// where it can; else, where validation layers older than VK_KHR_cooperative_matrix kept the extension off
// (runtime/vulkan/context.cpp), the same device opened without validation; else none (lavapipe). `why` says why not.
inline gpu::Device* coopmat_device(std::string* why = nullptr) {
  static std::unique_ptr<gpu::Device> own;
  static std::string reason;
  static gpu::Device* d = []() -> gpu::Device* {
    reason = gpu::coopmat_unavailable(device(), false);
    if (reason.empty()) return &device();
    if (!device().ctx().validation_enabled()) return nullptr;
    own = std::make_unique<gpu::Device>(
        vk::ContextOptions{.device = std::to_string(device().info().index), .validation = false});
    hl_test_at_teardown([] { own.reset(); });
    reason = gpu::coopmat_unavailable(*own, false);
    if (!reason.empty()) return nullptr;
    WARN("cooperative matrices only without the validation layers: the coopmat tests run unvalidated");
    return own.get();
  }();
  if (why) *why = reason;
  return d;
}

// coopmat_device(), or null after a WARN naming why `what` (a variant) is skipped.
inline gpu::Device* coopmat_or_skip(const std::string& what) {
  std::string why;
  gpu::Device* d = coopmat_device(&why);
  if (!d) WARN("SKIPPED: " << what << " needs cooperative matrices: " << device().info().name << ": " << why);
  return d;
}

// Every output within `tol` relative L2 (and every integer output identical).
// tol: the f32 rounding bound of the check; a variant that declares lower precision (precision_tolerance) is
// held to that instead where it is larger.
inline void require_close(const std::string& op, const std::string& variant, const gpu::OpArgs& args, double tol) {
  tol = std::max(tol, gpu::Registry::get().variant(op, variant).precision_tolerance);
  for (auto& [name, e] : compare_with_reference(op, variant, args)) {
    INFO(op << " " << variant << " output '" << name << "': rel L2 " << e.rel_l2 << ", max abs " << e.max_abs);
    CHECK(e.finite);
    CHECK(e.rel_l2 <= tol);
    CHECK(e.mismatched == 0);
  }
}

// As require_close, on the second of two calls with one weight store: `variant` runs on `first`, then on `args`, and
// that call is compared. For variants that keep state in the store between calls (a ticket counter that each call
// must leave as it found it).
inline void require_close_second_call(const std::string& op, const std::string& variant, const gpu::OpArgs& first,
                                      const gpu::OpArgs& args, double tol) {
  tol = std::max(tol, gpu::Registry::get().variant(op, variant).precision_tolerance);
  gpu::WeightStore ws(&device());
  gpu::VariantCtx ctx{&device(), &ws};
  gpu::OpArgs warm = first;
  for (auto& [n, t] : warm.t) t = t.clone();
  gpu::Registry::get().variant(op, variant).run(ctx, warm);
  for (auto& [name, e] : compare_with_reference(op, variant, args, nullptr, &ctx)) {
    INFO(op << " " << variant << " output '" << name << "' on a second call: rel L2 " << e.rel_l2);
    CHECK(e.finite);
    CHECK(e.rel_l2 <= tol);
  }
}

// The variant the plan runs when it names `variant` for these inputs: its delegates followed (e.g. the quantized GEMMs
// hand a reduction that is not whole 64-value steps to the kernels that take it).
inline std::string resolved(const std::string& op, const std::string& variant, const gpu::OpArgs& args) {
  gpu::WeightStore ws(&device());
  gpu::VariantCtx ctx{&device(), &ws};
  const auto& reg = gpu::Registry::get();
  return reg.resolve(reg.variant(op, variant), ctx, args).name;
}

// Weights for OpArgs from host matrices.
inline WeightRef weight(const std::string& name, Mat<float> m) { return whole(host_source(name, std::move(m))); }

// A decode variant on matmul's qmatvec_direct kernel (its tunables under "<op>.qmatvec_direct.*") against the reference
// on its op's Test cases under other tunings: 32 invocations a row per pass (the most workgroups), one workgroup walking
// every row, f32 products instead of x16, 256 x 3 rows (Hopper's).
inline void check_qmatvec_direct_tunings(const std::string& op, const std::string& variant, uint64_t seed) {
  auto& prof = device().ctx().profile();
  const gpu::OpDef& def = gpu::Registry::get().op(op);
  const std::string k = op + ".qmatvec_direct.";
  for (const auto& [wg, rows, groups, x16] :
       {std::tuple{32u, 1u, 0u, 1u}, {128u, 4u, 1u, 1u}, {64u, 2u, 0u, 0u}, {256u, 3u, 0u, 1u}}) {
    const vk::ScopedTuning scope(prof, {{k + "wg", wg}, {k + "rows", rows}, {k + "groups", groups}, {k + "x16", x16}});
    for (const auto& c : def.cases(gpu::Scale::Test)) {
      INFO("wg " << wg << ", rows " << rows << ", groups " << groups << ", x16 " << x16 << ", " << c.label);
      std::mt19937_64 g(seed);
      require_close(op, variant, c.inputs(g), def.tolerance);
    }
  }
}

// A variant with a norm folded in refuses, with an error saying they do not fit, an `input` (the residual, the addend
// or the gate) of another width and a gain of another width, on its op's first Test case.
inline void check_refuses_misfit(const std::string& op, const std::string& variant, const std::string& input, uint64_t seed) {
  std::mt19937_64 g(seed);
  const gpu::OpArgs a = gpu::Registry::get().op(op).cases(gpu::Scale::Test).at(0).inputs(g);
  gpu::WeightStore ws(&device());
  gpu::VariantCtx ctx{&device(), &ws};
  const auto& v = gpu::Registry::get().variant(op, variant);
  gpu::OpArgs bad_input = a;
  bad_input.set(input, Tensor::from(gpu::randn(g, 1, 100)));
  CHECK_THROWS_WITH(v.run(ctx, bad_input), Catch::Contains("do not fit"));
  gpu::OpArgs bad_gain = a;
  bad_gain.w.at("gain") = weight("gain", gpu::randn(g, 1, 7));
  CHECK_THROWS_WITH(v.run(ctx, bad_gain), Catch::Contains("do not fit"));
}

// Every Vulkan variant of an op (quantized: only those that read quantized weights; else those that take f32).
inline std::vector<std::string> vulkan_variants(const std::string& op, bool quantized = false) {
  std::vector<std::string> v;
  for (auto* x : gpu::Registry::get().variants(op))
    if (x->family == "vulkan" && (quantized || !x->quantized_weights_only) &&
        gpu::Registry::get().availability(*x, &device()).empty())  // e.g. cooperative-matrix builds
      v.push_back(x->name);
  return v;
}

// One variant of `op` against the reference on each of the op's Scale::Test cases it takes (fresh inputs from a
// fixed seed), held to the op's tolerance or its precision_tolerance; returns the largest relative L2 it showed.
inline double check_variant_on_cases(const std::string& op, const std::string& variant) {
  const auto& reg = gpu::Registry::get();
  const gpu::OpDef& def = reg.op(op);
  const gpu::Variant& v = reg.variant(op, variant);
  const double tol = std::max(def.tolerance, v.precision_tolerance);
  const std::vector<gpu::Case> cases = def.cases(gpu::Scale::Test);
  double worst = 0;
  int checked = 0;
  for (size_t i = 0; i < cases.size(); ++i) {
    std::mt19937_64 g(1000 + i);
    const gpu::OpArgs args = cases[i].inputs(g);
    if (!v.takes(args)) continue;
    gpu::WeightStore ws(&device());
    gpu::VariantCtx ctx{&device(), &ws};
    if (!v.delegates_only && reg.resolve(v, ctx, args).name != v.name) continue;  // a case it hands to another kernel
    for (auto& [name, e] : compare_with_reference(op, variant, args)) {
      INFO(op << " " << variant << " on " << cases[i].label << ", output '" << name << "': rel L2 " << e.rel_l2
              << " (tolerance " << tol << ")");
      CHECK(e.finite);
      CHECK(e.rel_l2 <= tol);
      CHECK(e.mismatched == 0);
      worst = std::max(worst, e.rel_l2);
    }
    ++checked;
  }
  CHECK(checked > 0);
  return worst;
}

// Every variant of `op` whose family is `families` (a list of family names, "" for every non-reference family but
// Halide's, which test_halide checks) against the reference on each of the op's Scale::Test cases (fresh inputs from
// a fixed seed), held to the op's tolerance or the variant's precision_tolerance, whichever is larger. A variant
// skips the cases whose weights it does not read (Variant::takes); variants the device cannot run are named and
// skipped. `calls` > 1: each case that many times, fresh inputs each time (the first call's as with 1), every call
// checked: for variants that update a state in place, where a race between tasks shows now and then.
inline void check_every_variant(const std::string& op, const std::vector<std::string>& families = {}, int calls = 1) {
  const auto& reg = gpu::Registry::get();
  const gpu::OpDef& def = reg.op(op);
  REQUIRE(def.cases);
  const std::vector<gpu::Case> cases = def.cases(gpu::Scale::Test);
  REQUIRE(!cases.empty());
  int checked = 0;
  for (const gpu::Variant* v : reg.variants(op)) {
    const bool halide = v->family.rfind("halide", 0) == 0;
    const bool wanted = families.empty() ? v->family != "reference" && !halide
                                         : std::find(families.begin(), families.end(), v->family) != families.end();
    if (!wanted) continue;
    if (const std::string why = reg.availability(*v, &device()); !why.empty()) {
      WARN("SKIPPED: " << op << " " << v->name << " on " << device().info().name << ": " << why);
      continue;
    }
    for (size_t i = 0; i < cases.size(); ++i) {
      std::mt19937_64 g(1000 + i);
      for (int call = 0; call < calls; ++call) {
        const gpu::OpArgs args = cases[i].inputs(g);
        if (!v->takes(args)) break;
        gpu::WeightStore ws(&device());
        gpu::VariantCtx ctx{&device(), &ws};
        if (!v->delegates_only && reg.resolve(*v, ctx, args).name != v->name) break;  // handed to another kernel
        // A delegating variant (vulkan:auto) is held to the precision of the kernel it picks.
        const double tol = std::max({def.tolerance, v->precision_tolerance, reg.resolve(*v, ctx, args).precision_tolerance});
        for (auto& [name, e] : compare_with_reference(op, v->name, args)) {
          INFO(op << " " << v->name << " on " << cases[i].label << " (call " << call + 1 << " of " << calls << "), output '"
                  << name << "': rel L2 " << e.rel_l2 << " (tolerance " << tol << "), max abs " << e.max_abs << ", "
                  << e.mismatched << " integers differ");
          CHECK(e.finite);
          CHECK(e.rel_l2 <= tol);
          CHECK(e.mismatched == 0);
        }
        ++checked;
      }
    }
  }
  CHECK(checked > 0);  // at least one variant checked on at least one case
}

}  // namespace hl::test

// One test per op: every variant against the reference on the op's cases.
#define HL_TEST_EVERY_VARIANT(op) \
  TEST_CASE(op ": every variant against the reference on its cases", "[ops][every]") { hl::test::check_every_variant(op); }

