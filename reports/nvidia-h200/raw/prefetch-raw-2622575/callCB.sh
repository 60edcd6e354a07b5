#!/usr/bin/env bash
# Prefetch bit 2 (Q6_K / Q5_K units' raw words a step ahead) against the committed prefetch 3, one binary, interleaved:
# routed experts q4_K T = 512 (its down is q6_K), the shared expert's prompt chunk (q6_K down on the dense GEMM), pp512.
set -u
T0=$(date +%s)
mkdir -p .devrun/lib && cp .devrun/libgomp.so.1 .devrun/lib/
xz -dc .devrun/hybridlab-n.xz > .devrun/hybridlab && chmod +x .devrun/hybridlab
mkdir -p logs
export TAIL=3
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv > logs/gpu.txt 2>&1
STEPS=synth LOGTAG=s DEADLINE=60 bash scripts/device_e2e.sh > /dev/null
M='^q4_K T=512$'
R=vulkan/route_pack_coopmat
RP=moe_experts.route_pack_coopmat.prefetch
MP=matmul.qgemm_coopmat.prefetch
E=
for s in a b; do for p in 3 7; do
  E="${E:+$E;}moe:40:$M:pf$p$s:10:$R::$RP=$p;moe:40:$M:se$p$s:10:vulkan/dense_coopmat::$MP=$p"
done; done
HYBRIDLAB_PIPELINE_STATS=1 EXP_FLAGS='--gpu-only --no-sweep --dispatches' STEPS=exps LOGTAG=x DEADLINE=260 EXPS="$E" bash scripts/device_e2e.sh > /dev/null
for s in a b; do for p in 3 7; do
  echo "routed pf$p$s: $(grep -E '^\| vulkan:route_pack_coopmat|^\| (qgemm_gate_cm|qgemm_down_cm) ' reports/nvidia-h200/moe-pf$p$s.md | awk -F'|' '{printf "%s %s %s; ", $2, $5, $6}')"
  echo "shared pf$p$s: $(grep -E '^\| vulkan:dense_coopmat|^\| (qgemm_cm|matmul_ksum) ' reports/nvidia-h200/moe-se$p$s.md | awk -F'|' '{printf "%s %s %s; ", $2, $5, $6}')"
done; done
grep -h "pipeline stats: qgemm_down_cm\|pipeline stats: qgemm_cm" logs/exp-*.log | sed 's/Binary Size=[0-9]*; Stack Size=0; Local Memory Size=[0-9]*; //' | sort | uniq | cut -c1-200 | head -12
tar czf $OUT/cb.tar.gz reports/nvidia-h200/moe-* logs
for s in a b; do
  STEPS=bench TAG=pf3$s LOGTAG=b3$s BENCH_N=0 RUNS=4 DEADLINE=70 bash scripts/device_e2e.sh > /dev/null
  HYBRIDLAB_TUNE=$RP=7,$MP=7 STEPS=bench TAG=pf7$s LOGTAG=b7$s BENCH_N=0 RUNS=4 DEADLINE=70 bash scripts/device_e2e.sh > /dev/null
done
for t in pf3a pf7a pf3b pf7b; do echo "bench $t: $(grep -E '^pp512 ' logs/bench-$t.log | head -1)"; grep -E "moe_experts|shared_expert" logs/bench-$t.log | head -2; done
echo "took $(( $(date +%s) - T0 )) s"
tar czf $OUT/cb.tar.gz reports/nvidia-h200/moe-* reports/nvidia-h200/bench-* logs
