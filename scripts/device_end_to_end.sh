#!/usr/bin/env bash
# The full-size end-to-end batch (issue 9) on a lent GPU machine (the `device` tool), in one call:
#   1. synth: the full-size synthetic Q4_K_M model, written there (skipped when the machine still has it);
#   2. oracle: the Vulkan plan's logits against the oracle's on the same GGUF (the oracle on the host CPUs);
#   3. bench: `hybridlab bench` over the prompt lengths and decode steps of the issue;
#   4. ablations (optional step): pp512 and tg64 as they are (base) and with one change each, ABLATIONS to pick:
#      qmatvec (the staged decode mat-vec, neither qmatvec_direct nor qmatvec_planar), no-replay, lm-head-staged / lm-head-planar-i8 (the lm_head on x rounded to 8 bits),
#      lm-head-direct (qmatvec_direct, not qmatvec_planar), no-elide; earlier reports: unfused-norms, flush64, moe-in-tile.
# Expects .devrun/ (hybridlab built here, libfmt, libgomp) and .gl/ (Debian's Vulkan loader .debs) carried.
# Writes $OUT/log.txt, $OUT/*.log and $OUT/e2e.tar.gz (reports/<device>/bench-*.json).
#   usage: [SYNTH_LAYERS=N (a smoke test)] [STEPS="synth oracle bench ablations"] [ABLATIONS="base ..."] [PLAN='*=vulkan'] [BENCH="-p 512,2048,4096 -n 128"] scripts/device_end_to_end.sh
set -u
if ! ldconfig -p | grep -q libvulkan.so.1; then  # a bare GPU machine: the loader from the carried .debs
  for f in .gl/*.deb; do dpkg -x "$f" / >/dev/null 2>&1; done
  ldconfig
fi
export LD_LIBRARY_PATH=$PWD/.devrun/lib:${LD_LIBRARY_PATH:-}
export HYBRIDLAB_ROOT=$PWD HYBRIDLAB_PYTHON=python3
[ -f /usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json ] && export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
bin=$PWD/.devrun/hybridlab
model=${MODEL:-/tmp/hl/qwen36-35b-a3b-seed1-q4_k_m.gguf}
plan=${PLAN:-*=vulkan}
steps=${STEPS:-synth oracle bench}
log=$OUT/log.txt
mkdir -p "$(dirname "$model")"
step() {  # step NAME LIMIT_S CMD...: runs CMD under a time limit, output to $OUT/NAME.log, a summary line to the log
  local name=$1 limit=$2 start=$(date +%s); shift 2
  echo "== $name (limit $limit s): $*"
  timeout "$limit" "$@" > "$OUT/$name.log" 2>&1
  echo "exit $? after $(( $(date +%s) - start )) s"
  tail -40 "$OUT/$name.log"
}
{
  echo "== machine: $(nproc) CPUs, $(free -g | awk '/Mem/ {print $2}') GiB; disk $(df -h "$(dirname "$model")" | tail -1)"
  $bin devices 2>&1 | head -8
  for s in $steps; do
    case $s in
      synth)
        if [ -f "$model" ]; then echo "== synth: $model is already here ($(stat -c %s "$model") bytes)"
        else step synth "${SYNTH_LIMIT:-420}" $bin synth --preset qwen36-35b-a3b --seed 1 --quant q4_k_m --out "$model" \
          ${SYNTH_LAYERS:+--layers "$SYNTH_LAYERS"}; fi ;;
      oracle)
        # A 72-token prompt in one prefill chunk (past route_pack.dequant_tokens, so the dequantized expert path
        # is what runs), then 4 decode steps on fixed ids.
        python3 -c "print(' '.join(str((i * 7919 + 13) % 248320) for i in range(72)))" > /tmp/hl/prompt.txt
        echo "$(cat /tmp/hl/prompt.txt) 314 15926 5358 97932" > /tmp/hl/tokens.txt
        step oracle "${ORACLE_LIMIT:-300}" $bin run --model "$model" --tokens /tmp/hl/tokens.txt --out /tmp/hl/logits.safetensors \
          --ops "$plan" --decode-from 72 --check-oracle ;;
      bench)
        step bench "${BENCH_LIMIT:-400}" $bin bench --model "$model" --ops "$plan" ${BENCH:--p 512,2048,4096 -n 128} --runs "${RUNS:-3}" \
          ${TAG:+--tag "$TAG"} ;;
      ablations)
        [ -f "$model" ] || { echo "== ablations: no $model here (a fresh machine): skipped"; continue; }
        A="-p 512 -n 64 --runs 3 --no-breakdown"
        for a in ${ABLATIONS:-base qmatvec no-replay lm-head-staged lm-head-direct lm-head-planar-i8}; do
          case $a in
            base) step abl-base 150 $bin bench --model "$model" --ops "$plan" $A --tag base ;;  # their own baseline
            qmatvec) HYBRIDLAB_TUNE=matmul.auto.decode_direct=0,matmul.auto.decode_planar_rows=0 step abl-qmatvec 150 $bin \
              bench --model "$model" --ops "$plan" $A --tag qmatvec ;;
            no-replay) step abl-no-replay 150 $bin bench --model "$model" --ops "$plan" $A --no-replay --tag no-replay ;;
            lm-head-staged) step abl-lm-head-staged 150 $bin bench --model "$model" \
              --ops "$plan,lm_head=vulkan:qmatvec_i8_staged" $A --tag lm-head-staged ;;
            lm-head-direct) HYBRIDLAB_TUNE=matmul.auto.decode_planar_rows=0 step abl-lm-head-direct 150 $bin bench \
              --model "$model" --ops "$plan" $A --tag lm-head-direct ;;
            lm-head-planar-i8) step abl-lm-head-planar-i8 150 $bin bench --model "$model" \
              --ops "$plan,lm_head=vulkan:qmatvec_planar_i8" $A --tag lm-head-planar-i8 ;;
            no-elide) HYBRIDLAB_TUNE=device.stream.elide_barriers=0 step abl-no-elide 150 $bin bench \
              --model "$model" --ops "$plan" $A --tag no-elide ;;
            *) echo "== unknown ablation $a" ;;
          esac
        done ;;
    esac
    tar czf "$OUT/e2e.tar.gz" reports  # after each step: a batch cut short still returns what it finished
  done
} > "$log" 2>&1
tar czf "$OUT/e2e.tar.gz" reports
tail -80 "$log"
