#!/usr/bin/env bash
# make fuzz's prerequisites: clang++ with libFuzzer and the sanitizer runtimes, and LLVM's OpenMP (the libraries the
# fuzz targets link are built with clang too). Prints the Debian 12 packages to install when something is missing.
set -u
CXX=${1:-clang++}
missing=()
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
if ! command -v "$CXX" >/dev/null; then
  missing=(clang libclang-rt-14-dev libomp-14-dev)
else
  echo 'extern "C" int LLVMFuzzerTestOneInput(const unsigned char*, unsigned long) { return 0; }' >"$t/f.cpp"
  "$CXX" -fsanitize=fuzzer,address,undefined "$t/f.cpp" -o "$t/f" 2>/dev/null || missing+=(libclang-rt-14-dev)
  printf '#include <omp.h>\nint main() { return omp_get_max_threads() > 0 ? 0 : 1; }\n' >"$t/o.cpp"
  "$CXX" -fopenmp "$t/o.cpp" -o "$t/o" 2>/dev/null || missing+=(libomp-14-dev)
fi
if [ ${#missing[@]} -gt 0 ]; then
  echo "make fuzz: $CXX with libFuzzer and OpenMP is needed; on Debian 12, as root:" >&2
  echo "  apt-get update && apt-get install -y --no-install-recommends ${missing[*]}" >&2
  exit 1
fi
