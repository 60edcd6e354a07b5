#!/usr/bin/env bash
# scripts/end_to_end_report.py on recorded inputs (an H200 bench JSON (b122e18's) and bandwidth report (0b141f1's), a llama-bench log, an
# oracle log): the peers' table and its ratios, the f16 matrix roofline, and one-line errors on bad peer files.
#   usage: test_end_to_end_report.sh ROOT
set -u
root=$1
py=${HYBRIDLAB_PYTHON:-python3}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
report_no_oracle() { "$py" "$root/scripts/end_to_end_report.py" --bench "$root/tests/reports/data/bench.json" \
  --bandwidth "$root/tests/reports/data/bandwidth.json" --out "$tmp/e2e.md" "$@"; }
report() { report_no_oracle --oracle "$root/tests/reports/data/oracle.log" "$@"; }

report --peer "KHR only=$root/tests/reports/data/llama-khr.log" > "$tmp/out" 2>&1 || fail "report: $(cat "$tmp/out")"
# hybridlab pp512 1704.8 and tg128 147.9 (bench JSON medians) against llama-bench's means 4145.7 and 143.1.
grep -qF "| KHR only | 4145.7 +- 83.0 | 143.1 +- 3.1 | 0.41 | 1.03 |" "$tmp/e2e.md" || fail "peer row: $(grep 'KHR only' "$tmp/e2e.md")"
grep -qF "| hybridlab (this plan) | **1704.8** | **147.9** |" "$tmp/e2e.md" || fail "hybridlab row"
# 5.89 GFLOP per token x 1704.8 tok/s against 638.5 TFLOP/s.
grep -qF "1.57% of the f16 matrix roofline" "$tmp/e2e.md" || fail "f16 roofline: $(grep '^| pp512' "$tmp/e2e.md")"
grep -qF "relative L2 1.598e-01" "$tmp/e2e.md" || fail "oracle lines"
# The prefill run's GPU time (device_tok_per_s 1745.2: 293.37 ms) against its wall clock (1704.8 tok/s: 300.33 ms).
grep -qF "On the GPU a pp512 run takes 293.37 ms from its first command to its last (1745.2 tok/s;" "$tmp/e2e.md" || fail "prefill GPU time"
grep -qF "the other 6.96 ms of the wall clock's median (300.33 ms) are the host's" "$tmp/e2e.md" || fail "prefill host time"
# A KHR-only peer calibrates the RDNA4 projection: its section, with the calibration rows and hybridlab's projected rows.
grep -qF "## RDNA4 projection (a projection, not a measurement)" "$tmp/e2e.md" || fail "no RDNA4 projection section"
grep -qE "^\| tg128 \| 143\.1 \| [0-9.]+ \| 153\.4 \| [-+][0-9.]+% \|$" "$tmp/e2e.md" || fail "calibration row: $(grep '^| tg128' "$tmp/e2e.md")"
grep -qE "^\| pp512 \| 1704\.8 \| [0-9.]+ \| [-+][0-9.]+% \| [0-9.]+ \|$" "$tmp/e2e.md" || fail "projected row: $(grep '^| pp512' "$tmp/e2e.md")"
# The deviation column: compare_logits.py's lines matched to the engines by label; a label naming no engine is an error.
printf 'oracle: o.safetensors, 76 positions x 248320 logits\nhybridlab: relative L2 6.687e-05, argmax agreement 1.0000\nKHR only: relative L2 6.900e-02, argmax agreement 0.9737\n' > "$tmp/dev.log"
report --peer "KHR only=$root/tests/reports/data/llama-khr.log" --deviation "$tmp/dev.log" > "$tmp/out" 2>&1 || fail "deviation: $(cat "$tmp/out")"
grep -qF "| KHR only | 4145.7 +- 83.0 | 143.1 +- 3.1 | 0.41 | 1.03 | 6.90e-02 | 0.9737 |" "$tmp/e2e.md" || fail "deviation peer row: $(grep 'KHR only' "$tmp/e2e.md")"
grep -qF "| 1.00 | 1.00 | 6.69e-05 | 1.0000 |" "$tmp/e2e.md" || fail "deviation hybridlab row"
report --peer "KHR only=$root/tests/reports/data/llama-khr.log" --deviation "$tmp/dev.log" --deviation-from "x1's call" > "$tmp/out" 2>&1 ||
  fail "deviation-from: $(cat "$tmp/out")"
grep -qF "| relative L2 vs oracle (x1's call) | argmax agreement (x1's call) |" "$tmp/e2e.md" || fail "deviation-from header"
printf 'CUDA: relative L2 1e-3, argmax agreement 1.0\n' > "$tmp/dev-other.log"
if report --peer "KHR only=$root/tests/reports/data/llama-khr.log" --deviation "$tmp/dev-other.log" > "$tmp/out" 2>&1; then fail "deviation naming no engine accepted"; fi
grep -qF "'CUDA' names no engine" "$tmp/out" || fail "deviation error: $(cat "$tmp/out")"
# An oracle log without check-oracle lines (device_e2e.sh's plan-logits run): the correctness section quotes the
# deviation row; without one it is an error.
printf 'op  layer  phase  variant\nadd  model  prefill  vulkan:elementwise\nprefill: no per-token fallback\n' > "$tmp/plan.log"
report_no_oracle --oracle "$tmp/plan.log" --peer "KHR only=$root/tests/reports/data/llama-khr.log" --deviation "$tmp/dev.log" \
  > "$tmp/out" 2>&1 || fail "plan log: $(cat "$tmp/out")"
grep -qF "relative L2 6.687e-05, argmax agreement 1.0000 (the deviation column above" "$tmp/e2e.md" || fail "plan-log correctness line"
if report_no_oracle --oracle "$tmp/plan.log" > "$tmp/out" 2>&1; then fail "plan log without a deviation row accepted"; fi
grep -qF "no check-oracle lines, and no --deviation row for hybridlab" "$tmp/out" || fail "plan-log error: $(cat "$tmp/out")"
# Peers recorded by `hybridlab bench --peer` in the bench JSON appear without --peer files.
python3 - "$root/tests/reports/data/bench.json" "$tmp/bench-peers.json" <<'PY'
import json, sys
b = json.load(open(sys.argv[1]))
b["peers"] = [{"label": "in JSON", "command": "llama-bench ...", "llama_bench": [
    {"build_commit": "x1", "backends": "Vulkan", "n_prompt": 512, "n_gen": 0, "avg_ts": 3409.6, "stddev_ts": 1.0},
    {"build_commit": "x1", "backends": "Vulkan", "n_prompt": 0, "n_gen": 128, "avg_ts": 295.8, "stddev_ts": 0.5}]}]
json.dump(b, open(sys.argv[2], "w"))
PY
"$py" "$root/scripts/end_to_end_report.py" --bench "$tmp/bench-peers.json" --bandwidth "$root/tests/reports/data/bandwidth.json" \
  --out "$tmp/e2e.md" > "$tmp/out" 2>&1 || fail "report with peers in the bench JSON: $(cat "$tmp/out")"
grep -qF "| in JSON | 3409.6 +- 1.0 | 295.8 +- 0.5 | 0.50 | 0.50 |" "$tmp/e2e.md" || fail "JSON peer row: $(grep 'in JSON' "$tmp/e2e.md")"
# A peer whose standard deviation exceeds 5% of its mean: its ratio is marked noisy (no claim).
python3 - "$tmp/bench-peers.json" <<'PY'
import json, sys
b = json.load(open(sys.argv[1]))
b["peers"][0]["llama_bench"][1]["stddev_ts"] = 29.6
json.dump(b, open(sys.argv[1], "w"))
PY
"$py" "$root/scripts/end_to_end_report.py" --bench "$tmp/bench-peers.json" --bandwidth "$root/tests/reports/data/bandwidth.json" \
  --out "$tmp/e2e.md" > "$tmp/out" 2>&1 || fail "report with a noisy peer: $(cat "$tmp/out")"
grep -qF "| in JSON | 3409.6 +- 1.0 | 295.8 +- 29.6 | 0.50 | 0.50 (noisy) |" "$tmp/e2e.md" || fail "noisy peer row: $(grep 'in JSON' "$tmp/e2e.md")"
# ... and a noisy KHR peer (the RDNA4 projection's calibration) says how uncertain its calibration error is.
sed -i 's/"label": "in JSON"/"label": "KHR noisy"/' "$tmp/bench-peers.json"
"$py" "$root/scripts/end_to_end_report.py" --bench "$tmp/bench-peers.json" --bandwidth "$root/tests/reports/data/bandwidth.json" \
  --out "$tmp/e2e.md" > "$tmp/out" 2>&1 || fail "report with a noisy KHR peer: $(cat "$tmp/out")"
grep -qF "The calibrating peer's tg128 is noisy in this call (295.8 +- 29.6 tok/s)" "$tmp/e2e.md" || fail "noisy calibration line"
# Without an oracle log the report says the check did not run.
report_no_oracle > "$tmp/out" 2>&1 || fail "report without oracle: $(cat "$tmp/out")"
grep -qF "Not checked in this device call" "$tmp/e2e.md" || fail "no-oracle line"
grep -qF "No RDNA4 projection here" "$tmp/e2e.md" || fail "no-peer projection line"

# Bad peer inputs: one line on stderr, non-zero exit, no report.
printf 'ggml_vulkan: no json here\n' > "$tmp/none.log"
printf 'log line\n[ {"n_prompt": 512, \n' > "$tmp/cut.log"
for bad in none cut; do
  rm -f "$tmp/e2e.md"
  if report --peer "x=$tmp/$bad.log" > "$tmp/out" 2>&1; then fail "$bad: accepted"; fi
  [ "$(wc -l < "$tmp/out")" -eq 1 ] || fail "$bad: not one line: $(cat "$tmp/out")"
  grep -q "^end_to_end_report.py: .*$bad.log" "$tmp/out" || fail "$bad: $(cat "$tmp/out")"
  [ ! -e "$tmp/e2e.md" ] || fail "$bad: wrote a report"
done
echo "end_to_end_report: ok"
