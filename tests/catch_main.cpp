// The test binaries' main: Catch2's session, then what the tests registered for teardown (hl_test_at_teardown),
// released before static destruction. A Vulkan device destroyed among the statics would submit its last work after
// the validation layer's own lazily made statics are gone (it then spun in the layer's freed maps at exit).
// Tests run under the validation layers and with two OpenMP threads unless the environment says otherwise
// (catch_discover_tests passes only the first of several ENVIRONMENT entries).
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include <cstdlib>
#include <vector>

namespace {
std::vector<void (*)()>& teardown() {
  static std::vector<void (*)()> fns;
  return fns;
}
}  // namespace

extern "C" void hl_test_at_teardown(void (*fn)()) { teardown().push_back(fn); }

int main(int argc, char* argv[]) {
  setenv("HYBRIDLAB_VALIDATION", "1", 0);
  setenv("OMP_NUM_THREADS", "2", 0);
  const int rc = Catch::Session().run(argc, argv);
  for (auto it = teardown().rbegin(); it != teardown().rend(); ++it) (*it)();
  teardown().clear();
  return rc;
}
