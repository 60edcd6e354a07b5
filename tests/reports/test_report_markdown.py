#!/usr/bin/env python3
"""scripts/report.py's markdown on a constructed report: a memory-bound row's roofline cell with its fraction of a plain
read of the same bytes, and the line that says what that is; none where no row has one. Where matplotlib is missing
(the GPU machine), the report is still written, without plots, with a line saying so.  usage: test_report_markdown.py ROOT"""
import glob
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, sys.argv[1] + "/scripts")
from report import markdown  # noqa: E402


def check(cond, what):
    if not cond:
        print(f"FAIL: {what}")
        sys.exit(1)


def report(extra):
    r = {"variant": "vulkan:fast", "status": "pass", "where": "GPU", "rel_l2": 1e-6, "GBps": 969.2, "TFLOPs": 3.4,
         "fraction_of_ceiling": 0.216, "bound": "memory",
         "time_us": {"median": 9.78, "min": 9.63, "max": 9.84, "p10": 9.7, "p90": 9.8, "runs": 20}}
    r.update(extra)
    return {"experiment": "matmul", "device": {"name": "Test GPU"}, "commit": "abc1234", "date": "2026-12-05", "ceilings": {"read_GBps": 4478.1, "copy_GBps": 3984.6,
            "f32_TFLOPs": 54.95}, "tolerances": {"matmul": 1e-5},
            "cases": [{"op": "matmul", "label": "qkv q4_K 2048->8192 n=1", "bytes": 9.478e6, "flops": 3.355e7,
                       "default_variant": "vulkan:fast", "results": [r]}]}


md = markdown(report({"same_size_read_us": 6.9, "of_same_size_read": 6.9 / 9.78}), [])
check("| 21.6% (71% of a read) |" in md, "the roofline cell gives the fraction of a same-size read:\n" + md)
check("*of a read*" in md and "chained on this device" in md, "the header says what a same-size read is")
md = markdown(report({}), [])
check("| 21.6% |" in md and "*of a read*" not in md, "no same-size read: the cell and the header as before:\n" + md)

with tempfile.TemporaryDirectory() as tmp:
    os.makedirs(f"{tmp}/block/matplotlib")
    with open(f"{tmp}/block/matplotlib/__init__.py", "w") as f:
        f.write("raise ImportError('blocked by the test')\n")
    with open(f"{tmp}/matmul.json", "w") as f:
        json.dump(report({}), f)
    env = dict(os.environ, PYTHONPATH=f"{tmp}/block")
    p = subprocess.run([sys.executable, sys.argv[1] + "/scripts/report.py", f"{tmp}/matmul.json"], env=env,
                       capture_output=True, text=True)
    check(p.returncode == 0, f"without matplotlib the report is still written (exit {p.returncode}):\n{p.stderr}")
    check("no matplotlib" in p.stderr and "Traceback" not in p.stderr, "one line says the plots are missing:\n" + p.stderr)
    md = open(f"{tmp}/matmul.md").read()
    check("| 21.6% |" in md and ".png" not in md and not glob.glob(f"{tmp}/*.png"), "the tables, no plots:\n" + md)
print("ok")
