#!/usr/bin/env python3
"""scripts/halide_ratio.py on constructed cases: the fastest passing schedule of each side, failed ones named and
never used, cases without Halide skipped, per-op medians.  usage: test_halide_ratio.py ROOT"""
import sys

sys.path.insert(0, sys.argv[1] + "/scripts")
from halide_ratio import table  # noqa: E402


def res(variant, med, status="pass"):
    return {"variant": variant, "status": status, "time_us": {"median": med}}


def check(cond, what):
    if not cond:
        print(f"FAIL: {what}")
        sys.exit(1)


rep = {"cases": [
    {"op": "rmsnorm", "label": "T=1", "results": [
        res("reference", 50.0, "reference"), res("vulkan:rowgroup", 8.0), res("vulkan:slow", 20.0),
        res("halide-vulkan:rmsnorm:gpu_plain", 96.0), res("halide-vulkan:rmsnorm:gpu_tuned", 40.0),
        res("halide-vulkan:rmsnorm:gpu_fast", 1.0, "fail")]},
    {"op": "rmsnorm", "label": "T=512", "results": [res("vulkan:rowgroup", 10.0), res("halide-vulkan:rmsnorm:gpu_tuned", 20.0)]},
    {"op": "add", "label": "no Halide", "results": [res("vulkan:elementwise", 5.0)]},
    {"op": "l2norm", "label": "all failed", "results": [res("vulkan:rowgroup", 5.0), res("halide-vulkan:l2norm:gpu_tuned", 9.0, "fail")]},
]}
summary, lines, per_op = table([("norms", rep)])
check(per_op["rmsnorm"] == [5.0, 2.0], f"ratios against the fastest of each side, failed never used: {per_op}")
check("add" not in per_op and not any("no Halide" in l for l in lines), "a case without Halide is skipped")
check(any("all failed" in l and "none passed" in l for l in lines), "a case whose Halide schedules all failed says so")
check(any("T=1" in l and "failed: halide-vulkan:rmsnorm:gpu_fast" in l for l in lines), "failed schedules are named")
check(any(l.startswith("| rmsnorm | 2 | 3.50 | 2.00 .. 5.00 |") for l in summary), f"per-op median and range: {summary}")
print("ok")
