#!/usr/bin/env bash
# Installs what hybridlab needs on Debian 12, and nothing else.
# As root: apt-get installs the missing packages. Otherwise: prints the exact command and fails.
# Then the project-local Python environment .venv/ (Halide 21, the CMake >= 3.28 its package needs, and the
# glslang / SPIRV-Tools that build the cooperative-matrix shaders, pinned in scripts/requirements-halide.txt),
# recreated when that file changes. The test tools (gguf-py, pinned in scripts/requirements-tools.txt) are
# installed into the same .venv/ when their file changes.
set -euo pipefail

PACKAGES=(
  g++ cmake ninja-build pkg-config git          # toolchain
  libeigen3-dev                                  # oracle (OpenMP is libgomp, part of g++)
  catch2                                         # tests (Catch2 2.x)
  nlohmann-json3-dev libcli11-dev libfmt-dev     # config JSON, command line, formatting
  libvulkan-dev mesa-vulkan-drivers vulkan-validationlayers   # Vulkan loader, lavapipe, validation
  glslc libshaderc-dev                           # GLSL -> SPIR-V at build time and at run time
  python3 python3-matplotlib                     # report plots
  python3-venv                                   # .venv/ for Halide 21 from PyPI (below)
)

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

# .venv/: Halide 21, CMake, glslang and SPIRV-Tools from PyPI, pinned. A stamp (a copy of the requirements file) says it is current.
halide_venv() {
  local root req venv
  root="$(cd "$(dirname "$0")/.." && pwd)"
  req="$root/scripts/requirements-halide.txt"
  venv="$root/.venv"
  cmp -s "$req" "$venv/.requirements-halide.txt" && [ -x "$venv/bin/cmake" ] && [ -x "$venv/bin/glslangValidator" ] && return 0
  echo "hybridlab: creating $venv (Halide 21, CMake, glslang, SPIRV-Tools; scripts/requirements-halide.txt)"
  rm -rf "$venv"
  /usr/bin/python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet --disable-pip-version-check --no-input -r "$req"
  cp "$req" "$venv/.requirements-halide.txt"
}

# gguf-py and its dependencies, on top of whatever .venv/ holds; a stamp (a copy of the file) says it is current.
tools_venv() {
  local root req venv
  root="$(cd "$(dirname "$0")/.." && pwd)"
  req="$root/scripts/requirements-tools.txt"
  venv="$root/.venv"
  cmp -s "$req" "$venv/.requirements-tools.txt" && [ -x "$venv/bin/python3" ] && return 0
  echo "hybridlab: installing the test tools into $venv (gguf-py; scripts/requirements-tools.txt)"
  [ -x "$venv/bin/python3" ] || /usr/bin/python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet --disable-pip-version-check --no-input -r "$req"
  cp "$req" "$venv/.requirements-tools.txt"
}

if [ ${#missing[@]} -eq 0 ]; then
  halide_venv
  tools_venv
  exit 0
fi

cmd="apt-get install -y --no-install-recommends ${missing[*]}"
if [ "$(id -u)" -ne 0 ]; then
  echo "hybridlab: missing Debian packages: ${missing[*]}" >&2
  echo "hybridlab: run as root:  apt-get update && $cmd" >&2
  exit 1
fi
echo "hybridlab: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}"
halide_venv
tools_venv
