#!/usr/bin/env bash
# One batch of kernel experiments on a lent GPU machine (the `device` tool), in one call: the device, the tiny
# model validated with every op on Vulkan, then experiments with optional case filters and tags.
# Expects .devrun/ (hybridlab built here and its libraries) and .gl/ (Debian's Vulkan loader .debs) carried.
# Writes $OUT/log.txt, $OUT/exp-*.log and $OUT/reports.tar.gz.
#   usage: scripts/device_kernels.sh 'name:limit_s[:cases regex:tag[:runs]]' ...  (a cases filter needs a tag)
set -u
for f in .gl/*.deb; do dpkg -x "$f" / >/dev/null 2>&1; done
ldconfig
export LD_LIBRARY_PATH=$PWD/.devrun/lib:${LD_LIBRARY_PATH:-}
export HYBRIDLAB_ROOT=$PWD HYBRIDLAB_PYTHON=python3
# The commit the binary was built from (.devrun/COMMIT, written beside it here): the copy sent lacks current git metadata.
[ -f .devrun/COMMIT ] && export HYBRIDLAB_COMMIT=$(cat .devrun/COMMIT)
[ -f /usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json ] && export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
bin=.devrun/hybridlab
log=$OUT/log.txt
{
  echo "== devices"; $bin devices 2>&1 | head -12
  $bin ops 2>&1 | grep -i "coopmat\|UNAVAILABLE" | head -12
  echo "== tiny model, every op on Vulkan, validate"
  python3 -c "import random; random.seed(3); print(' '.join(str(random.randrange(512)) for _ in range(162)))" > /tmp/tok.txt
  timeout 60 $bin run --model golden/hf-tiny/model --tokens /tmp/tok.txt --out /tmp/v.safetensors --ops '*=vulkan' --validate \
      --prefill-chunk 100 --decode-from 150 2>&1 | tail -30; echo "exit $?"
  for spec in "$@"; do
    IFS=: read -r e limit cases tag runs <<< "$spec"
    args=(--full)
    [ -n "${cases:-}" ] && args+=(--cases "$cases")
    [ -n "${tag:-}" ] && args+=(--tag "$tag")
    [ -n "${runs:-}" ] && args+=(--runs "$runs")
    echo "== experiment $e ${args[*]} (limit $limit s)"; start=$(date +%s)
    timeout "$limit" $bin experiment "$e" "${args[@]}" > "$OUT/exp-$e${tag:+-$tag}.log" 2>&1
    echo "exit $? after $(( $(date +%s) - start )) s"
    grep -v '^  ' "$OUT/exp-$e${tag:+-$tag}.log" | tail -25
    tar czf "$OUT/reports.tar.gz" reports  # after each: a batch cut short still returns what it finished
  done
} > "$log" 2>&1
tar czf "$OUT/reports.tar.gz" reports
tail -120 "$log"
