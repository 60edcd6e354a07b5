#!/usr/bin/env python3
"""An RDNA4 (Radeon AI PRO R9700) projection of whole-model throughput measured on another GPU, with its calibration
error: the same model applied to llama.cpp's numbers measured in the same device call, compared with llama.cpp's
published R9700 numbers. A projection, not a measurement: no RDNA4 card exists here.

The model, per token of a test:
  decode (tgN):  t = bytes / BW + latency, with latency = t_measured - bytes / BW_measured_device, the part of a
                 token's time its weight bytes at the read ceiling do not explain (dispatches, barriers, kernels
                 short of the ceiling), carried over scaled by LATENCY_RATIO (the R9700's dependent-dispatch cost
                 over the measuring device's; 1: no R9700 measurement of it exists here).
  prefill (ppN): t = flops / F16 + rest, with rest = t_measured - flops / F16_measured_device, the part the
                 projections' flops at the matrix peak do not explain, carried over scaled by the f32 FMA peaks'
                 ratio (the non-matrix work, on the vector units).
Calibration: the model projects llama.cpp's Vulkan KHR-only path (the one RDNA4 has) from the measuring device to the
R9700; error = projected / published - 1 per test. A hybridlab projection is printed with that error and also
corrected by it (projected / (1 + error)), both labelled projections.

  rdna4_projection.py --bench BENCH.json --bandwidth BANDWIDTH.json --peer LLAMA_KHR.json|.log   (prints the table)
"""
import argparse
import json

# Radeon AI PRO R9700 (RDNA4, gfx1201): ../shared/ANCHORS.md, "Hardware".
R9700 = {"name": "Radeon AI PRO R9700 (RDNA4)", "read_GBps": 640.0, "f16_TFLOPs": 191.0, "f32_TFLOPs": 47.8}
LATENCY_RATIO = 1.0
# llama.cpp Vulkan (RADV) on the R9700, Qwen3.5-35B-A3B (this model's architecture and size), llama.cpp discussion
# #21043, as ../shared/ANCHORS.md quotes it.
PUBLISHED = {"pp512": 3314.0, "tg128": 153.4}
PUBLISHED_SOURCE = "llama.cpp Vulkan (RADV) on the R9700, Qwen3.5-35B-A3B, llama.cpp discussion #21043 (../shared/ANCHORS.md)"


def project(test, tok_s, bytes_tok, flops_tok, dev, target=R9700, latency_ratio=LATENCY_RATIO):
    """tok/s on `target` for a test measured at tok_s on a device with ceilings dev = {read_GBps, f16_TFLOPs,
    f32_TFLOPs}."""
    if tok_s <= 0:
        raise ValueError(f"{test}: tok/s must be positive, got {tok_s}")
    t = 1.0 / tok_s
    if test.startswith("tg"):
        latency = max(0.0, t - bytes_tok / (dev["read_GBps"] * 1e9))
        return 1.0 / (bytes_tok / (target["read_GBps"] * 1e9) + latency_ratio * latency)
    if test.startswith("pp"):
        rest = max(0.0, t - flops_tok / (dev["f16_TFLOPs"] * 1e12))
        return 1.0 / (flops_tok / (target["f16_TFLOPs"] * 1e12) + rest * dev["f32_TFLOPs"] / target["f32_TFLOPs"])
    raise ValueError(f"unknown test '{test}' (ppN or tgN)")


def calibration(peer_tok_s, bytes_tok, flops_tok, dev):
    """{test: (projected, published, error)} for the tests both llama.cpp's measured run and PUBLISHED have."""
    out = {}
    for test, tok_s in peer_tok_s.items():
        if test in PUBLISHED:
            p = project(test, tok_s, bytes_tok, flops_tok, dev)
            out[test] = (p, PUBLISHED[test], p / PUBLISHED[test] - 1.0)
    return out


def section(hybridlab_tok_s, peer_label, peer_tok_s, bytes_tok, flops_tok, dev):
    """The report's markdown lines: the model, the calibration table, hybridlab's projections."""
    cal = calibration(peer_tok_s, bytes_tok, flops_tok, dev)
    L = ["## RDNA4 projection (a projection, not a measurement)\n",
         f"Target: {R9700['name']}, {R9700['read_GBps']:.0f} GB/s, {R9700['f16_TFLOPs']:.0f} TFLOP/s f16 matrix, "
         f"{R9700['f32_TFLOPs']:.1f} TFLOP/s f32. Model (scripts/rdna4_projection.py): a decode token's weight bytes at the "
         "target's bandwidth plus the rest of its measured time (what the bytes at this device's read ceiling do not "
         f"explain: dispatches, barriers, kernels short of the ceiling) times {LATENCY_RATIO:g} (the target's dispatch latency "
         "relative to this device's, unmeasured); a prompt token's projection flops at the target's matrix peak plus the "
         "rest of its measured time scaled by the f32 peaks' ratio.\n",
         f"Calibration: the same model on {peer_label} measured in this call, against {PUBLISHED_SOURCE}.\n",
         "| test | llama.cpp here, tok/s | projected to the R9700 | published on the R9700 | calibration error |",
         "|---|---|---|---|---|"]
    for test, (p, pub, err) in cal.items():
        L.append(f"| {test} | {peer_tok_s[test]:.1f} | {p:.1f} | {pub:.1f} | {100 * err:+.1f}% |")
    L += ["", "| test | hybridlab here, tok/s | projected to the R9700 (model) | calibration error of the model | "
              "projected, corrected by that error |", "|---|---|---|---|---|"]
    for test, tok_s in hybridlab_tok_s.items():
        p = project(test, tok_s, bytes_tok, flops_tok, dev)
        if test in cal:
            err = cal[test][2]
            L.append(f"| {test} | {tok_s:.1f} | {p:.1f} | {100 * err:+.1f}% | {p / (1 + err):.1f} |")
        else:
            L.append(f"| {test} | {tok_s:.1f} | {p:.1f} | not calibrated (no published {test}) | - |")
    L.append("")
    return L


def main():
    import end_to_end_report as e2e  # llama-bench parsing, beside this file
    ap = argparse.ArgumentParser()
    ap.add_argument("--bench", required=True)
    ap.add_argument("--bandwidth", required=True)
    ap.add_argument("--peer", required=True, help="llama-bench JSON (or its log) of llama.cpp's KHR-only Vulkan path")
    a = ap.parse_args()
    b = json.load(open(a.bench))
    dev = e2e.ceilings(a.bandwidth)
    cost = b["model"]["per_token"]
    rows = e2e.llama_bench_rows(a.peer)
    print("\n".join(section({t["label"]: t["tok_per_s"]["median"] for t in b["tests"]}, a.peer,
                            {k: r["avg_ts"] for k, r in rows.items()}, cost["decode_bytes_per_token"],
                            cost["matmul_flops_per_token"], dev)))


if __name__ == "__main__":
    main()
