#!/usr/bin/env bash
# `hybridlab bench` on the tiny model (golden/hf-tiny): the JSON report's fields, positive throughputs, and
# greedy decode that is right, not just fast: the tokens of an all-Vulkan plan (argmax on the device, decode
# steps after the second replayed from a capture) equal
# those of the all-reference plan (argmax on the host), and each one is the argmax of the oracle's logits
# (`hybridlab run`, every token through decode) at the step before. Usage: test_bench.sh BUILD/hybridlab ROOT
set -eu
bin=$1 root=$2
tiny=$root/golden/hf-tiny/model
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
common=(--model "$tiny" -p 8,13 -n 6 --prefill-chunk 5 --runs 2)
"$bin" bench "${common[@]}" --ops '*=vulkan' --out "$t/r" --tag vk >"$t/vk.out"
"$bin" bench "${common[@]}" --out "$t/r" --tag ref --no-breakdown --warmup 3 --warmup-ms 0 >"$t/ref.out"
grep -q "2 runs after 3 warm-ups" "$t/ref.out"
! "$bin" bench "${common[@]}" --out "$t/r" --warmup-ms -1 2>/dev/null
! "$bin" bench "${common[@]}" --out "$t/r" --warmup 0 2>/dev/null
# -p 0: decode alone (no prompt test; its errors: test_cli.sh).
"$bin" bench --model "$tiny" -p 0 -n 3 --runs 1 --warmup 1 --warmup-ms 0 --no-breakdown --out "$t/r" --tag tg-only >"$t/tg.out"
grep -q "^tg3 " "$t/tg.out" && ! grep -q "^pp" "$t/tg.out"
python3 -c "import json, sys; assert [x['label'] for x in json.load(open(sys.argv[1]))['tests']] == ['tg3']" "$t/r/host-cpu/bench-tg-only.json"
# Prefill in issue order (default: level scheduling in prefill too; runtime/device.h): more prefill barriers, the same
# decode.
HYBRIDLAB_TUNE=device.stream.reorder_prefill=0 "$bin" bench "${common[@]}" --ops '*=vulkan' --out "$t/r" --tag vk-issue \
  --no-breakdown >/dev/null
# Greedy decode fed on the device (each replayed step embeds the step before's argmax without a download, the
# default: the vk run) against the host downloading each id before the next step: the same tokens.
HYBRIDLAB_TUNE=decode.device_token=0 "$bin" bench "${common[@]}" --ops '*=vulkan' --out "$t/r" --tag vk-hostid --no-breakdown \
  >/dev/null
cat "$t/vk.out"
vk=$(ls "$t"/r/*/bench-vk.json) ref=$t/r/host-cpu/bench-ref.json vki=$(ls "$t"/r/*/bench-vk-issue.json)
vkd=$(ls "$t"/r/*/bench-vk-hostid.json)
grep -q "^pp13 " "$t/vk.out" && grep -q "^tg6 " "$t/vk.out" && grep -q "per-op breakdown" "$t/vk.out"
python3 - "$vk" "$ref" "$vki" "$vkd" >"$t/tokens.txt" <<'PY'
import json, sys
vk, ref, vki, vkd = (json.load(open(p)) for p in sys.argv[1:5])
for k in ["schema", "device", "commit", "date", "plan", "model", "prefill_chunk", "runs", "tokens", "tests"]:
    assert k in vk, k
assert vk["schema"] == "hybridlab.bench/1"
assert vk["device"]["driver"] and vk["device"]["slug"] and vk["commit"]
assert vk["plan"] != "all reference" and ref["plan"] == "all reference", (vk["plan"], ref["plan"])
assert vk["model"]["layers"] == 4 and vk["prefill_chunk"] == 5 and vk["runs"] == 2
assert vk["warmup_runs"] == 2 and ref["warmup_runs"] == 3
assert vk["warmup_ms"] == 1000 and ref["warmup_ms"] == 0
# Warm-up by time as well as by count: at least the count; the default keeps going until 1000 ms (or 100 runs).
for t in vk["tests"]:
    w = t["warmup"]
    assert w["runs"] >= 2 and (w["ms"] >= 1000 or w["runs"] == 100), t["label"]
for t in ref["tests"]:
    assert t["warmup"]["runs"] == 3 and t["warmup"]["ms"] > 0, t["label"]
assert [t["label"] for t in vk["tests"]] == ["pp8", "pp13", "tg6"]
for t in vk["tests"]:
    s = t["tok_per_s"]
    assert len(s["runs"]) == 2 and all(x > 0 for x in s["runs"]) and s["min"] <= s["median"] <= s["max"], t
    assert t["device_tok_per_s"]["median"] > 0, t
    assert t["dispatches_per_token"] > 0 and t["submits"] >= 1 and t["host_record_ms_per_token"] > 0, t
    assert 0 < t["barriers_per_token"] < t["dispatches_per_token"], t  # independent dispatches share barriers
    ops = {o["op"] for o in t["breakdown"]["ops"]}
    assert "matmul" in ops and abs(sum(o["share"] for o in t["breakdown"]["ops"]) - 1) < 1e-6, t
assert vk["decode_replay"] is True and ref["decode_replay"] is False  # tg6: steps 2-5 replayed, checked below
tg = vk["tests"][2]
assert tg["replayed_dispatches"] > 0 and tg["recorded_dispatches_per_token"] < tg["dispatches_per_token"], tg
# Each decode step timed on the device (timestamps around it), and the gap to the next step (argmax, download, host).
assert tg["gpu_ms_per_token"] > 0 and tg["gpu_gap_ms_between_tokens"] > 0 and "gpu_time_method" in tg, tg
assert "gpu_ms_per_token" not in ref["tests"][2] and "gpu_ms_per_token" not in vk["tests"][0]
assert vk["resident"]["buffers"] > 0 and 1 <= vk["resident"]["blocks"] < vk["resident"]["buffers"]
assert vk["dispatch_floor_us"] > 0 and vk["model"]["per_token"]["decode_bytes_per_token"] > 0
assert "argmax (bench)" in {o["op"] for o in vk["tests"][2]["breakdown"]["ops"]}
g_vk, g_ref = vk["tests"][2]["greedy_tokens"], ref["tests"][2]["greedy_tokens"]
assert len(g_vk) == 7 and g_vk == g_ref, (g_vk, g_ref)
for a, b in zip(vk["tests"], vki["tests"]):  # prefill in issue order only in vki; decode reordered in both
    assert (a["barriers_per_token"] < b["barriers_per_token"]) if a["phase"] == "prefill" else \
        (a["barriers_per_token"] == b["barriers_per_token"]), (a["label"], a["barriers_per_token"], b["barriers_per_token"])
assert vki["tests"][2]["greedy_tokens"] == g_vk
assert vkd["tests"][2]["greedy_tokens"] == g_vk, (vkd["tests"][2]["greedy_tokens"], g_vk)
print(" ".join(map(str, g_vk)))
PY
# The oracle over the same tokens, one at a time through decode: row i's argmax must be token i + 1.
"$bin" run --model "$tiny" --tokens "$t/tokens.txt" --out "$t/oracle.safetensors" --decode-from 0 2>/dev/null
python3 - "$t/oracle.safetensors" "$t/tokens.txt" <<'PY'
import array, json, struct, sys
b = open(sys.argv[1], "rb").read()
n = struct.unpack_from("<Q", b)[0]
h = json.loads(b[8:8 + n])["logits"]
rows, vocab = h["shape"]
x = array.array("f", b[8 + n + h["data_offsets"][0]:8 + n + h["data_offsets"][1]])
tok = list(map(int, open(sys.argv[2]).read().split()))
arg = [max(range(vocab), key=lambda c: (x[r * vocab + c], -c)) for r in range(rows)]
assert arg[:-1] == tok[1:], (arg, tok)
PY
echo "bench report fields, throughputs and greedy tokens ok: $(cat "$t/tokens.txt")"
