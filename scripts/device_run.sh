#!/usr/bin/env bash
# One batch on a lent GPU machine (the `device` tool): everything the reports need, in one call.
# Expects, carried beside the working tree: .devrun/ (hybridlab built here, libfmt) and .gl/ (Debian's
# Vulkan loader .debs). Writes $OUT/reports.tar.gz (reports/<device>/...) and $OUT/log.txt.
#   usage: [EXP_TIMEOUT=s] scripts/device_run.sh [experiment[:seconds] ...]   (default: all, full shapes)
set -u
for f in .gl/*.deb; do dpkg -x "$f" / >/dev/null 2>&1; done
ldconfig
export LD_LIBRARY_PATH=$PWD/.devrun/lib:${LD_LIBRARY_PATH:-}
export HYBRIDLAB_ROOT=$PWD HYBRIDLAB_PYTHON=python3
[ -f /usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json ] && export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
bin=.devrun/hybridlab
log=$OUT/log.txt
exps=${*:-bandwidth norms ssm_conv ssm_scan attention matmul moe forward}
{
  echo "== devices"; $bin devices 2>&1 | head -30
  echo "== tiny model, every op on Vulkan, validate"
  python3 -c "import random; random.seed(3); print(' '.join(str(random.randrange(512)) for _ in range(162)))" > /tmp/tok.txt
  $bin run --model golden/hf-tiny/model --tokens /tmp/tok.txt --out /tmp/v.safetensors --ops '*=vulkan' --validate \
      --prefill-chunk 100 --decode-from 150; echo "exit $?"
  echo "== tiny model, Halide's Vulkan schedules where an op has one, validate"
  $bin run --model golden/hf-tiny/model --tokens /tmp/tok.txt --out /tmp/h.safetensors --ops '*=halide-vulkan' --validate \
      --prefill-chunk 100 --decode-from 150; echo "exit $?"
  for spec in $exps; do
    e=${spec%%:*}; limit=${spec#*:}; [ "$limit" = "$spec" ] && limit=${EXP_TIMEOUT:-$([ "$e" = forward ] && echo 200 || echo 150)}
    echo "== experiment $e (limit $limit s)"; start=$(date +%s)
    timeout "$limit" $bin experiment "$e" --full 2>&1 | tee "$OUT/exp-$e.log" | grep -v '^  ' ; echo "exit ${PIPESTATUS[0]} after $(( $(date +%s) - start )) s"
    tar czf "$OUT/reports.tar.gz" reports  # after each: a batch cut short still returns what it finished
  done
  python3 scripts/report.py --index reports
} > "$log" 2>&1
tar czf "$OUT/reports.tar.gz" reports
tail -60 "$log"
