#!/usr/bin/env bash
# How the routed GEMMs' time grows with shared memory per workgroup: diag 32 + KB * 256 pads each workgroup by KB KB,
# the kernels otherwise as built (routed experts one layer T = 512; dense z q4_K 2048->4096 n = 512).
set -u
T0=$(date +%s)
mkdir -p .devrun/lib && cp .devrun/libgomp.so.1 .devrun/lib/
xz -dc .devrun/hybridlab-n.xz > .devrun/hybridlab && chmod +x .devrun/hybridlab
mkdir -p logs
export TAIL=3
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv > logs/gpu.txt 2>&1
M='^q4_K T=512$'
Q='^(z) q4_K .* n=512$'
R=vulkan/route_pack_coopmat
E="moe:30:$M:kb0:5:$R"
for kb in 1 2 4 8 12 16 20 32; do E="$E;moe:30:$M:kb$kb:5:$R::moe_experts.route_pack_coopmat.diag=$((32 + kb * 256))"; done
for kb in 0 2 4 8 16; do d=$((32 + kb * 256)); [ $kb = 0 ] && d=0; E="$E;matmul:30:$Q:mkb$kb:5:vulkan/qgemm_coopmat::matmul.qgemm_coopmat.diag=$d"; done
HYBRIDLAB_PIPELINE_STATS=1 EXP_FLAGS='--gpu-only --no-sweep --dispatches --time-failing' STEPS=exps LOGTAG=x DEADLINE=400 EXPS="$E" bash scripts/device_e2e.sh > /dev/null
for kb in 0 1 2 4 8 12 16 20 32; do f=reports/nvidia-h200/moe-kb$kb.md; echo "kb $kb: $(grep -E '^\| (qgemm_gate_cm|qgemm_down_cm) ' $f | awk -F'|' '{printf "%s %s; ", $2, $4}')"; done
for kb in 0 2 4 8 16; do f=reports/nvidia-h200/matmul-mkb$kb.md; echo "z kb $kb: $(grep -E '^\| qgemm_cm ' $f | awk -F'|' '{printf "%s %s; ", $2, $4}')"; done
grep -h "pipeline stats: qgemm" logs/exp-*.log | sed 's/Binary Size=[0-9]*; Stack Size=0; Local Memory Size=[0-9]*; //' | sort | uniq | cut -c1-200 | head -20
echo "took $(( $(date +%s) - T0 )) s"
tar czf $OUT/ax.tar.gz reports logs
