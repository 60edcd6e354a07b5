#!/usr/bin/env bash
# The full-size end-to-end batch on a lent GPU machine (the `device` tool), hybridlab and llama.cpp on the same
# GGUF in one call (the same clocks):
#   synth      the full-size synthetic Q4_K_M model (hybridlab synth --random-blocks: seconds, not minutes);
#   cuda       starts building llama.cpp's llama-bench with CUDA in the background (.peers/build_cuda.sh, ~4 min of the
#              CPUs); peers-cuda, later, runs it on the file if the build finished (waiting up to CUDA_WAIT s);
#   peers      llama.cpp's llama-bench on it (its Vulkan backend: NV coopmat2 default, KHR coopmat only, no matrix
#              units), pp512 and tg128, JSON; PERF=1: also its per-op times inside the pp512 graph (GGML_VK_PERF_LOGGER);
#   bench      hybridlab bench with PLAN (pp512, tg128 and the per-op breakdown; TAG: bench-TAG.log, --tag TAG; RUNS,
#              WARMUP: its timed and untimed runs; BENCH_P, BENCH_N: its -p and -n, 0 leaving that test out; BENCH_FLAGS:
#              more flags, e.g. --no-breakdown for an A/B's benches);
#   peer-ops   llama.cpp's per-op times (scripts/llama_ops.py): inside its pp512 (NV coopmat2 and KHR-only), pp4096 and
#              decode (ctx 512, 4096) graphs (GGML_VK_PERF_LOGGER), and test-backend-ops at the experiments' shapes;
#              writes logs/peers.json, which the exps step after it passes to the experiments (--peers); PP4096=1 adds
#              the pp4096 graph; TBO=0 leaves test-backend-ops out, TBO_SKIP the cases it leaves out (regex; default
#              lm_head and routed experts);
#   exps       experiments (EXPS: 'name:limit:cases:tag:runs[:variant[:chain[:tune]]];...', ';'-separated; tune: the
#              experiment's HYBRIDLAB_TUNE, e.g. 'moe_experts.route_pack_coopmat.diag=4' (a diagnosis run); a variant is
#              written with '/' for its ':', e.g. vulkan/qgemm_coopmat (':' separates the fields); CHAIN=N adds
#              --chain N to every one without its own; EXP_FLAGS: more flags for each, e.g. '--no-sweep --gpu-only');
#   oracle     the plan's logits against the oracle's on the same file (72-token prompt, 4 decode steps);
#   peer-logits the oracle's, the plan's and llama.cpp's logits on those ids, each engine against the oracle
#              (scripts/compare_logits.py: logs/compare-logits.log, end_to_end_report.py --deviation; after peers).
# Expects .devrun/ (hybridlab and its libraries), .gl/ (Debian's Vulkan loader .debs), .peers/ (llama.cpp's Vulkan
# build tarball, add_vocab.py, the logits tool (xz), the CUDA source and build script) carried. Writes $OUT/log.txt
# (logs/log-LOGTAG.txt with LOGTAG) and $OUT/e2e.tar.gz (reports/ and every step's log under logs/).
#   usage: [STEPS="synth peers bench exps oracle"] [PLAN='*=vulkan'] [EXPS=...] [DEADLINE=s] scripts/device_e2e.sh
# DEADLINE: every step's limit is cut to what is left of that many seconds from the start, later steps skipped.
# Then, here: scripts/end_to_end_report.py --bench <bench JSON> --oracle logs/oracle.log --bandwidth <bandwidth.json>
#   --peer 'LABEL=logs/llama-<name>.log' ... --out reports/<device>/end_to_end.md
set -u
for f in .gl/*.deb; do dpkg -x "$f" / >/dev/null 2>&1; done
ldconfig
export HYBRIDLAB_ROOT=$PWD HYBRIDLAB_PYTHON=python3
# The commit the binary was built from (.devrun/COMMIT, written beside it here): the copy sent lacks current git metadata.
c=${COMMIT_FILE:-.devrun/COMMIT}  # COMMIT_FILE: BIN's, where it is another build
[ -f "$c" ] && export HYBRIDLAB_COMMIT=$(cat "$c")
[ -f /usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json ] && export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
bin=${BIN:-$PWD/.devrun/hybridlab}  # BIN: another build beside it (an A/B in one call)
libs=$PWD/.devrun/lib
model=/tmp/hl/qwen36-35b-a3b-seed1-q4_k_m-random.gguf
plan=${PLAN:-*=vulkan}
# LOGTAG: one of several invocations in a call, its log kept apart under logs/ (inside every e2e.tar.gz: a call
# returns at most 8 files, so one per invocation under $OUT would crowd out the rest)
mkdir -p /tmp/hl /tmp/llama
mkdir -p logs
log=$OUT/log.txt
[ -n "${LOGTAG:-}" ] && log=logs/log-$LOGTAG.txt
t0=$(date +%s)
step() {  # step NAME LIMIT_S CMD...: runs CMD under a time limit (cut to what DEADLINE, seconds from the start, leaves),
          # output to logs/NAME.log, its tail to the log
  local name=$1 limit=$2 start=$(date +%s); shift 2
  local left=$(( ${DEADLINE:-100000} - (start - t0) - 5 ))
  [ "$left" -lt "$limit" ] && limit=$left
  if [ "$limit" -le 0 ]; then echo "== $name: skipped, DEADLINE reached"; return; fi
  echo "== $name (limit $limit s): $*"
  timeout "$limit" "$@" > "logs/$name.log" 2>&1
  echo "exit $? after $(( $(date +%s) - start )) s"
  tail -${TAIL:-30} "logs/$name.log"
}
llama() {  # llama NAME LIMIT ENV... -- ARGS...: llama-bench from the peers' build
  local name=$1 limit=$2; shift 2
  local envs=(); while [ "$1" != -- ]; do envs+=("$1"); shift; done; shift
  step "$name" "$limit" env LD_LIBRARY_PATH=/tmp/llama "${envs[@]}" /tmp/llama/llama-bench -m /tmp/hl/model-vocab.gguf "$@"
}
{
  echo "== machine: $(nproc) CPUs, $(free -g | awk '/Mem/ {print $2}') GiB; disk $(df -h /tmp | tail -1)"
  LD_LIBRARY_PATH=$libs $bin devices 2>&1 | head -4
  for s in ${STEPS:-synth cuda bench peers peer-ops exps oracle peers-cuda}; do
    case $s in
      cuda)
        (setsid bash .peers/build_cuda.sh /tmp/llcuda > logs/build_cuda.log 2>&1 &) ;;
      peers-cuda)
        for _ in $(seq ${CUDA_WAIT:-0}); do [ -x /tmp/llcuda/build/bin/llama-bench ] && break; sleep 1; done
        if [ -x /tmp/llcuda/build/bin/llama-bench ]; then
          step llama-cuda 120 /tmp/llcuda/build/bin/llama-bench -m /tmp/hl/model-vocab.gguf -ngl 99 -p 512 -n 128 -r 3 -o json
        else echo "== peers-cuda: the CUDA build has not finished"; tail -5 logs/build_cuda.log; fi ;;
      synth)
        [ -f "$model" ] || LD_LIBRARY_PATH=$libs step synth 240 $bin synth --preset qwen36-35b-a3b --seed 1 --quant q4_k_m --random-blocks --out "$model"
        ls -la "$model" ;;
      peers)
        [ -x /tmp/llama/llama-bench ] || tar xJf .peers/llama-vulkan-*.tar.xz -C /tmp/llama
        # synth writes a vocabulary (tokenizer.ggml.*), which llama.cpp loads as is; add_vocab.py only for files without.
        if [ ! -f /tmp/hl/model-vocab.gguf ]; then
          if LD_LIBRARY_PATH=$libs $bin info --model "$model" 2>/dev/null | grep -q "tokenizer.ggml"; then ln -s "$model" /tmp/hl/model-vocab.gguf
          else step add_vocab 120 python3 .peers/add_vocab.py "$model" /tmp/hl/model-vocab.gguf; fi
        fi
        llama llama-cm2 150 -- -ngl 99 -p 512 -n 128 -r 3 -o json
        llama llama-khr 120 GGML_VK_DISABLE_COOPMAT2=1 -- -ngl 99 -p 512 -n 128 -r 3 -o json
        llama llama-scalar 120 GGML_VK_DISABLE_COOPMAT2=1 GGML_VK_DISABLE_COOPMAT=1 -- -ngl 99 -p 512 -n 0 -r 2 -o json
        if [ "${PERF:-0}" = 1 ]; then
          TAIL=80 llama llama-perf-cm2 120 GGML_VK_PERF_LOGGER=1 -- -ngl 99 -p 512 -n 0 -r 3
          TAIL=80 llama llama-perf-khr 120 GGML_VK_PERF_LOGGER=1 GGML_VK_DISABLE_COOPMAT2=1 -- -ngl 99 -p 512 -n 0 -r 3
        fi ;;
      bench)
        LD_LIBRARY_PATH=$libs step "bench${TAG:+-$TAG}" 240 $bin bench --model "$model" --ops "$plan" -p ${BENCH_P:-512} -n ${BENCH_N:-128} \
          --runs "${RUNS:-3}" --warmup "${WARMUP:-2}" ${TAG:+--tag "$TAG"} ${BENCH_FLAGS:-} ;;
      exps)
        # A flag given twice stops the experiment before it runs: the spec's runs field owns --runs.
        case " ${EXP_FLAGS:-} " in *" --runs "*) echo "== exps: EXP_FLAGS must not hold --runs (each spec's runs field sets it)"; continue ;; esac
        IFS=';' read -r -a specs <<< "${EXPS:-}"
        for spec in "${specs[@]}"; do
          IFS=: read -r e limit cases tag runs variant chain tune <<< "$spec"
          chain=${chain:-${CHAIN:-}}
          args=(--full ${chain:+--chain "$chain"}); [ -n "${cases:-}" ] && args+=(--cases "$cases"); [ -n "${tag:-}" ] && args+=(--tag "$tag")
          [ -f logs/peers.json ] && args+=(--peers logs/peers.json)
          args+=(${EXP_FLAGS:-})
          [ -n "${variant:-}" ] && args+=(--variant "${variant//\//:}")
          [ -n "${runs:-}" ] && args+=(--runs "$runs")
          LD_LIBRARY_PATH=$libs HYBRIDLAB_TUNE=${tune:-${HYBRIDLAB_TUNE:-}} TAIL=25 step "exp-$e${tag:+-$tag}" "$limit" \
            $bin experiment "$e" "${args[@]}"
          tar czf "$OUT/e2e.tar.gz" reports logs
        done ;;
      peer-ops)
        [ -x /tmp/llama/llama-bench ] || tar xJf .peers/llama-vulkan-*.tar.xz -C /tmp/llama
        [ -e /tmp/hl/model-vocab.gguf ] || ln -s "$model" /tmp/hl/model-vocab.gguf
        TAIL=5 llama llama-perf-pp512 120 GGML_VK_PERF_LOGGER=1 -- -ngl 99 -p 512 -n 0 -r 3
        TAIL=5 llama llama-perf-pp512-khr 120 GGML_VK_PERF_LOGGER=1 GGML_VK_DISABLE_COOPMAT2=1 -- -ngl 99 -p 512 -n 0 -r 3
        [ "${PP4096:-0}" = 1 ] && TAIL=5 llama llama-perf-pp4096 150 GGML_VK_PERF_LOGGER=1 -- -ngl 99 -p 4096 -ub 4096 -b 4096 -n 0 -r 1
        TAIL=5 llama llama-perf-decode512 120 GGML_VK_PERF_LOGGER=1 -- -ngl 99 -p 0 -n 8 -d 512 -r 1
        TAIL=5 llama llama-perf-decode4096 120 GGML_VK_PERF_LOGGER=1 -- -ngl 99 -p 0 -n 8 -d 4096 -r 1
        # test-backend-ops quantizes each weight from random values on one CPU core: the lm_head (508 M values) and the
        # routed expert stacks (268 M) take most of a minute each there, and the graphs above time them in place.
        if [ "${TBO:-1}" = 1 ]; then
          python3 scripts/llama_ops.py cases /tmp/hl/llama-ops-all.txt
          grep -v -E "${TBO_SKIP:-lm_head|moe_experts}" /tmp/hl/llama-ops-all.txt > logs/llama-ops-cases.txt
          TAIL=30 step llama-tbo 120 env LD_LIBRARY_PATH=/tmp/llama /tmp/llama/test-backend-ops perf -b Vulkan0 \
            --test-file logs/llama-ops-cases.txt
        fi
        step llama-ops 30 python3 scripts/llama_ops.py peers --device "${PEER_DEVICE:-nvidia-h200}" --version 0c1e570 \
          --prefill 512=logs/llama-perf-pp512.log --prefill 512:KHR-only=logs/llama-perf-pp512-khr.log \
          $([ -f logs/llama-perf-pp4096.log ] && echo --prefill 4096=logs/llama-perf-pp4096.log) \
          --decode 512=logs/llama-perf-decode512.log --decode 4096=logs/llama-perf-decode4096.log \
          $([ -f logs/llama-tbo.log ] && echo --tbo logs/llama-tbo.log) --out logs/peers.json ;;
      peer-logits)
        # Each engine's deviation from the oracle on the same file and ids: the oracle's logits (all-reference plan),
        # the plan's (prefill 72, decode 4), llama.cpp's (../shared/peers/llama.cpp/logits, carried xz-compressed in
        # .peers/; every layer offloaded, NV coopmat2 and KHR-only), compared by scripts/compare_logits.py; the labels are
        # the ones end_to_end_report.py's --peer rows use.
        python3 -c "print(' '.join(str((i * 7919 + 13) % 248320) for i in range(72)))" > /tmp/hl/prompt.txt
        echo "$(cat /tmp/hl/prompt.txt) 314 15926 5358 97932" > /tmp/hl/tokens.txt
        [ -x /tmp/llama-logits ] || { xz -dc .peers/logits-vulkan-*.xz > /tmp/llama-logits && chmod +x /tmp/llama-logits; }
        LD_LIBRARY_PATH=$libs step oracle-logits "${ORACLE_LIMIT:-240}" $bin run --model "$model" --tokens /tmp/hl/tokens.txt \
          --out /tmp/hl/oracle.safetensors
        LD_LIBRARY_PATH=$libs step plan-logits 120 $bin run --model "$model" --tokens /tmp/hl/tokens.txt --ops "$plan" \
          --decode-from 72 --out /tmp/hl/plan.safetensors
        step llama-logits 120 /tmp/llama-logits /tmp/hl/model-vocab.gguf /tmp/hl/tokens.txt /tmp/hl/llama.f32 0 99
        step llama-logits-khr 120 env GGML_VK_DISABLE_COOPMAT2=1 /tmp/llama-logits /tmp/hl/model-vocab.gguf /tmp/hl/tokens.txt \
          /tmp/hl/llama-khr.f32 0 99
        step compare-logits 120 python3 scripts/compare_logits.py /tmp/hl/oracle.safetensors "hybridlab=/tmp/hl/plan.safetensors" \
          "llama.cpp Vulkan, NV coopmat2 (its default)=/tmp/hl/llama.f32" "llama.cpp Vulkan, KHR coopmat only=/tmp/hl/llama-khr.f32" ;;
      oracle)
        python3 -c "print(' '.join(str((i * 7919 + 13) % 248320) for i in range(72)))" > /tmp/hl/prompt.txt
        echo "$(cat /tmp/hl/prompt.txt) 314 15926 5358 97932" > /tmp/hl/tokens.txt
        LD_LIBRARY_PATH=$libs step oracle "${ORACLE_LIMIT:-240}" $bin run --model "$model" --tokens /tmp/hl/tokens.txt \
          --out /tmp/hl/logits.safetensors --ops "$plan" --decode-from 72 --check-oracle ;;
    esac
    tar czf "$OUT/e2e.tar.gz" reports logs  # after each step: a batch cut short still returns what it finished
  done
} > "$log" 2>&1
tar czf "$OUT/e2e.tar.gz" reports logs
tail -150 "$log"
