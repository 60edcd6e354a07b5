// Shared by the fuzz targets (tests/fuzz/fuzz_<name>.cpp). Each target's LLVMFuzzerTestOneInput feeds one
// input to a parser and accepts exactly two outcomes: success, or the parser's own error type with a
// non-empty one-line message (the command line's contract). Anything else (another exception type, a
// multi-line message, a sanitizer report, a crash) aborts, which libFuzzer and the corpus replay
// (replay_main.cpp, built with gcc in the normal test suite) report as a failure.
#pragma once
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <string_view>

namespace hl::fuzz {

[[noreturn]] inline void finding(std::string_view what, std::string_view detail) {
  std::fprintf(stderr, "fuzz finding: %.*s: %.*s\n", int(what.size()), what.data(), int(detail.size()), detail.data());
  std::abort();
}

// Runs f; Error (the parser's documented error type) must carry a non-empty one-line message; any other
// exception escapes to std::terminate, i.e. it is a finding.
template <class Error, class F> void expect_ok_or(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    const std::string_view m = e.what();
    if (m.empty()) finding("empty error message", "");
    if (m.find_first_of("\r\n") != std::string_view::npos) finding("error message spans several lines", m);
  }
}

// A scratch directory of this process (under /dev/shm when there is one: fuzzers write a file per input),
// removed at exit (the string is never destroyed, so the exit handler may still read it).
inline const std::string& scratch_dir() {
  static const std::string& dir = *new std::string([] {
    const char* base = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
    const std::string d = std::string(base) + "/hybridlab-fuzz-" + std::to_string(getpid());
    std::filesystem::create_directories(d);
    std::atexit([] {
      std::error_code ec;
      std::filesystem::remove_all(scratch_dir(), ec);
    });
    return d;
  }());
  return dir;
}

// Writes bytes to scratch_dir()/name and returns the path.
inline std::string write_scratch(const std::string& name, const uint8_t* data, size_t size) {
  const std::string path = scratch_dir() + "/" + name;
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (!f || (size && std::fwrite(data, 1, size, f) != size) || std::fclose(f) != 0) finding("cannot write", path);
  return path;
}

}  // namespace hl::fuzz
