// gdn_prep's Halide variants against the reference: every one on the op's cases (odd head widths among them; each
// case carries a random conv state in, and the new state is compared too).
#include "halide_check.h"

using namespace hl;
using namespace hl::test;

HL_TEST_EVERY_HALIDE_VARIANT("gdn_prep")
