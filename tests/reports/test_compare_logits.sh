#!/usr/bin/env bash
# scripts/compare_logits.py: llama.cpp's logits recorded on the tiny model (golden/hf-tiny converted to an f32 GGUF by
# `hybridlab convert`, tests/reports/data/tokens-16.txt, `../shared/peers/llama.cpp/logits ... 0 0`: its CPU path,
# data/llama-cpu-tiny-f32-16.f32) and hybridlab's Vulkan plan against the oracle on the same file and ids; bad inputs.
#   usage: test_compare_logits.sh BUILD/hybridlab ROOT
set -u
bin=$1 root=$2
# Debian's python3 (numpy comes with python3-matplotlib), as the experiments' report.py
py=${HYBRIDLAB_PYTHON:-$( [ -x /usr/bin/python3 ] && echo /usr/bin/python3 || echo python3 )}
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
d=$root/tests/reports/data
"$bin" convert --model "$root/golden/hf-tiny/model" --out "$t/tiny.gguf" --quant f32 >/dev/null 2>&1 || fail "convert"
"$bin" run --model "$t/tiny.gguf" --tokens "$d/tokens-16.txt" --out "$t/oracle.safetensors" >/dev/null 2>&1 || fail "oracle"
"$bin" run --model "$t/tiny.gguf" --tokens "$d/tokens-16.txt" --out "$t/vk.safetensors" --ops '*=vulkan' >/dev/null 2>&1 \
  || fail "vulkan plan"
"$py" "$root/scripts/compare_logits.py" "$t/oracle.safetensors" "llama.cpp CPU=$d/llama-cpu-tiny-f32-16.f32" \
  "hybridlab *=vulkan=$t/vk.safetensors" > "$t/out" 2>&1 || fail "compare: $(cat "$t/out")"
cat "$t/out"
# Both in f32, summed in different orders: llama.cpp measured 1.2e-4 from the oracle here, the Vulkan plan 2e-6.
"$py" - "$t/out" <<'PY' || fail "deviations out of range"
import re, sys
rows = dict(re.findall(r"^(.*): relative L2 (\S+), argmax agreement 1\.0000$", open(sys.argv[1]).read(), re.M))
assert 1e-6 < float(rows["llama.cpp CPU"]) < 1e-3, rows
assert float(rows["hybridlab *=vulkan"]) < 1e-4, rows
PY
# Without numpy (the GPU machine has none): the same lines from the standard-library path.
"$py" -c "import sys, runpy; sys.modules['numpy'] = None; sys.argv = sys.argv[1:]; runpy.run_path(sys.argv[0], run_name='__main__')" \
  "$root/scripts/compare_logits.py" "$t/oracle.safetensors" "llama.cpp CPU=$d/llama-cpu-tiny-f32-16.f32" \
  "hybridlab *=vulkan=$t/vk.safetensors" > "$t/plain" 2>&1 || fail "compare without numpy: $(cat "$t/plain")"
"$py" - "$t/out" "$t/plain" <<'PY' || fail "without numpy: different numbers"
import re, sys
a, b = ({k: (l2, ag) for k, l2, ag in re.findall(r"^(.*): relative L2 (\S+), argmax agreement (\S+)$", open(p).read(), re.M)}
        for p in sys.argv[1:3])
assert a.keys() == b.keys() and len(a) == 2, (a, b)
for k in a:
    assert abs(float(a[k][0]) / float(b[k][0]) - 1) < 1e-2 and a[k][1] == b[k][1], (k, a[k], b[k])
PY
# Bad inputs: one line on stderr, exit 2.
head -c 1000 "$d/llama-cpu-tiny-f32-16.f32" > "$t/short.f32"
for bad in "x=$t/short.f32" "x=$t/none.f32" "no-label"; do
  if "$py" "$root/scripts/compare_logits.py" "$t/oracle.safetensors" "$bad" > "$t/o" 2> "$t/e"; then fail "$bad accepted"; fi
  [ "$(wc -l < "$t/e")" -eq 1 ] && grep -q "^compare_logits.py: " "$t/e" || fail "$bad: $(cat "$t/e")"
done
echo "compare_logits: ok"
