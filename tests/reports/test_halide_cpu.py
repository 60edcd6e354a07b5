#!/usr/bin/env python3
"""scripts/halide_cpu.py on constructed reports: the ratio of the reference to the tuned Halide schedule, 2x met or not,
the floors from the report's CPU ceilings, cases without a passing tuned schedule left out, the op filter.
usage: test_halide_cpu.py ROOT"""
import sys

sys.path.insert(0, sys.argv[1] + "/scripts")
from halide_cpu import rounds_table, rows, table  # noqa: E402


def res(variant, med, status="pass"):
    return {"variant": variant, "status": status, "time_us": {"median": med, "p10": med * 0.9, "p90": med * 1.1}}


def check(cond, what):
    if not cond:
        print(f"FAIL: {what}")
        sys.exit(1)


# Ceilings: 100 GB/s from cache, 10 GB/s from memory, 200 GFLOP/s: 1e6 bytes -> 10 us (cache), 100 us (DRAM); 4e6 flops -> 20 us.
rep = {"cpu_ceilings": [{"cache_read_GBps": 100.0, "read_GBps": 10.0, "f32_GFLOPs": 200.0, "threads": 2}], "cases": [
    {"op": "matmul", "label": "fast", "bytes": 1e6, "flops": 4e6, "results": [
        res("reference", 100.0, "reference"), res("halide:matmul:plain", 10.0), res("halide:matmul:tuned", 40.0)]},
    {"op": "matmul", "label": "near the floor", "bytes": 1e6, "flops": 4e6, "results": [
        res("reference", 30.0, "reference"), res("halide:matmul:tuned", 25.0)]},
    {"op": "matmul", "label": "tuned failed", "bytes": 1e6, "flops": 0, "results": [
        res("reference", 30.0, "reference"), res("halide:matmul:tuned", 1.0, "fail")]},
    {"op": "attention", "label": "other op", "bytes": 0, "flops": 0, "results": [
        res("reference", 30.0, "reference"), res("halide:attention:tuned", 10.0)]},
]}
r = {x[1]: x for x in rows([rep], {"matmul"})}
check(set(r) == {"fast", "near the floor"}, f"a failed tuned schedule and other ops left out: {sorted(r)}")
check(abs(r["fast"][4] - 2.5) < 1e-9 and r["fast"][5], "ratio from the tuned schedule (not plain), 2x met")
check(abs(r["fast"][6] - 20.0) < 1e-9 and abs(r["fast"][7] - 100.0) < 1e-9, f"floors: {r['fast'][6:8]}")
check(r["fast"][8] and not r["near the floor"][8], "2x possible only where half the reference stays above the floor")
check(not r["near the floor"][5], "1.2x is not 2x")
lines, met, impossible, n = table([rep])
check((met, impossible, n) == (2, 1, 3), f"counts over every op: {(met, impossible, n)}")
check(any(l.startswith("| matmul | fast | 100.0 (90.0..110.0) | 40.0 (36.0..44.0) | 2.50 | met | 20.0 | 100.0 | yes |")
          for l in lines), f"row format: {lines}")
# Rounds: "fast" at 2x in both, "near the floor" in neither; a case missing from one round is left out.
import copy  # noqa: E402
rep2 = copy.deepcopy(rep)
rep2["cases"][0]["results"][2]["time_us"]["median"] = 45.0
rep2["cases"][3]["results"][1]["time_us"]["median"] = 20.0  # attention: 1.5x in round 2
del rep2["cases"][1]
lines, met, total = rounds_table([[rep], [rep2]])
check((met, total) == (1, 2), f"rounds: met in every round and cases in every round: {(met, total)}")
check(any(l.startswith("| matmul | fast | 100.0 / 40.0 | 100.0 / 45.0 | 2.50, 2.22 | met |") for l in lines),
      f"rounds row format: {lines}")
check(any(l.startswith("| attention | other op | 30.0 / 10.0 | 30.0 / 20.0 | 3.00, 1.50 | not met |") for l in lines),
      f"a case at 2x in one round only: {lines}")
print("ok")
