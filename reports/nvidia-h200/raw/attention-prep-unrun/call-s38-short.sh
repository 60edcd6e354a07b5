#!/usr/bin/env bash
# Session 38, a short call at 2df1997 (what the device budget left): pp512 A/B, F = attention_prep=vulkan:fused,
# U = the defaults (*=vulkan: the parts), the first of each with the per-op breakdown, then interleaved;
# attention_prep fused/unfused alone at T = 512, 4096.
set -u
tar xJf .devrun/bins.tar.xz -C .devrun
S=$(date +%s); LIMIT=${LIMIT:-200}
left() { echo $(( LIMIT - ($(date +%s) - S) )); }
t() { local l=$(left); [ "$1" -lt "$l" ] && echo $1 || echo $(( l > 6 ? l - 5 : 1 )); }
mkdir -p logs
save() { tar czf $OUT/y.tar.gz logs reports/*/*-prep.* reports/*/bench-*.json 2>/dev/null; }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv 2>/dev/null | tail -1
STEPS=synth LOGTAG=setup bash scripts/device_e2e.sh > /dev/null 2>&1
for r in 1 2 3; do
  [ $(left) -gt 45 ] || break
  f=--no-breakdown; [ $r = 1 ] && f=
  PLAN='*=vulkan,attention_prep=vulkan:fused' STEPS=bench TAG=F$r BENCH_N=0 RUNS=5 BENCH_FLAGS="$f" LOGTAG=F$r DEADLINE=$(left) bash scripts/device_e2e.sh > /dev/null 2>&1
  PLAN='*=vulkan' STEPS=bench TAG=U$r BENCH_N=0 RUNS=5 BENCH_FLAGS="$f" LOGTAG=U$r DEADLINE=$(left) bash scripts/device_e2e.sh > /dev/null 2>&1
  grep -h "^pp512 " logs/bench-F$r.log logs/bench-U$r.log | head -4
  [ $r = 1 ] && grep -h "^ *attention\(_prep\)\? \|^ *slice \|^ *rope \|^ *rmsnorm " logs/bench-F1.log logs/bench-U1.log | head -12
  save
  if [ $r = 1 ]; then
    export LD_LIBRARY_PATH=$PWD/.devrun/lib HYBRIDLAB_ROOT=$PWD HYBRIDLAB_COMMIT=$(cat .devrun/COMMIT) VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
    timeout $(t 40) .devrun/hybridlab experiment attention --full --gpu-only --cases '^prep' --no-sweep --dispatches --runs 20 --tag prep > logs/exp-attention-prep.log 2>&1
    echo "prep exit $?"; grep -E "^\[" logs/exp-attention-prep.log | head
    unset LD_LIBRARY_PATH
    save
  fi
done
save
echo "total $(( $(date +%s) - S )) s"
