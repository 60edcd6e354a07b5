#!/usr/bin/env python3
"""scripts/rdna4_projection.py: the projection arithmetic on the H200's ceilings and llama.cpp's numbers recorded in one
device call (b7d5d01's: KHR-only pp512 4242.9, tg128 180.8), its calibration against the published R9700 numbers, and
bad inputs.  usage: test_rdna4_projection.py ROOT"""
import sys

sys.path.insert(0, sys.argv[1] + "/scripts")
from rdna4_projection import PUBLISHED, R9700, calibration, project, section  # noqa: E402


def check(cond, what):
    if not cond:
        print(f"FAIL: {what}")
        sys.exit(1)


def near(a, b, tol=0.05):
    return abs(a - b) <= tol


H200 = {"read_GBps": 4406.36, "f16_TFLOPs": 638.51, "f32_TFLOPs": 54.95}
BYTES, FLOPS = 1.976e9, 5.89e9

# Decode: 1 / 180.8 s = 5.5310 ms; its bytes at 4406 GB/s 0.4485 ms; the rest 5.0826 ms carried over; on the R9700 the
# bytes take 1.976e9 / 640e9 = 3.0875 ms: 8.1701 ms, 122.40 tok/s.
tg = project("tg128", 180.8, BYTES, FLOPS, H200)
check(near(tg, 122.40), f"tg128 projection {tg}")
# Prefill: 1 / 4242.9 s = 235.69 us; flops at 638.5 TFLOP/s 9.22 us; the rest 226.47 us x 54.95 / 47.8 = 260.35 us; flops
# at 191 TFLOP/s 30.84 us: 291.19 us, 3434.2 tok/s.
pp = project("pp512", 4242.9, BYTES, FLOPS, H200)
check(near(pp, 3434.2, 0.5), f"pp512 projection {pp}")
# Faster on the measuring device, faster projected; a target like the measuring device projects the measurement.
check(project("tg128", 200.0, BYTES, FLOPS, H200) > tg, "monotone in the measurement")
same = dict(H200)
check(near(project("tg128", 180.8, BYTES, FLOPS, H200, target=same), 180.8, 1e-6), "identity target, decode")
check(near(project("pp512", 4242.9, BYTES, FLOPS, H200, target=same), 4242.9, 1e-6), "identity target, prefill")

cal = calibration({"pp512": 4242.9, "tg128": 180.8, "pp4096": 4000.0}, BYTES, FLOPS, H200)
check(set(cal) == {"pp512", "tg128"}, f"calibrated tests {sorted(cal)} (no published pp4096)")
check(near(cal["tg128"][2], 122.40 / 153.4 - 1, 1e-3) and cal["tg128"][1] == PUBLISHED["tg128"], f"tg128 error {cal['tg128']}")
check(near(cal["pp512"][2], 3434.2 / 3314.0 - 1, 1e-3), f"pp512 error {cal['pp512']}")

md = "\n".join(section({"pp512": 6230.3, "tg128": 174.5, "pp4096": 5000.0}, "KHR only", {"pp512": 4242.9, "tg128": 180.8},
                       BYTES, FLOPS, H200))
check("a projection, not a measurement" in md and R9700["name"] in md, "section header")
check("| tg128 | 180.8 | 122.4 | 153.4 | -20.2% |" in md, "calibration row:\n" + md)
# hybridlab tg128 174.5: 1 / 174.5 = 5.7307 ms, rest 5.2822, projected 1 / 8.3697 ms = 119.48; corrected by -20.21%: 149.7.
check("| tg128 | 174.5 | 119.5 | -20.2% | 149.7 |" in md, "hybridlab row:\n" + md)
check("not calibrated (no published pp4096)" in md, "uncalibrated test named")

for bad in [("tg128", 0.0), ("pp512", -1.0), ("xx7", 10.0)]:
    try:
        project(bad[0], bad[1], BYTES, FLOPS, H200)
        check(False, f"no error for {bad}")
    except ValueError:
        pass
print("ok")
