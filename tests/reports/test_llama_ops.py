#!/usr/bin/env python3
"""scripts/llama_ops.py on llama.cpp 0c1e570's logs recorded on the H200 (tests/reports/data/llama-0c1e570-h200/: its
pp512 and decode (ctx 512) graphs under GGML_VK_PERF_LOGGER, test-backend-ops perf on the lines `cases` writes, cut
short by its time limit): the peer rows, their arithmetic, and bad inputs.  usage: test_llama_ops.py ROOT"""
import json
import os
import statistics
import subprocess
import sys
import tempfile

root = sys.argv[1]
script = os.path.join(root, "scripts", "llama_ops.py")
data = os.path.join(root, "tests", "reports", "data", "llama-0c1e570-h200")
tmp = tempfile.mkdtemp()


def run(*args):
    return subprocess.run([sys.executable, script, *args], capture_output=True, text=True)


def peers(*args):
    out = os.path.join(tmp, "peers.json")
    r = run("peers", "--device", "nvidia-h200", "--version", "0c1e570", *args, "--out", out)
    assert r.returncode == 0, r.stderr
    j = json.load(open(out))
    assert j["measured"] is True and "nvidia-h200" in j["about"]
    return j["peers"]


def one(rows, where, op, case, khr=False):
    """The row of this op and case whose source says where (pp512 graph, decode, test-backend-ops)."""
    hits = [r for r in rows if where in r["source"] and r["op"] == op and r["case"] == case
            and ("KHR-only" in r["name"]) == khr]
    assert len(hits) == 1, (where, op, case, hits)
    return hits[0]["time_us"]


def near(a, b, rel=1e-3):
    return abs(a - b) <= rel * abs(b)


# The test-backend-ops lines: one per quantized projection case and three (gate, up, down) per routed-experts case,
# each naming its case; q4_K rows 144 bytes per 256 values.
cases = os.path.join(tmp, "cases.txt")
assert run("cases", cases).returncode == 0
lines = open(cases).read().split("\n")[:-1]
assert len(lines) == 7 * 5 + 4 * 3, len(lines)
first = lines[0].split()
assert first[0] == "29" and first[-1] == "matmul/matmul/qkv~q4_K~2048->8192~n=1", first
assert first[2:6] == ["8192", "1", "1", "1"] and first[23] == "2" and first[24:33] == ["12", "2048", "8192", "1", "1", "144", "1152", "9437184", "9437184"]
moe = [x for x in lines if "/moe_experts/q4_K~T=512/" in x]
assert [x.split()[-1].rsplit("/", 1)[1] for x in moe] == ["gate", "up", "down"] and all(x.startswith("30 ") for x in moe)

# The graphs: per-layer ops summed over the router's calls (one per layer), single calls as their mean per call.
p = peers("--prefill", f"512={data}/llama-perf-pp512.log", "--prefill", f"512:KHR-only={data}/llama-perf-pp512.log",
          "--decode", f"512={data}/llama-perf-decode512.log", "--tbo", f"{data}/llama-tbo.log")
# pp512: MUL_MAT_ID 10328.3 + 41556.6 + 13183.6 us over 40 router calls.
g = "pp512 graph"
assert near(one(p, g, "moe_experts", "q4_K T=512"), (10328.3 + 41556.6 + 13183.6) / 40)
assert near(one(p, g, "ssm_scan", "T=512"), 529.884)
assert near(one(p, g, "attention", "prefill T=512"), 151.337)
assert near(one(p, g, "matmul", "qkv q4_K 2048->8192 n=512"), 150.502)
assert near(one(p, g, "matmul", "qkv q4_K 2048->8192 n=512", khr=True), 150.502)  # the same log under a second name
assert near(one(p, g, "rmsnorm", "T=512"), 11.588)
assert near(one(p, g, "matmul", "gates q4_K 2048->32 n=512"), 14.523)  # the linear-attention gates
# The prompt graph's one lm_head row (its last token) is not a decode case.
assert not [r for r in p if g in r["source"] and r["case"].endswith("n=1")]
# Decode: the median over the decoded tokens (blocks 3-6 of the log; block 1, the cold warm-up token, left out; block
# 2 is the 512-token context); plain and fused (MUL_MAT_ADD) mat-vecs of one shape pooled.
d = "decode (ctx 512)"
assert near(one(p, d, "moe_experts", "q4_K T=1"), statistics.median(
    [(217.856 + 226.496 + 796.352) / 40, (217.92 + 228.416 + 860.48) / 40, (214.208 + 227.712 + 791.168) / 40,
     (216.992 + 226.656 + 791.168) / 40]))
assert near(one(p, d, "attention", "decode ctx=512"), statistics.median([13.526, 13.478, 13.478, 13.468]))
assert near(one(p, d, "matmul", "out q4_K 4096->2048 n=1"), statistics.median(
    [(96.384 + 323.808) / 40, (254.784 + 280.288) / 40, (257.536 + 276.512) / 40, (199.136 + 278.016) / 40]))
assert near(one(p, d, "lm_head", "lm_head q6_K 2048->248320 n=1"), statistics.median([182.816, 180.544, 180.48, 180.256]))
row = next(r for r in p if d in r["source"] and r["op"] == "lm_head")
assert row["evaluations"] == 4 and row["range_us"] == [180.256, 182.816], row
# test-backend-ops: the mean us/run of each case, the routed experts only where gate, up and down all ran.
t = "test-backend-ops"
assert near(one(p, t, "matmul", "expert q4_K 2048->512 n=512"), 15.12)
assert near(one(p, t, "moe_experts", "q4_K T=8"), 47.67 + 45.44 + 75.96)
assert not [r for r in p if t in r["source"] and r["case"] == "q4_K T=512"]  # cut short after gate

# Bad inputs: one line, non-zero exit.
for args, why in ((["--prefill", "x=y"], "N[:ENGINE]=LOG"), (["--prefill", f"512={data}/none.log"], "No such file"),
                  (["--prefill", f"64={data}/llama-perf-pp512.log"], "no GGML_VK_PERF_LOGGER block"),
                  (["--decode", f"512={data}/llama-tbo.log"], "no GGML_VK_PERF_LOGGER block")):
    r = run("peers", "--device", "d", "--version", "v", *args, "--out", os.path.join(tmp, "x.json"))
    assert r.returncode != 0 and why in r.stderr and len(r.stderr.strip().splitlines()) == 1, (args, r.stderr)
r = run("peers", "--device", "d", "--version", "v", "--tbo", os.devnull, "--out", os.path.join(tmp, "x.json"))
assert r.returncode != 0 and "no llama.cpp op times" in r.stderr, r.stderr
print("llama_ops.py: ok")
