#!/usr/bin/env bash
# Installs what hybridlab needs on Debian 12, and nothing else.
# As root: apt-get installs the missing packages. Otherwise: prints the exact command and fails.
set -euo pipefail

PACKAGES=(
  g++ cmake ninja-build pkg-config git          # toolchain
  libeigen3-dev                                  # oracle (OpenMP is libgomp, part of g++)
  catch2                                         # tests (Catch2 2.x)
  nlohmann-json3-dev libcli11-dev libfmt-dev     # config JSON, command line, formatting
  libvulkan-dev mesa-vulkan-drivers vulkan-validationlayers   # Vulkan loader, lavapipe, validation
  glslc libshaderc-dev                           # GLSL -> SPIR-V at build time and at run time
  python3 python3-matplotlib                     # report plots
)

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

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
