#!/usr/bin/env bash
# Experiments under several tunable settings in one call on a lent GPU machine (the `device` tool): each argument
# 'name|cases regex|variant|HYBRIDLAB_TUNE value|tag' runs `experiment name --full` on those cases and that variant
# with that tuning, tagged. Expects .devrun/ (hybridlab built here and its libraries) and .gl/ (Debian's Vulkan
# loader .debs) carried. Writes $OUT/log.txt, $OUT/tune-<tag>.log and $OUT/reports.tar.gz.
set -u
for f in .gl/*.deb; do dpkg -x "$f" / >/dev/null 2>&1; done
ldconfig
export LD_LIBRARY_PATH=$PWD/.devrun/lib:${LD_LIBRARY_PATH:-}
export HYBRIDLAB_ROOT=$PWD HYBRIDLAB_PYTHON=python3
# The commit the binary was built from (.devrun/COMMIT, written beside it here): the copy sent lacks current git metadata.
[ -f .devrun/COMMIT ] && export HYBRIDLAB_COMMIT=$(cat .devrun/COMMIT)
[ -f /usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json ] && export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
bin=.devrun/hybridlab
{
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv 2>&1 | tail -1
  for spec in "$@"; do
    IFS='|' read -r e cases variant tune tag <<< "$spec"
    echo "== $e [$cases] $variant HYBRIDLAB_TUNE=$tune -> $tag"; start=$(date +%s)
    HYBRIDLAB_TUNE="$tune" timeout 120 $bin experiment "$e" --full --cases "$cases" --variant "$variant" --tag "$tag" \
      --runs 20 --time-failing ${CHAIN:+--chain "$CHAIN"} > "$OUT/tune-$tag.log" 2>&1
    echo "exit $? after $(( $(date +%s) - start )) s"
    grep -E "^\| vulkan" reports/*/"$e-$tag.md" | head -12
  done
} > "$OUT/log.txt" 2>&1
tar czf "$OUT/reports.tar.gz" reports
cat "$OUT/log.txt"
