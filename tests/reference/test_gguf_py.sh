#!/usr/bin/env bash
# llama.cpp's own GGUF reader, gguf-py (pinned in scripts/requirements-tools.txt, installed into .venv/ by
# scripts/install-deps.sh), reads every kind of GGUF file hybridlab writes, and gguf_py_check.py holds each against
# gguf-py's tables for qwen35moe: `convert` of hf-tiny at every quantization (dequantized by gguf-py and compared with
# the f32 file), of the official fused-expert layout, and of a checkpoint with tokenizer files (the vocabulary compared
# with what llama.cpp's converter and gguf-py's SpecialVocab make of them); `synth` of a preset.
# usage: test_gguf_py.sh BUILD/hybridlab PROJECT_ROOT. Exit 77 (CTest: skipped) only when .venv/ is absent.
set -u
bin=$1 root=$2
py=$root/.venv/bin/python3
if [ ! -x "$py" ]; then
  echo "SKIP: $root/.venv is absent (scripts/install-deps.sh creates it with gguf-py; make test runs that script)"
  exit 77
fi
if ! "$py" -c 'import gguf' 2>/dev/null; then
  echo "FAIL: $py cannot import gguf: run scripts/install-deps.sh (it installs scripts/requirements-tools.txt)"
  exit 1
fi
tiny=$root/golden/hf-tiny/model
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
fails=0
write() {  # write NAME CMD...: a file hybridlab writes, or a failure
  local name=$1; shift
  if ! "$@" >"$t/out" 2>"$t/err"; then echo "FAIL $name: $(tail -1 "$t/err")"; fails=$((fails + 1)); fi
}
check() {  # check FILE [gguf_py_check.py options]
  "$py" "$root/tests/reference/gguf_py_check.py" "$@" || fails=$((fails + 1))
}

write convert-f32 "$bin" convert --model "$tiny" --out "$t/f32.gguf" --quant f32
check "$t/f32.gguf" --placeholder
for q in f16 q8_0 q4_k_m; do
  write "convert-$q" "$bin" convert --model "$tiny" --out "$t/$q.gguf" --quant "$q"
  check "$t/$q.gguf" --reference "$t/f32.gguf" --placeholder
done
# The official layout holds BF16 weights: its own f32 file is the reference.
write convert-official-f32 "$bin" convert --model "$root/golden/hf-tiny/official-layout" --out "$t/official-f32.gguf" --quant f32
check "$t/official-f32.gguf" --placeholder
write convert-official "$bin" convert --model "$root/golden/hf-tiny/official-layout" --out "$t/official.gguf" --quant q8_0
check "$t/official.gguf" --reference "$t/official-f32.gguf" --placeholder

# A checkpoint with tokenizer files: hf-tiny's weights and config beside tests/reference/data/tokenizer/.
mkdir -p "$t/tok"
ln -s "$tiny/config.json" "$tiny/model.safetensors" "$root/tests/reference/data/tokenizer/tokenizer.json" \
  "$root/tests/reference/data/tokenizer/tokenizer_config.json" "$t/tok/"
write convert-tokenizer "$bin" convert --model "$t/tok" --out "$t/tok.gguf" --quant q4_k_m
check "$t/tok.gguf" --reference "$t/f32.gguf" --tokenizer "$t/tok"

write synth-f32 "$bin" synth --preset tiny --seed 3 --quant f32 --out "$t/synth-f32.gguf"
check "$t/synth-f32.gguf" --placeholder
write synth-q4km "$bin" synth --preset tiny --seed 3 --quant q4_k_m --out "$t/synth.gguf" --layers 2
check "$t/synth.gguf" --reference "$t/synth-f32.gguf" --placeholder

[ $fails -eq 0 ] && echo "gguf-py reads every file as llama.cpp expects" || { echo "$fails gguf-py checks failed"; exit 1; }
