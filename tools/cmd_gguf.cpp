// `hybridlab convert` and `hybridlab synth`: GGUF files from an HF checkpoint or synthetic weights.
#include "tools/commands.h"

namespace hl::cli {

void add_gguf_commands(CLI::App& app) {}

}  // namespace hl::cli
