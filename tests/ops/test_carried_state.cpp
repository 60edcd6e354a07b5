// Every op that carries a state (conv state, recurrent state, KV cache), every Vulkan variant the device runs: each of
// the op's cases several times on fresh inputs, every call against the reference. A kernel that updates its state in
// place is right only if no workgroup writes an element that another one still has to read; such a race shows now
// and then (lavapipe runs workgroups on several threads too), so one call per case can miss it.
#include "variant_check.h"

using namespace hl;
using namespace hl::test;

TEST_CASE("vk ops: the ops that carry a state match the reference on every one of many calls", "[ops][state]") {
  int ops = 0;
  for (const gpu::OpDef& def : gpu::Registry::get().ops())
    if (!def.states.empty() && def.cases) {
      INFO(def.name);
      check_every_variant(def.name, {}, 6);
      ++ops;
    }
  CHECK(ops >= 5);  // ssm_conv, gdn_prep, ssm_scan, attention, attention_decode, gdn_decode, gdn_output
}
