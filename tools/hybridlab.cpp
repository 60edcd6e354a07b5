// hybridlab: the command line. Subcommands live in tools/cmd_*.cpp; here only parsing and the one-line
// error every failure becomes.
#include <cstdio>

#include "tools/commands.h"

int main(int argc, char** argv) {
  CLI::App app{"hybridlab: a kernel playground for the Qwen3.6-35B-A3B hybrid model"};
  app.require_subcommand(1);
  hl::cli::add_run_command(app);
  hl::cli::add_ops_commands(app);
  hl::cli::add_experiment_commands(app);
  hl::cli::add_model_commands(app);
  hl::cli::add_gguf_commands(app);
  hl::cli::add_bench_command(app);
  try {
    app.parse(argc, argv);  // runs the chosen subcommand's callback
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {  // one line, like every other error
    std::fprintf(stderr, "hybridlab: error: %s (see --help)\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "hybridlab: error: %s\n", e.what());
    return 1;
  }
  return 0;
}
