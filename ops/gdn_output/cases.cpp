// gdn_output: its cases, at test, quick and full scale (inputs, shapes, the bytes and flops each must move and
// compute), which its tests run.
#include "ops/cases.h"
#include "ops/ssm_scan/scan_inputs.h"

namespace hl::gpu {

namespace {

// The scan's inputs as ssm_scan's cases draw them (scan_inputs.h), a gate z and a gain around 1. Bytes: the scan's (its state read and written once) plus z, gain and
// y; flops: the scan's ~7 d_k d_v per value head and token.
Case output_case(int64_t T, int64_t nk, int64_t nv, int64_t dk, int64_t dv, bool tiled) {
  Case c;
  c.label = fmt::format("T={} {} key / {} value heads of {} x {}{}", T, nk, nv, dk, dv, tiled ? " tiled head order" : "");
  c.group = T == 1 ? "decode" : "prefill";
  c.shape = {{"T", double(T)}, {"key_heads", double(nk)}, {"value_heads", double(nv)}, {"d_k", double(dk)}, {"d_v", double(dv)}};
  c.cost = {4.0 * double(T * (2 * nk * dk + 3 * nv * dv + 2 * nv) + 2 * nv * dk * dv + dv), 7.0 * double(T * nv * dk * dv)};
  c.inputs = [=](std::mt19937_64& g) {
    OpArgs a = scan_inputs(g, T, nk, nv, dk, dv, tiled);
    a.set("z", Tensor::from(randn(g, T, nv * dv)));
    a.w.emplace("gain", weight("gain", randn(g, 1, dv, 0.1, 1.0)));
    a.p["eps"] = 1e-6;
    return a;
  };
  return c;
}

std::vector<Case> cases(Scale s) {
  std::vector<Case> v;
  if (s == Scale::Test) {
    v.push_back(output_case(1, 2, 4, 128, 128, false));  // the model's head shape
    v.push_back(output_case(1, 2, 6, 48, 40, true));     // odd head dims, 3 value heads per key head, GGUF's order
    v.push_back(output_case(3, 1, 2, 32, 64, false));    // a few tokens
    return v;
  }
  const int64_t nk = s == Scale::Quick ? 2 : 16;
  v.push_back(output_case(1, nk, 2 * nk, 128, 128, true));
  return v;
}

// The scan's f32 recurrence summed in other orders (ssm_scan's 1e-4), then a norm that scales by the head's RMS:
// relative errors carry over unchanged.
constexpr double kTolerance = 1e-4;

}  // namespace

OpDef gdn_output_with_cases(OpDef d) {
  d.cases = cases;
  d.tolerance = kTolerance;
  return d;
}

}  // namespace hl::gpu
