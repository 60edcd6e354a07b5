#!/usr/bin/env bash
# diag 32 (20 KB more shared memory per workgroup, the kernel otherwise as built) against as built: the routed experts
# (one layer, T = 512) and the dense q4_K qkv GEMM at n = 512, with the pipelines' registers and shared memory.
set -u
T0=$(date +%s)
mkdir -p .devrun/lib && cp .devrun/libgomp.so.1 .devrun/lib/
xz -dc .devrun/hybridlab-n.xz > .devrun/hybridlab && chmod +x .devrun/hybridlab
mkdir -p logs
export TAIL=3
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv > logs/gpu.txt 2>&1
M='^q4_K T=512$'
Q='^(qkv|z) q4_K .* n=512$'
R=vulkan/route_pack_coopmat
E="moe:45:$M:pad32:10:$R::moe_experts.route_pack_coopmat.diag=32;moe:45:$M:pad0:10:$R"
E="$E;matmul:45:$Q:mpad32:10:vulkan/qgemm_coopmat::matmul.qgemm_coopmat.diag=32;matmul:45:$Q:mpad0:10:vulkan/qgemm_coopmat"
HYBRIDLAB_PIPELINE_STATS=1 EXP_FLAGS='--gpu-only --no-sweep --dispatches --time-failing' STEPS=exps LOGTAG=x DEADLINE=300 EXPS="$E" bash scripts/device_e2e.sh > /dev/null
for f in reports/*/moe-pad*.md reports/*/matmul-mpad*.md; do echo "== $f"; grep -E "^### |^\| (vulkan:|qgemm|route)" $f | cut -c1-110 | head -14; done
grep -h "pipeline stats: qgemm" logs/exp-*.log | sed 's/Binary Size=[0-9]*; Stack Size=0; Local Memory Size=[0-9]*; //' | sort | uniq | head -8
echo "took $(( $(date +%s) - T0 )) s"
tar czf $OUT/aw.tar.gz reports logs
