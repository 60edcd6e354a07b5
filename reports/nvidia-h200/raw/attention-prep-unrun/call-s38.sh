#!/usr/bin/env bash
# Session 38, call 1 at 2df1997 (attention_prep experimental: named in F's plan). pp512 A/B: F = attention_prep=vulkan:fused,
# U = the defaults (*=vulkan: the parts, 2 slices, 2 rmsnorms, 2 ropes), the end-to-end bench (the defaults, U's breakdown)
# first, F's, llama.cpp (Vulkan cm2/KHR/scalar, CUDA) in the same call, then F and U interleaved without breakdowns; the scalar
# plan; attention_prep fused/unfused alone; the router and gates shapes by every variant; the dense tiles if time is left.
set -u
tar xJf .devrun/bins.tar.xz -C .devrun
S=$(date +%s); LIMIT=${LIMIT:-560}
left() { echo $(( LIMIT - ($(date +%s) - S) )); }
t() { local l=$(left); [ "$1" -lt "$l" ] && echo $1 || echo $(( l > 6 ? l - 5 : 1 )); }
mkdir -p logs
save() { tar czf $OUT/y.tar.gz logs reports/*/*-prep.* reports/*/*narrow* reports/*/*tiles* reports/*/bench-*.json 2>/dev/null; }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv 2>/dev/null | tail -1
STEPS="synth cuda" LOGTAG=setup nice -n 15 bash scripts/device_e2e.sh > /dev/null 2>&1
STEPS=bench TAG=e2e RUNS=5 LOGTAG=e2e DEADLINE=$(left) bash scripts/device_e2e.sh > /dev/null 2>&1
grep -h "pp512\|tg128" logs/bench-e2e.log | head -4
save
PLAN='*=vulkan,attention_prep=vulkan:fused' STEPS=bench TAG=F1 BENCH_N=0 RUNS=5 LOGTAG=F1 DEADLINE=$(left) bash scripts/device_e2e.sh > /dev/null 2>&1
grep -h "^pp512 " logs/bench-F1.log | head -2
grep -h "^ *attention\(_prep\)\? \|^ *slice \|^ *rope \|^ *rmsnorm " logs/bench-e2e.log logs/bench-F1.log | head -12
save
STEPS="peers peers-cuda" CUDA_WAIT=150 LOGTAG=peers DEADLINE=$(left) bash scripts/device_e2e.sh > /dev/null 2>&1
grep -h "avg_ts\|n_prompt" logs/llama-*.log | paste - - | cut -c1-200
save
export LD_LIBRARY_PATH=$PWD/.devrun/lib HYBRIDLAB_ROOT=$PWD HYBRIDLAB_COMMIT=$(cat .devrun/COMMIT) VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
if [ $(left) -gt 40 ]; then
timeout $(t 50) .devrun/hybridlab experiment attention --full --gpu-only --cases '^prep' --no-sweep --dispatches --runs 20 --tag prep > logs/exp-attention-prep.log 2>&1
echo "prep exit $?"; grep -E "^\[" logs/exp-attention-prep.log | head
save
fi
HYBRIDLAB_COOPMAT=0 STEPS=bench TAG=scalar BENCH_N=0 RUNS=3 BENCH_FLAGS=--no-breakdown LOGTAG=scalar DEADLINE=$(left) bash scripts/device_e2e.sh > /dev/null 2>&1
grep -h "^pp512" logs/bench-scalar.log | head -2
save
for r in 2 3; do
  [ $(left) -gt 60 ] || break
  PLAN='*=vulkan,attention_prep=vulkan:fused' STEPS=bench TAG=F$r BENCH_N=0 RUNS=5 BENCH_FLAGS=--no-breakdown LOGTAG=F$r DEADLINE=$(left) bash scripts/device_e2e.sh > /dev/null 2>&1
  PLAN='*=vulkan' STEPS=bench TAG=U$r BENCH_N=0 RUNS=5 BENCH_FLAGS=--no-breakdown LOGTAG=U$r DEADLINE=$(left) bash scripts/device_e2e.sh > /dev/null 2>&1
  grep -h "^pp512 " logs/bench-F$r.log logs/bench-U$r.log | head -4
  save
done
if [ $(left) -gt 40 ]; then
timeout $(t 60) .devrun/hybridlab experiment matmul --full --gpu-only --cases '^(router|gates) .*n=512$' --no-sweep --dispatches \
  --runs 10 --tag narrow > logs/exp-matmul-narrow.log 2>&1
echo "narrow exit $?"; grep -E "^\[" logs/exp-matmul-narrow.log | head -30
fi
if [ $(left) -gt 50 ]; then
timeout $(t 80) .devrun/hybridlab experiment matmul --full --gpu-only --variant vulkan:qgemm_coopmat --cases '^(qkv|z) q4_K .*n=512$' \
  --runs 10 --sweep matmul.qgemm_coopmat.warp_rows=2,4 --sweep matmul.qgemm_coopmat.warp_cols=2,4 --dispatches --tag tiles > logs/exp-matmul-tiles.log 2>&1
echo "tiles exit $?"; grep -E "^\[.*qgemm_coopmat" logs/exp-matmul-tiles.log | awk '{print $3, $4, $5, $7, $8, $NF}'
fi
save
echo "total $(( $(date +%s) - S )) s"
