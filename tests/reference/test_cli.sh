#!/usr/bin/env bash
# The `run` command-line contract: good runs write logits; every bad input gives a one-line error on
# stderr and a non-zero exit. Usage: test_cli.sh BUILD/hybridlab PROJECT_ROOT
set -u
bin=$1 root=$2
tiny=$root/golden/hf-tiny/model
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
fails=0

ok() {  # ok NAME CMD...: must exit 0
  local name=$1; shift
  if ! "$@" >"$t/out" 2>"$t/err"; then echo "FAIL $name: exit $? : $(cat "$t/err")"; fails=$((fails + 1)); else echo "ok   $name"; fi
}
bad() {  # bad NAME EXPECTED-SUBSTRING CMD...: must exit non-zero with one error line containing the substring
  local name=$1 want=$2; shift 2
  "$@" >"$t/out" 2>"$t/err"
  local rc=$? lines
  lines=$(grep -c . "$t/err")
  if [ $rc -eq 0 ] || [ $rc -ge 128 ] || ! grep -q -- "$want" "$t/err" || [ "$lines" -ne 1 ]; then
    echo "FAIL $name: exit $rc, want one line with '$want', got: $(cat "$t/err")"; fails=$((fails + 1))
  else
    echo "ok   $name: $(cat "$t/err")"
  fi
}

echo "5 17 300 2 2 9 511 0" >"$t/tok.txt"
ok run-hf "$bin" run --model "$tiny" --tokens "$t/tok.txt" --out "$t/a.safetensors"
ok run-chunked-decode "$bin" run --model "$tiny" --tokens "$t/tok.txt" --out "$t/b.safetensors" --prefill-chunk 3 --decode-from 5 --precision f64
ok run-preset "$bin" run --preset tiny --seed 3 --layers 2 --tokens "$t/tok.txt" --out "$t/c.safetensors"
# logits F32 [8, 512] => at least 8*512*4 bytes of data
for f in a b c; do
  sz=$(stat -c %s "$t/$f.safetensors")
  [ "$sz" -ge 16384 ] || { echo "FAIL output $f.safetensors is $sz bytes"; fails=$((fails + 1)); }
done
grep -q '"logits"' "$t/a.safetensors" || { echo "FAIL no logits tensor"; fails=$((fails + 1)); }

# The playground path: every op on Vulkan (lavapipe here), validated op by op against the reference.
ok run-vulkan-validate "$bin" run --model "$tiny" --tokens "$t/tok.txt" --out "$t/d.safetensors" --ops '*=vulkan' --validate \
  --prefill-chunk 3 --decode-from 5
for want in "validate: per-op error" "rel L2" "worst layer" "ssm_scan" "final logits vs an all-reference run" "per-token fallback"; do
  grep -qi -- "$want" "$t/err" || { echo "FAIL validate output lacks '$want'"; fails=$((fails + 1)); }
done

: >"$t/empty.txt"
echo "1 2 99999" >"$t/range.txt"
echo "1 two" >"$t/word.txt"
mkdir -p "$t/broken" && cp "$tiny/config.json" "$t/broken/" && head -c 5000 "$tiny/model.safetensors" >"$t/broken/model.safetensors"
mkdir -p "$t/badcfg" && echo '{"model_type": "llama"' >"$t/badcfg/config.json"
bad missing-model "is not a directory" "$bin" run --model "$t/nope" --tokens "$t/tok.txt" --out "$t/x.safetensors"
bad missing-tokens "cannot open token file" "$bin" run --model "$tiny" --tokens "$t/nope.txt" --out "$t/x.safetensors"
bad empty-tokens "holds no tokens" "$bin" run --model "$tiny" --tokens "$t/empty.txt" --out "$t/x.safetensors"
bad token-range "outside the vocabulary" "$bin" run --model "$tiny" --tokens "$t/range.txt" --out "$t/x.safetensors"
bad token-word "'two'" "$bin" run --model "$tiny" --tokens "$t/word.txt" --out "$t/x.safetensors"
bad truncated-weights "runs past the end" "$bin" run --model "$t/broken" --tokens "$t/tok.txt" --out "$t/x.safetensors"
bad malformed-config "not valid JSON" "$bin" run --model "$t/badcfg" --tokens "$t/tok.txt" --out "$t/x.safetensors"
bad unknown-preset "unknown preset" "$bin" run --preset nope --tokens "$t/tok.txt" --out "$t/x.safetensors"
bad model-and-preset "exactly one of" "$bin" run --model "$tiny" --preset tiny --tokens "$t/tok.txt" --out "$t/x.safetensors"
bad decode-from "beyond the 8 tokens" "$bin" run --model "$tiny" --tokens "$t/tok.txt" --out "$t/x.safetensors" --decode-from 9
bad layers "the model has 4 layers" "$bin" run --model "$tiny" --tokens "$t/tok.txt" --out "$t/x.safetensors" --layers 5
bad precision "precision" "$bin" run --model "$tiny" --tokens "$t/tok.txt" --out "$t/x.safetensors" --precision f16
bad unwritable-out "cannot write" "$bin" run --model "$tiny" --tokens "$t/tok.txt" --out "$t/no/such/dir/x.safetensors"
bad unknown-op "unknown op 'nope'" "$bin" run --model "$tiny" --tokens "$t/tok.txt" --out "$t/x.safetensors" --ops 'nope=vulkan'
bad unknown-variant "unknown variant 'vulkan:nope'" "$bin" run --model "$tiny" --tokens "$t/tok.txt" --out "$t/x.safetensors" --ops 'matmul=vulkan:nope'
bad ops-f64 "run in f32" "$bin" run --model "$tiny" --tokens "$t/tok.txt" --out "$t/x.safetensors" --ops '*=vulkan' --precision f64
bad unknown-device "no-such-gpu" "$bin" run --model "$tiny" --tokens "$t/tok.txt" --out "$t/x.safetensors" --ops '*=vulkan' --device no-such-gpu
bad unknown-experiment "unknown experiment 'nope'" "$bin" experiment nope
bad no-subcommand "" "$bin"

[ $fails -eq 0 ] && echo "all CLI checks passed" || { echo "$fails CLI checks failed"; exit 1; }
