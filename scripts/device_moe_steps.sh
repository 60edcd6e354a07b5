#!/usr/bin/env bash
# moe_block in two dispatches (moe_block.fused_decode.steps 2: gate/up and down in one, y summed by float atomics)
# against three (steps 3), one device call (the `device` tool; carries .devrun/, .gl/, .peers/ as scripts/device_e2e.sh
# expects): the decode stream first (tg128, interleaved; the results tarred after each), then the block chained 16 deep
# (experiment moe, its q4_K T=1 case: each configuration's time and its error against the reference at full size).
# STEPS_TUNES: the two-step configurations to chain (space-separated HYBRIDLAB_TUNE values).
set -u
T0=$(date +%s)
[ -x .devrun/hybridlab ] || { xz -dc .devrun/hybridlab-main.xz > .devrun/hybridlab && chmod +x .devrun/hybridlab; }
export HYBRIDLAB_ROOT=$PWD HYBRIDLAB_PYTHON=true HYBRIDLAB_COMMIT=$(cat .devrun/COMMIT) TAIL=3
mkdir -p logs /tmp/ms
.devrun/hybridlab devices > logs/devices.log 2>&1
STEPS=synth LOGTAG=s DEADLINE=90 bash scripts/device_e2e.sh > /dev/null 2>&1  # the full-size file (kept if there)
bench() {  # bench TAG TUNE
  HYBRIDLAB_TUNE=$2 STEPS=bench TAG=$1 LOGTAG=ms BENCH_P=16 RUNS=3 DEADLINE=100 bash scripts/device_e2e.sh > /dev/null 2>&1
  echo "$1: $(grep -h '^tg128 ' logs/bench-$1.log | head -1)"
  grep -h 'GPU .* ms per step' logs/bench-$1.log | tail -1
  grep -h '^  add_rmsnorm_moe_block \|dispatches' logs/bench-$1.log | tail -2
  tar czf $OUT/m.tar.gz logs/ reports/*/bench-*.json
}
for i in ${ROUNDS:-1 2}; do
  bench steps3-$i moe_block.fused_decode.steps=3
  bench steps2-$i moe_block.fused_decode.steps=2${BENCH2:+,$BENCH2}
done
echo "benches done at $(( $(date +%s) - T0 )) s"
n=0
for tune in moe_block.fused_decode.steps=3 ${STEPS_TUNES:-moe_block.fused_decode.steps=2}; do
  n=$((n + 1))
  HYBRIDLAB_TUNE=$tune timeout 60 .devrun/hybridlab experiment moe --full --gpu-only --no-sweep \
    --chain 16 --runs 20 --cases '^q4_K T=1$' --out /tmp/ms --tag ms$n > logs/ms-chain$n.log 2>&1
  echo "$tune:"
  grep -h 'moe_block\|add_rmsnorm_moe_block' logs/ms-chain$n.log | grep -v '^experiment' | head -3
done
echo "took $(( $(date +%s) - T0 )) s"
tar czf $OUT/m.tar.gz logs/ /tmp/ms reports/*/bench-*.json
