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
# bad_after NAME EXPECTED-SUBSTRING CMD...: must exit non-zero with its one error line last, after progress lines
# (a plan prints its device first)
bad_after() {
  local name=$1 want=$2; shift 2
  "$@" >"$t/out" 2>"$t/err"
  local rc=$? errors
  errors=$(grep -c "^hybridlab: error:" "$t/err")
  if [ $rc -eq 0 ] || [ $rc -ge 128 ] || [ "$errors" -ne 1 ] || ! tail -1 "$t/err" | grep -q "^hybridlab: error: .*$want"; then
    echo "FAIL $name: exit $rc, want a last line with '$want', got: $(cat "$t/err")"; fails=$((fails + 1))
  else
    echo "ok   $name: $(tail -1 "$t/err")"
  fi
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
# bench (its good runs: test_bench.sh); the model and the plan are checked before anything runs.
bad bench-no-model "exactly one of --model PATH or --preset NAME" "$bin" bench -p 8 -n 2
bad bench-unknown-op "unknown op 'nope'" "$bin" bench --model "$tiny" -p 8 -n 2 --ops 'nope=vulkan'
bad bench-unknown-variant "unknown variant 'vulkan:nope'" "$bin" bench --model "$tiny" -p 8 -n 2 --ops 'matmul=vulkan:nope'
bad bench-p0 "no test to run" "$bin" bench --model "$tiny" -p 0 -n 0
bad bench-p0-list "or 0 alone" "$bin" bench --model "$tiny" -p 0,8 -n 2
bad bench-p-list "prompt lengths must be positive integers" "$bin" bench --model "$tiny" -p 8,x -n 2
bad bench-n "must be >= 0" "$bin" bench --model "$tiny" -p 8 -n -1
bad bench-runs "--runs must be >= 1" "$bin" bench --model "$tiny" -p 8 --runs 0
bad bench-no-device "no usable Vulkan driver" env VK_ICD_FILENAMES=/nonexistent VK_DRIVER_FILES=/nonexistent \
  "$bin" bench --model "$tiny" -p 8 -n 2 --ops '*=vulkan'
bad bench-unknown-device "no-such-gpu" "$bin" bench --model "$tiny" -p 8 -n 2 --ops '*=vulkan' --device no-such-gpu
bad no-subcommand "" "$bin"

# ---- hardening (issue 8): the bad inputs not covered above that the command line reaches. The rest are tested through
# the API: tests/reference/test_io.cpp, tests/quant/test_gguf.cpp, tests/gpu/test_vk_runtime.cpp, test_hardening.cpp.
st() {  # st FILE HEADER DATA_BYTES [HEADER_LENGTH]: a safetensors file (u64 header length, header, zero data)
  local n=${4:-${#2}} i
  { for i in 0 1 2 3 4 5 6 7; do printf "\\x$(printf %02x $(( (n >> (8 * i)) & 255 )))"; done
    printf '%s' "$2"; head -c "$3" /dev/zero; } >"$1"
}
ckpt() {  # ckpt DIR: a checkpoint directory with hf-tiny's config.json and no weights yet
  mkdir -p "$1" && cp "$tiny/config.json" "$1/"
}
ckpt "$t/nocfg" && rm "$t/nocfg/config.json" && ln -s "$tiny/model.safetensors" "$t/nocfg/model.safetensors"
ckpt "$t/text" && echo "hello, this is not a checkpoint" >"$t/text/model.safetensors"
ckpt "$t/hlen" && st "$t/hlen/model.safetensors" '{}' 0 4096
ckpt "$t/offs" && st "$t/offs/model.safetensors" '{"lm_head.weight":{"dtype":"F32","shape":[4],"data_offsets":[0,16]}}' 8
ckpt "$t/dtype" && st "$t/dtype/model.safetensors" '{"lm_head.weight":{"dtype":"F8_E4M3","shape":[1],"data_offsets":[0,1]}}' 1
ckpt "$t/shape" && sed 's/"vocab_size": 512/"vocab_size": 500/' "$tiny/config.json" >"$t/shape/config.json" \
  && ln -s "$tiny/model.safetensors" "$t/shape/model.safetensors"
ckpt "$t/shard" && echo '{"weight_map": {"lm_head.weight": "model-00001-of-00002.safetensors"}}' >"$t/shard/model.safetensors.index.json"
ckpt "$t/index" && echo '{"weight_map": ["not", "a", "map"]}' >"$t/index/model.safetensors.index.json"
echo "1 2147483648" >"$t/big.txt"
run_tiny() { "$bin" run --tokens "$t/tok.txt" --out "$t/x.safetensors" "$@"; }
bad missing-config "cannot open config file" run_tiny --model "$t/nocfg"
bad not-safetensors "header length" run_tiny --model "$t/text"
bad header-length "header length 4096 runs past the end of the file" run_tiny --model "$t/hlen"
bad data-offsets "data offsets .0,16. lie outside the data section (8 bytes)" run_tiny --model "$t/offs"
bad unsupported-dtype 'unsupported dtype "F8_E4M3"' run_tiny --model "$t/dtype"
bad shape-mismatch "'model.embed_tokens.weight' has shape .512, 128., expected .500, 128." run_tiny --model "$t/shape"
bad missing-shard "cannot open '$t/shard/model-00001-of-00002.safetensors'" run_tiny --model "$t/shard"
bad malformed-index "malformed index" run_tiny --model "$t/index"
bad token-overflow "'2147483648' (token 1) is not a non-negative integer id" "$bin" run --model "$tiny" --tokens "$t/big.txt" --out "$t/x.safetensors"
bad no-vulkan-device "no usable Vulkan driver" env VK_ICD_FILENAMES=/nonexistent VK_DRIVER_FILES=/nonexistent \
  "$bin" run --model "$tiny" --tokens "$t/tok.txt" --out "$t/x.safetensors" --ops '*=vulkan'
bad no-vulkan-device-list "no usable Vulkan driver" env VK_ICD_FILENAMES=/nonexistent VK_DRIVER_FILES=/nonexistent "$bin" devices
bad ops-not-pair "--ops entry 'matmul' is not op=variant" run_tiny --model "$tiny" --ops 'matmul'
bad unknown-family "no op has a variant or family 'cuda'" run_tiny --model "$tiny" --ops '*=cuda'

# ---- GGUF (issue 5): convert an HF checkpoint, synthesise a preset, run either file; bad GGUF input.
ok convert-f32 "$bin" convert --model "$tiny" --out "$t/tiny.gguf" --quant f32
ok convert-q4km "$bin" convert --model "$tiny" --out "$t/tiny-q4km.gguf" --quant q4_k_m
ok run-gguf "$bin" run --model "$t/tiny.gguf" --tokens "$t/tok.txt" --out "$t/g.safetensors" --prefill-chunk 3 --decode-from 5
ok run-gguf-q4km "$bin" run --model "$t/tiny-q4km.gguf" --tokens "$t/tok.txt" --out "$t/gq.safetensors"
ok synth "$bin" synth --preset tiny --seed 3 --quant q4_k_m --out "$t/synth.gguf" --layers 2 --check 2
grep -q "hidden RMS after layer 1" "$t/out" || { echo "FAIL synth --check printed no hidden-state RMS"; fails=$((fails + 1)); }
ok run-synth-gguf "$bin" run --model "$t/synth.gguf" --layers 2 --tokens "$t/tok.txt" --out "$t/s.safetensors"
ok info-gguf "$bin" info --model "$t/tiny-q4km.gguf"
if ! grep -q "4 layers" "$t/out" || ! grep -q "76 tensors" "$t/out" || ! grep -q "vocabulary: gpt2/qwen2, 512 tokens" "$t/out"; then
  echo "FAIL info-gguf: want the config, 76 tensors and the placeholder vocabulary, got: $(cat "$t/out")"; fails=$((fails + 1))
fi
head -c 100000 "$t/tiny.gguf" >"$t/truncated.gguf"
echo "not a gguf" >"$t/junk.gguf"
bad convert-quant "unknown quantization 'q3_k'" "$bin" convert --model "$tiny" --out "$t/x.gguf" --quant q3_k
bad convert-missing "is not a directory" "$bin" convert --model "$t/nope" --out "$t/x.gguf"
bad convert-unwritable "cannot create" "$bin" convert --model "$tiny" --out "$t/no/such/dir/x.gguf"
bad synth-preset "unknown preset" "$bin" synth --preset nope --out "$t/x.gguf"
bad synth-layers "the preset has 4 layers" "$bin" synth --preset tiny --out "$t/x.gguf" --layers 9
bad run-gguf-missing "cannot open" "$bin" run --model "$t/nope.gguf" --tokens "$t/tok.txt" --out "$t/x.safetensors"
bad run-gguf-truncated "beyond the end of the file" "$bin" run --model "$t/truncated.gguf" --tokens "$t/tok.txt" --out "$t/x.safetensors"
bad run-gguf-junk "not a GGUF file" "$bin" run --model "$t/junk.gguf" --tokens "$t/tok.txt" --out "$t/x.safetensors"
bad info-gguf-truncated "beyond the end of the file" "$bin" info --model "$t/truncated.gguf"
bad run-gguf-layers "the model has 2 layers" "$bin" run --model "$t/synth.gguf" --layers 3 --tokens "$t/tok.txt" --out "$t/x.safetensors"

# ---- hardening, GGUF: the bad inputs of the safetensors block above, in a GGUF file (one field of tiny.gguf patched).
gguf_patch() {  # gguf_patch OUT TENSOR FIELD VALUE: tiny.gguf with FIELD (ne0, type or offset) of TENSOR's info set to
                # VALUE; TENSOR "-" patches the header's counts instead (FIELD n_tensors or n_kv)
  python3 - "$t/tiny.gguf" "$@" <<'EOF'
import struct, sys
src, dst, name, field, value = sys.argv[1:6]
b = bytearray(open(src, 'rb').read())
if name == '-':
    struct.pack_into('<Q', b, {'n_tensors': 8, 'n_kv': 16}[field], int(value))
else:
    key = struct.pack('<Q', len(name)) + name.encode()
    p = b.index(key) + len(key)  # the tensor info: n_dims u32, ne[n_dims] i64, type u32, offset u64
    nd = struct.unpack_from('<I', b, p)[0]
    assert 1 <= nd <= 4, nd
    f, at = {'ne0': ('<q', p + 4), 'type': ('<I', p + 4 + 8 * nd), 'offset': ('<Q', p + 8 + 8 * nd)}[field]
    struct.pack_into(f, b, at, int(value))
open(dst, 'wb').write(b)
EOF
}
gguf_patch "$t/g-kv.gguf" - n_kv 1099511627776
gguf_patch "$t/g-nt.gguf" - n_tensors 1099511627776
gguf_patch "$t/g-off.gguf" output_norm.weight offset 1099511627776
gguf_patch "$t/g-shape.gguf" output_norm.weight ne0 64
gguf_patch "$t/g-q40.gguf" output_norm.weight type 2
gguf_patch "$t/g-type.gguf" output_norm.weight type 99
run_gguf() { "$bin" run --tokens "$t/tok.txt" --out "$t/x.safetensors" --model "$@"; }
bad gguf-metadata-count "truncated header: 1099511627776 metadata entries cannot fit in the" run_gguf "$t/g-kv.gguf"
bad gguf-tensor-count "truncated header: 1099511627776 tensor infos cannot fit in the" run_gguf "$t/g-nt.gguf"
bad gguf-data-offset "output_norm.weight.*: data at offset 1099511627776 + 512 bytes lies beyond the end of the file" \
  run_gguf "$t/g-off.gguf"
bad gguf-shape-mismatch "tensor 'output_norm.weight' has shape {64}, expected {128}" run_gguf "$t/g-shape.gguf"
bad gguf-unsupported-type "tensor 'output_norm.weight' has type q4_0, which the oracle cannot dequantize" run_gguf "$t/g-q40.gguf"
bad gguf-unknown-type "output_norm.weight.* has unknown ggml type id 99" run_gguf "$t/g-type.gguf"
bad gguf-token-range "outside the vocabulary" "$bin" run --model "$t/tiny.gguf" --tokens "$t/range.txt" --out "$t/x.safetensors"
bad gguf-empty-tokens "holds no tokens" "$bin" run --model "$t/tiny.gguf" --tokens "$t/empty.txt" --out "$t/x.safetensors"

# A variant unavailable on the device, from the command line: the cooperative-matrix GEMM with cooperative matrices left
# off (HYBRIDLAB_COOPMAT=0; lavapipe has none anyway). (hybridlab's Vulkan variants unavailable on a device without
# subgroup arithmetic: test_hardening.cpp, through the registry; the halide-vulkan ones on a second device of the
# process: ops/halide/test_halide.cpp.)
bad variant-unavailable "variant 'vulkan:qgemm_coopmat' of op 'matmul' is unavailable: " \
  env HYBRIDLAB_COOPMAT=0 "$bin" run --model "$tiny" --tokens "$t/tok.txt" --out "$t/x.safetensors" \
  --ops 'matmul=vulkan:qgemm_coopmat'

# ---- issue 23: bad inputs as a new user tried them. Each crashed, hung, grew without bound or answered wrong before;
# the commands that blew up run under 4 GB of address space (and the binary alone under a time limit), so a regression
# fails fast here.
limited() { ( ulimit -v 4000000; "$@" ); }
rep=$t/reports
bad runs-zero "--runs: Value 0 not in range 1 to 1000000" limited "$bin" experiment norms --runs 0 --out "$rep"
bad runs-negative "--runs: Value -3 not in range 1 to 1000000" limited "$bin" experiment norms --runs -3 --out "$rep"
bad quick-full "--quick excludes --full" "$bin" experiment norms --quick --full --out "$rep"
bad tag-path "--tag '../../evil': a tag is a name" "$bin" experiment norms --tag ../../evil --out "$rep"
bad tag-empty "--tag '': give a value or leave the option out" "$bin" experiment norms --tag '' --out "$rep"
bad variant-unknown "--variant 'vulkan:nope': experiment norms has no such variant" "$bin" experiment norms --variant vulkan:nope --out "$rep"
bad cases-none "--cases 'zzz': matches none of experiment norms's cases" "$bin" experiment norms --cases zzz --out "$rep"
bad cases-regex "--cases '(\[': not a valid regular expression" "$bin" experiment norms --cases '([' --out "$rep"
bad partial-untagged "--variant/--cases/--family/--no-sweep/--sweep/--sweep-axes/--gpu-only: a partial run needs --tag NAME" "$bin" experiment norms --cases 'T=1$' --out "$rep"
bad sweep-format "--sweep 'moe_block.fused_decode.wg': expected KEY=V1,V2,..." "$bin" experiment moe --sweep moe_block.fused_decode.wg --tag x --out "$rep"
bad sweep-value "--sweep 'moe_block.fused_decode.wg=8,x': 'x' is not an unsigned 32-bit value" "$bin" experiment moe --sweep moe_block.fused_decode.wg=8,x --tag x --out "$rep"
bad sweep-twice "'moe_block.fused_decode.wg' given twice" "$bin" experiment moe --sweep moe_block.fused_decode.wg=8 --sweep moe_block.fused_decode.wg=16 --tag x --out "$rep"
bad family-unknown "--family 'nope': experiment norms has no variant of that family" "$bin" experiment norms --family nope --tag x --out "$rep"
bad peers-missing "cannot read it" "$bin" experiment norms --cases 'T=1$' --tag x --peers "$rep/none.json" --out "$rep"
printf '{"peers": [{"experiment": "norms"}]}' > "$t/peers-bad.json"
bad peers-row "a row without experiment, case, device or a positive time_us" "$bin" experiment norms --cases 'T=1$' --tag x --peers "$t/peers-bad.json" --out "$rep"
bad out-unmakeable "--out '/proc/hybridlab-no': cannot create the report directory" "$bin" experiment norms --out /proc/hybridlab-no
if [ -n "$(find "$rep" -name '*.json' 2>/dev/null)" ]; then echo "FAIL a refused experiment wrote a report"; fails=$((fails + 1)); fi
bad bench-tag-path "--tag '../x': a name" "$bin" bench --model "$tiny" -p 8 -n 2 --tag ../x --out "$rep"
# bench --peer: llama.cpp's llama-bench on the same GGUF, its rows in the report. A stand-in that checks what it is
# given (its environment, the model, the prompt lengths, decode length and runs) and prints llama-bench's JSON.
cat >"$t/fake-llama-bench" <<'SH'
#!/bin/sh
[ "$PEER_ENV" = 7 ] || { echo "PEER_ENV not set" >&2; exit 3; }
[ "$1 $3 $4 $5 $6 $7 $8" = "-m -p 8 -n 2 -r 1" ] || { echo "args: $*" >&2; exit 4; }
[ -f "$2" ] || exit 5
echo "ggml log line" >&2
echo '[ {"build_commit": "fake123", "backends": "Vulkan", "n_prompt": 8, "n_gen": 0, "avg_ts": 400.0, "stddev_ts": 4.0},'
echo '  {"build_commit": "fake123", "backends": "Vulkan", "n_prompt": 0, "n_gen": 2, "avg_ts": 50.0, "stddev_ts": 0.5} ]'
SH
printf '#!/bin/sh\necho no json here\n' >"$t/garbage-bench"
chmod +x "$t/fake-llama-bench" "$t/garbage-bench"
ok bench-peer "$bin" bench --model "$t/tiny-q4km.gguf" -p 8 -n 2 --runs 1 --no-breakdown --out "$rep" --tag peer \
  --peer "fake llama=PEER_ENV=7 $t/fake-llama-bench"
if ! grep -q "^pp8 .*400.00 +- 4.00 .*hybridlab / peer" "$t/out" || ! python3 - "$rep" <<'PY'
import glob, json, sys
r = json.load(open(glob.glob(sys.argv[1] + "/*/bench-peer.json")[0]))
p = r["peers"][0]
assert p["label"] == "fake llama" and "PEER_ENV=7" in p["command"], p
assert [x["avg_ts"] for x in p["llama_bench"]] == [400.0, 50.0] and p["llama_bench"][0]["build_commit"] == "fake123", p
PY
then echo "FAIL bench-peer report: $(cat "$t/out")"; fails=$((fails + 1)); fi
bad bench-peer-missing "is not an executable file" "$bin" bench --model "$t/tiny-q4km.gguf" -p 8 -n 2 --peer "x=$t/nope"
bad bench-peer-env "is not an environment assignment" "$bin" bench --model "$t/tiny-q4km.gguf" -p 8 -n 2 \
  --peer "x=lower=1 $t/fake-llama-bench"
bad bench-peer-not-gguf "--peer: llama.cpp reads a GGUF file" "$bin" bench --model "$tiny" -p 8 -n 2 --peer "x=$t/fake-llama-bench"
bad_after bench-peer-garbage "llama-bench printed no JSON array" "$bin" bench --model "$t/tiny-q4km.gguf" -p 8 -n 2 --runs 1 \
  --no-breakdown --out "$rep" --tag garbage --peer "x=$t/garbage-bench"

# Counts from a file, checked against the tensors it holds before anything is allocated.
python3 - "$t/tiny.gguf" "$t/g-blocks.gguf" <<'EOF2'
import struct, sys
b = bytearray(open(sys.argv[1], 'rb').read())
key = b'qwen35moe.block_count'
p = b.index(struct.pack('<Q', len(key)) + key) + 8 + len(key)
assert struct.unpack_from('<I', b, p)[0] == 4  # u32
struct.pack_into('<I', b, p + 4, 2000000000)
open(sys.argv[2], 'wb').write(b)
EOF2
bad gguf-block-count "qwen35moe.block_count is 2000000000 but the file holds tensors of 4 blocks" limited "$bin" info --model "$t/g-blocks.gguf"
bad gguf-block-count-run "qwen35moe.block_count is 2000000000 but the file holds tensors of 4 blocks" limited run_gguf "$t/g-blocks.gguf"
layers_config() {  # layers_config DIR N: hf-tiny with num_hidden_layers N and no layer_types (the schedule from the count)
  ckpt "$1" && ln -s "$tiny/model.safetensors" "$1/model.safetensors" && python3 - "$tiny/config.json" "$1/config.json" "$2" <<'EOF2'
import json, sys
c = json.load(open(sys.argv[1]))
del c['layer_types']
c['num_hidden_layers'] = int(sys.argv[3])
json.dump(c, open(sys.argv[2], 'w'))
EOF2
}
layers_config "$t/layers2g" 2000000000 && layers_config "$t/layers9" 9
bad config-layer-count "num_hidden_layers 2000000000 is not in \[1, 65536\]" limited "$bin" info --model "$t/layers2g"
bad config-layer-count-run "num_hidden_layers 2000000000 is not in \[1, 65536\]" limited run_tiny --model "$t/layers2g"
bad config-layers-present "config.json has num_hidden_layers 9 but the checkpoint holds tensors of 4 layers" limited run_tiny --model "$t/layers9"

# NaN weights (layer 0's router): named by op and layer, non-zero exit; --allow-nonfinite lets them through.
mkdir -p "$t/nan" && cp "$tiny/config.json" "$t/nan/" && python3 - "$tiny/model.safetensors" "$t/nan/model.safetensors" <<'EOF2'
import json, struct, sys
b = bytearray(open(sys.argv[1], 'rb').read())
n = struct.unpack_from('<Q', b, 0)[0]
lo, hi = json.loads(b[8:8 + n])['model.layers.0.mlp.gate.weight']['data_offsets']
b[8 + n + lo:8 + n + hi] = struct.pack('<f', float('nan')) * ((hi - lo) // 4)
open(sys.argv[2], 'wb').write(b)
EOF2
bad nan-oracle "non-finite values: op matmul at layer 0 (gated-deltanet) produced 64 NaN/Inf of 64 values" run_tiny --model "$t/nan"
bad nan-oracle-f64 "non-finite values: op matmul at layer 0 (gated-deltanet)" run_tiny --model "$t/nan" --precision f64
bad_after nan-validate "non-finite values: op matmul (vulkan:[a-z_0-9]*) at layer 0 (gated-deltanet) produced 64 NaN/Inf of 64 values in 'y'" \
  run_tiny --model "$t/nan" --ops '*=vulkan' --validate
bad_after nan-check-oracle "non-finite values: the logits of positions 0..7 hold 4096 NaN/Inf of 4096 values" \
  run_tiny --model "$t/nan" --ops '*=vulkan' --check-oracle
bad_after nan-check-oracle-allowed "check-oracle: no comparison: the plan's logits hold 4096 NaN/Inf values" \
  run_tiny --model "$t/nan" --ops '*=vulkan' --check-oracle --allow-nonfinite
ok nan-allowed run_tiny --model "$t/nan" --allow-nonfinite
bad bench-nan "non-finite values: the logits of the prompt's last token hold 512 NaN/Inf of 512 values" \
  "$bin" bench --model "$t/nan" -p 8 -n 2 --no-breakdown --out "$rep"

# --out in a missing directory: refused before a full-size layer is synthesised (it took 11 s and 4.5 GB before).
bad out-missing-dir "--out '$t/no/such/x.safetensors': cannot create the file: cannot write in directory '$t/no/such', which does not exist" \
  limited timeout 20 "$bin" run --preset qwen36-35b-a3b --layers 1 --tokens "$t/tok.txt" --out "$t/no/such/x.safetensors"
bad out-directory "cannot write there: it is a directory" "$bin" run --model "$tiny" --tokens "$t/tok.txt" --out "$t"
bad convert-out-missing "cannot write in directory '$t/no/such', which does not exist" "$bin" convert --model "$tiny" --out "$t/no/such/x.gguf"
bad synth-out-missing "cannot write in directory '$t/no/such', which does not exist" \
  limited timeout 20 "$bin" synth --preset qwen36-35b-a3b --out "$t/no/such/x.gguf"
bad bench-out-unmakeable "--out '/proc/hybridlab-no': cannot create the directory" "$bin" bench --model "$tiny" -p 8 -n 2 --out /proc/hybridlab-no

# Accepted silently before: an empty plan, zero layers, a negative decode start, --quick with --full (above).
bad ops-empty "--ops '' names no op=variant pair" run_tiny --model "$tiny" --ops ''
bad ops-commas "--ops ' , ' names no op=variant pair" run_tiny --model "$tiny" --ops ' , '
bad bench-ops-empty "--ops '' names no op=variant pair" "$bin" bench --model "$tiny" -p 8 -n 2 --ops ''
bad layers-zero "--layers 0: give at least 1 layer" run_tiny --model "$tiny" --layers 0
bad layers-negative "--layers -2: give at least 1 layer" run_tiny --model "$tiny" --layers -2
bad synth-layers-zero "--layers 0: the preset has 4 layers" "$bin" synth --preset tiny --out "$t/x.gguf" --layers 0
bad decode-from-negative "--decode-from -1: give a token index from 0 to the number of tokens" run_tiny --model "$tiny" --decode-from -1
bad prefill-chunk-negative "--prefill-chunk -1: give 0 (one chunk) or a positive chunk size" run_tiny --model "$tiny" --prefill-chunk -1
bad ssm-chunk-zero "--ssm-chunk: Value 0 not in range 1 to 65536" run_tiny --model "$tiny" --ssm-chunk 0
# Whole numbers as typed: CLI11 alone read a seed of -1 as 2^64 - 1 and saturated an int64 at 2^63 - 1, silently.
bad seed-negative "--seed: '-1' is not a non-negative whole number below 2^64" "$bin" run --preset tiny --seed -1 --tokens "$t/tok.txt" --out "$t/x.safetensors"
bad seed-overflow "--seed: '99999999999999999999999' is not a non-negative whole number" \
  "$bin" run --preset tiny --seed 99999999999999999999999 --tokens "$t/tok.txt" --out "$t/x.safetensors"
bad prefill-chunk-overflow "--prefill-chunk: '99999999999999999999' is not a whole number within 64 bits" \
  run_tiny --model "$tiny" --prefill-chunk 99999999999999999999
bad decode-from-fraction "--decode-from: '1.5' is not a whole number" run_tiny --model "$tiny" --decode-from 1.5
bad synth-seed-negative "--seed: '-2' is not a non-negative whole number" "$bin" synth --preset tiny --seed -2 --out "$t/x.gguf"
bad bench-token-seed "--token-seed: '-5' is not a non-negative whole number" "$bin" bench --model "$tiny" -p 8 -n 2 --token-seed -5
bad tokens-directory "token file '$t' is a directory" "$bin" run --model "$tiny" --tokens "$t" --out "$t/x.safetensors"
bad weight-cache-env "HYBRIDLAB_WEIGHT_CACHE_MB='-1': give a size in MB" \
  env HYBRIDLAB_WEIGHT_CACHE_MB=-1 "$bin" run --model "$tiny" --tokens "$t/tok.txt" --out "$t/x.safetensors"
bad weight-cache-env-unit "HYBRIDLAB_WEIGHT_CACHE_MB='8G': give a size in MB" \
  env HYBRIDLAB_WEIGHT_CACHE_MB=8G "$bin" run --model "$tiny" --tokens "$t/tok.txt" --out "$t/x.safetensors"
ckpt "$t/overlap" && st "$t/overlap/model.safetensors" \
  '{"a":{"dtype":"F32","shape":[4],"data_offsets":[0,16]},"b":{"dtype":"F32","shape":[4],"data_offsets":[8,24]}}' 24
ckpt "$t/repeat" && st "$t/repeat/model.safetensors" \
  '{"a":{"dtype":"F32","shape":[4],"data_offsets":[0,16]},"a":{"dtype":"F32","shape":[4],"data_offsets":[16,32]}}' 32
bad safetensors-overlap "the data of tensors 'a' and 'b' overlap" run_tiny --model "$t/overlap"
bad safetensors-repeat "tensor 'a' appears twice in the header" run_tiny --model "$t/repeat"

# `devices` with the driver's manifest installed twice (say in /etc and in /usr/share): each device once.
lvp=$(ls /usr/share/vulkan/icd.d/lvp_icd*.json 2>/dev/null | head -1)
if [ -n "$lvp" ]; then
  cp "$lvp" "$t/icd-a.json" && cp "$lvp" "$t/icd-b.json"
  ok devices-twice env VK_DRIVER_FILES="$t/icd-a.json:$t/icd-b.json" VK_ICD_FILENAMES="$t/icd-a.json:$t/icd-b.json" "$bin" devices
  n=$(grep -c '^[0-9]*: .*\[' "$t/out")
  [ "$n" = 1 ] || { echo "FAIL devices-twice: want 1 device, got $n: $(cat "$t/out")"; fails=$((fails + 1)); }
fi

# --timings: decode steps of the tiny model take well under a millisecond per layer; printed, not rounded to 0.
ok timings run_tiny --model "$tiny" --timings --decode-from 5
if ! grep -q "step 4 (1 tokens):  gated-deltanet [0-9.e+-]* ms/layer  full-attention [0-9.e+-]* ms/layer" "$t/err" ||
   grep -q "0.000 s/layer\| 0 ms/layer" "$t/err"; then
  echo "FAIL timings: want every step's time per layer in ms, none zero: $(cat "$t/err")"; fails=$((fails + 1))
fi

[ $fails -eq 0 ] && echo "all CLI checks passed" || { echo "$fails CLI checks failed"; exit 1; }
