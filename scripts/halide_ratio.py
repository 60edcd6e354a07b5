#!/usr/bin/env python3
"""Halide beside the hand-written kernels, from experiment reports of one device: per case, the fastest passing
halide-vulkan schedule against the fastest passing hand-written Vulkan variant (ratio = Halide / hand-written time),
and per op the median and range of those ratios.  Rows whose Halide schedules all failed their numerics say so.

usage: halide_ratio.py REPORT.json [REPORT.json ...] [--out FILE.md]"""
import argparse
import json
import statistics


def median_us(r):
    t = r.get("time_us")
    return t.get("median") if isinstance(t, dict) else None


def fastest(results, prefix):
    ok = [r for r in results if r["variant"].startswith(prefix) and r.get("status") == "pass" and median_us(r)]
    return min(ok, key=median_us) if ok else None


def rows(report):
    """(op, label, halide result or None, hand-written result or None, failed halide variants) per case with Halide."""
    out = []
    for c in report.get("cases", []):
        res = c.get("results", [])
        halide = [r for r in res if r["variant"].startswith("halide-vulkan:")]
        if not halide:
            continue
        failed = [r["variant"] for r in halide if r.get("status") not in ("pass",)]
        out.append((c.get("op", ""), c["label"], fastest(res, "halide-vulkan:"), fastest(res, "vulkan:"), failed))
    return out


def table(reports):
    lines = ["| experiment | op | case | fastest Halide schedule | us | fastest hand-written | us | Halide / hand-written |",
             "|---|---|---|---|---|---|---|---|"]
    per_op = {}
    for name, rep in reports:
        for op, label, h, v, failed in rows(rep):
            ratio = median_us(h) / median_us(v) if h and v else None
            if ratio:
                per_op.setdefault(op, []).append(ratio)
            hc = f"`{h['variant'].split(':')[-1]}`" if h else "none passed"
            lines.append(f"| {name} | {op} | {label} | {hc}{' (failed: ' + ', '.join(failed) + ')' if failed else ''} | "
                         f"{median_us(h):.1f} | `{v['variant'] if v else '-'}` | {median_us(v):.1f} | "
                         f"{ratio:.2f} |" if h and v else
                         f"| {name} | {op} | {label} | {hc} | - | `{v['variant'] if v else '-'}` | - | - |")
    summary = ["| op | cases | Halide / hand-written, median | min .. max |", "|---|---|---|---|"]
    for op, rs in sorted(per_op.items()):
        summary.append(f"| {op} | {len(rs)} | {statistics.median(rs):.2f} | {min(rs):.2f} .. {max(rs):.2f} |")
    return summary, lines, per_op


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("reports", nargs="+")
    ap.add_argument("--out")
    a = ap.parse_args()
    reps = []
    for f in a.reports:
        with open(f) as fh:
            r = json.load(fh)
        reps.append((r.get("experiment", f), r))
    summary, lines, _ = table(reps)
    text = "\n".join(summary) + "\n\n" + "\n".join(lines) + "\n"
    if a.out:
        with open(a.out, "w") as fh:
            fh.write(text)
    else:
        print(text, end="")


if __name__ == "__main__":
    main()
