#!/usr/bin/env bash
# One device call (the `device` tool) that settles ssm_scan vulkan:chunked_two_pass on a Hopper card, every ratio in the
# same call: the ssm_scan experiment for chunked_two_pass (its scan columns swept, each dispatch timed alone, the
# pipelines' registers printed) and for block_resident (what prompt chunks run on Hopper), T = 16..4096; then the
# end-to-end bench (pp512, tg128) at the defaults and with prompt chunks handed to chunked_two_pass
# (ssm_scan.chunked.two_pass=1), and llama.cpp's Vulkan backend on the same file (scripts/device_e2e.sh's peers step).
# Expects .devrun/hybridlab-n.xz (the stripped binary, xz), .devrun/COMMIT, .gl/ (Vulkan loader .debs), .peers/
# (llama.cpp's Vulkan tarball) carried. Writes $OUT/ssm.tar.gz (logs and the experiments' JSON: their markdown is
# made here, scripts/report.py, as the machine has no matplotlib) and $OUT/e2e.tar.gz (device_e2e.sh's).
#   usage (device tool): for f in .gl/*.deb; do dpkg -x $f /; done; ldconfig;
#                        export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json; bash scripts/device_ssm_two_pass.sh
set -u
export HYBRIDLAB_ROOT=$PWD HYBRIDLAB_COMMIT=$(cat .devrun/COMMIT)
xz -dc .devrun/hybridlab-n.xz > .devrun/hybridlab && chmod +x .devrun/hybridlab
R=/tmp/ssm; mkdir -p $R/rep
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv > $R/gpu.txt 2>&1
E=(experiment ssm_scan --full --gpu-only --runs 20 --out $R/rep --cases '^T=(16|64|256|512|4096)$')
HYBRIDLAB_PYTHON=true HYBRIDLAB_PIPELINE_STATS=1 timeout 200 .devrun/hybridlab "${E[@]}" \
  --sweep ssm_scan.chunked_two_pass.cols=16,32 --variant vulkan:chunked_two_pass --dispatches --tag two-pass > $R/exp-two-pass.log 2>&1
HYBRIDLAB_PYTHON=true timeout 150 .devrun/hybridlab "${E[@]}" --no-sweep --variant vulkan:block_resident \
  --tag block-resident > $R/exp-block-resident.log 2>&1
grep -h "T=\|dispatches alone" $R/exp-*.log | head -40
tar czf $OUT/ssm.tar.gz -C /tmp ssm
STEPS="synth bench" TAG=base LOGTAG=base RUNS=5 bash scripts/device_e2e.sh > /dev/null 2>&1
HYBRIDLAB_TUNE=ssm_scan.chunked.two_pass=1 STEPS="bench peers" TAG=two-pass LOGTAG=two-pass RUNS=5 DEADLINE=260 \
  bash scripts/device_e2e.sh > /dev/null 2>&1
grep -h "^pp512\|^tg128\|ssm_scan " logs/bench-base.log logs/bench-two-pass.log
