#!/usr/bin/env bash
# moe_block's shared expert SwiGLU in step 2 (moe_block.fused_decode.shared_step 2) against step 1 (1, the default), one
# device call (the `device` tool; carries .devrun/, .gl/, .peers/ as scripts/device_e2e.sh expects): the decode stream
# first (tg128, the two interleaved; the results tarred after each), then chained 16 deep (experiment moe, its q4_K T=1
# case, both values). Prints the tg128 lines and the MoE block's per-layer time; returns $OUT/m.tar.gz (logs, JSON).
set -u
T0=$(date +%s)
[ -x .devrun/hybridlab ] || { xz -dc .devrun/hybridlab-main.xz > .devrun/hybridlab && chmod +x .devrun/hybridlab; }
export HYBRIDLAB_ROOT=$PWD HYBRIDLAB_PYTHON=true HYBRIDLAB_COMMIT=$(cat .devrun/COMMIT) TAIL=3
mkdir -p logs /tmp/ms
STEPS=synth LOGTAG=s DEADLINE=90 bash scripts/device_e2e.sh > /dev/null 2>&1  # the full-size file (kept if there)
bench() {  # bench TAG TUNE
  HYBRIDLAB_TUNE=$2 STEPS=bench TAG=$1 LOGTAG=ms BENCH_P=16 RUNS=3 DEADLINE=100 bash scripts/device_e2e.sh > /dev/null 2>&1
  echo "$1: $(grep -h '^tg128 ' logs/bench-$1.log | head -1)"
  grep -h 'GPU .* ms per step' logs/bench-$1.log | tail -1
  grep -h '^  add_rmsnorm_moe_block ' logs/bench-$1.log | tail -1
  tar czf $OUT/m.tar.gz logs/bench-* reports/*/bench-*.json
}
for i in 1 2 3; do
  bench shared1-$i moe_block.fused_decode.shared_step=1
  bench shared2-$i moe_block.fused_decode.shared_step=2
done
echo "benches done at $(( $(date +%s) - T0 )) s"
for s in 1 2; do
  HYBRIDLAB_TUNE=moe_block.fused_decode.shared_step=$s timeout 60 .devrun/hybridlab experiment moe --full --gpu-only --no-sweep \
    --chain 16 --runs 20 --cases '^q4_K T=1$' --out /tmp/ms --tag ms$s > logs/ms-chain$s.log 2>&1
  grep -h 'moe_block\|add_rmsnorm_moe_block' logs/ms-chain$s.log | grep -v '^experiment' | head -3
done
echo "took $(( $(date +%s) - T0 )) s"
tar czf $OUT/m.tar.gz logs/bench-* logs/ms-* /tmp/ms reports/*/bench-*.json
