#!/usr/bin/env python3
"""scripts/verdict.py on constructed cases and on a recorded H200 report: classes ranked apart, noisy timings never
ranked, margins over the runner-up, the default and the reference.  usage: test_verdict.py ROOT"""
import json
import sys

sys.path.insert(0, sys.argv[1] + "/scripts")
from verdict import noisy, peer_cell, verdict, verdict_line  # noqa: E402


def res(variant, med, where="GPU", status="pass", p10=None, p90=None, params=None):
    t = {"median": med, "min": med * 0.99, "max": med * 1.01, "p10": p10 if p10 else med * 0.99, "p90": p90 if p90 else med * 1.01}
    return {"variant": variant, "status": status, "where": where, "time_us": t, "params": params or {}}


def check(cond, what):
    if not cond:
        print(f"FAIL: {what}")
        sys.exit(1)


case = {"label": "x", "default_variant": "vulkan:auto", "results": [
    res("reference", 1000.0, where="CPU, 16 threads", status="reference"),
    res("halide:op:tuned", 400.0, where="CPU, 2 threads"),
    res("vulkan:auto", 12.0),
    res("vulkan:fast", 10.0, params={"op.fast.tile": 2}),
    res("vulkan:fast", 8.0, params={"op.fast.tile": 4}),
    res("vulkan:noisy", 2.0, p10=1.0, p90=9.0),   # fastest median, but 400% spread: named, never ranked
    res("vulkan:broken", 1.0, status="fail"),       # failed its numerics: not timed in a verdict
    res("halide-vulkan:op:gpu_tuned", 30.0, where="GPU (Halide's Vulkan runtime)"),
]}
v = verdict(case)
g, c = v["GPU"], v["CPU"]
check(g["best"]["variant"] == "vulkan:fast" and g["best"]["time_us"]["median"] == 8.0, "GPU best: the fastest quiet config")
check(g["runner_up"]["variant"] == "vulkan:auto" and abs(g["vs_runner_up"] - 1.5) < 1e-9, "runner-up margin 12/8")
check(abs(g["vs_default"] - 1.5) < 1e-9, "margin over the default")
check(abs(g["vs_reference"] - 125.0) < 1e-9, "margin over the reference 1000/8")
check(g["noisy"] == ["vulkan:noisy"], "noisy variant named, not ranked")
check(c["best"]["variant"] == "halide:op:tuned" and abs(c["vs_reference"] - 2.5) < 1e-9, "CPU ranked apart")
check(c["runner_up"]["variant"] == "reference", "the reference is the CPU runner-up")
line = verdict_line(case)
check("`vulkan:fast` (tile=4) 8.00 us, 1.50x the runner-up `vulkan:auto`" in line, f"line: {line}")
check("CPU: `halide:op:tuned` 400.00 us" in line and "Noisy" in line and "`vulkan:noisy`" in line, f"line: {line}")
check("vulkan:broken" not in line, "a failing variant is not in the verdict")

# The default winning; a noisy reference gives no reference margin; old reports (min/max only) fall back to that spread.
case2 = {"label": "y", "default_variant": "vulkan:auto", "results": [
    res("reference", 5000.0, where="CPU", status="reference", p10=4950.0, p90=21160.0),
    res("vulkan:auto", 3.0), res("vulkan:other", 6.0)]}
v2 = verdict(case2)["GPU"]
check(v2["vs_default"] is None and v2["vs_reference"] is None, "no claim from a noisy reference")
check("(the default)" in verdict_line(case2), "the default marked when it wins")
# A swept point of the default variant winning: not "the default", compared with the default's own tuning.
case2s = dict(case2, results=case2["results"] + [dict(res("vulkan:auto", 2.0), params={"op.auto.rows": 4})])
check(verdict(case2s)["GPU"]["vs_default"] == 1.5, "the default at the profile's tuning against its swept best")
line2s = verdict_line(case2s)
check("`vulkan:auto` (rows=4) 2.00 us" in line2s and "(the default)" not in line2s
      and "1.50x the default `vulkan:auto` at the profile's tuning" in line2s, f"line: {line2s}")
# Peers: the best GPU variant against each row measured in the same run; quoted constants are never compared.
case3 = dict(case2, peers=[{"name": "llama.cpp Vulkan X", "time_us": 6.0, "measured": True},
                           {"name": "quoted Y", "time_us": 1.0, "measured": False}])
v3 = verdict(case3)["GPU"]
check([(p["name"], r) for p, r in v3["vs_peers"]] == [("llama.cpp Vulkan X", 2.0)], "measured peers only, time ratio")
check("2.00x llama.cpp Vulkan X (6.00 us, same run)" in verdict_line(case3) and "quoted Y" not in verdict_line(case3),
      "the peer margin in the verdict line")
case3k = dict(case3, peers=case3["peers"] + [{"name": "llama.cpp Vulkan KHR-only X", "time_us": 3.0, "measured": True},
                                             {"name": "llama.cpp Vulkan X", "time_us": 9.0, "measured": True,
                                              "source": "test-backend-ops perf"}])
check(peer_cell(verdict(case3k)) == "6.0 (2.00x), KHR 3.0 (1.00x), alone 9.0 (3.00x)", peer_cell(verdict(case3k)))
case5 = dict(case2, peers=[{"name": "llama.cpp Vulkan Z", "time_us": 6.0, "measured": True, "range_us": [5.0, 9.0]},
                           {"name": "llama.cpp Vulkan W", "time_us": 6.0, "measured": True, "range_us": [5.9, 6.5]}])
v5 = verdict(case5)["GPU"]
check([p["name"] for p, _ in v5["vs_peers"]] == ["llama.cpp Vulkan W"], "a noisy peer is not compared")
check("llama.cpp Vulkan Z noisy (5.0..9.0 us), not compared" in verdict_line(case5), "the noisy peer named")
case4 = dict(case2, default_variant="vulkan:other", default_family_variant="vulkan:auto")
check("2.00x the default `vulkan:other` (what `vulkan:auto` runs here)" in verdict_line(case4), "the delegated default named")
old = {"variant": "a", "status": "pass", "where": "GPU", "time_us": {"median": 10.0, "min": 9.0, "max": 14.0}}
check(noisy(old) and not noisy(dict(old, time_us={"median": 10.0, "min": 9.0, "max": 11.0})), "min/max spread fallback")

# A recorded report: every case gets a GPU verdict naming a variant that ran there.
rep = json.load(open(sys.argv[1] + "/reports/nvidia-h200/matmul-prefill.json"))
for cs in rep["cases"]:
    vv = verdict(cs)
    check(vv["GPU"]["best"]["where"].startswith("GPU"), f"{cs['label']}: GPU best on the GPU")
print("verdict: ok")
