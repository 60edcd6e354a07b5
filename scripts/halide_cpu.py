#!/usr/bin/env python3
"""Issue 24's CPU table from experiment reports run with --family halide on one host: per case, the Eigen reference
against the op's tuned Halide schedule (halide:<op>:tuned), their ratio, whether it reaches 2x, and whether 2x is
physically possible there: the optimistic floor is the larger of the case's bytes at the host's cache read rate and its
flops at the host's f32 FMA rate (the report's cpu_ceilings at its thread count); half the reference's time must stay
above it. A DRAM floor (bytes at the memory read rate) is shown beside it: inputs rotated past the caches meet that one.

usage: halide_cpu.py REPORT.json [REPORT.json ...] [--ops matmul,attention,...] [--out FILE.md]"""
import argparse
import json


def median(r):
    t = r.get("time_us")
    return t.get("median") if isinstance(t, dict) else None


def spread(r):
    t = r.get("time_us") or {}
    return f"{t.get('p10', 0):.1f}..{t.get('p90', 0):.1f}" if t.get("p10") is not None else ""


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("reports", nargs="+")
    ap.add_argument("--ops", default="")
    ap.add_argument("--out")
    a = ap.parse_args()
    ops = set(filter(None, a.ops.split(",")))
    head = ("| op | case | Eigen reference us (p10..p90) | tuned Halide us (p10..p90) | reference / Halide | 2x | "
            "optimistic floor us | DRAM floor us | 2x physically possible |")
    lines = [head, "|" + "---|" * head.count(" | ") + "---|"]
    met = possible = total = 0
    hosts = set()
    for path in a.reports:
        rep = json.load(open(path))
        cc = (rep.get("cpu_ceilings") or [{}])[0]
        host = rep.get("host", {})
        host = host.get("cpu") or host.get("name") or f"{host.get('hardware_threads', '?')} hardware threads" if isinstance(host, dict) else host
        hosts.add(f"{host}: read {cc.get('read_GBps', 0):.1f} GB/s, cache read "
                  f"{cc.get('cache_read_GBps', 0):.1f} GB/s, f32 FMA {cc.get('f32_GFLOPs', 0):.1f} GFLOP/s at "
                  f"{cc.get('threads', '?')} threads; commit {rep.get('commit', '?')}; {rep.get('experiment', '?')}")
        for c in rep.get("cases", []):
            op = c.get("op", "")
            if ops and op not in ops:
                continue
            res = {r["variant"]: r for r in c.get("results", [])}
            ref, hal = res.get("reference"), res.get(f"halide:{op}:tuned")
            if not ref or not hal or median(ref) is None or median(hal) is None or hal.get("status") != "pass":
                continue
            rt, ht = median(ref), median(hal)
            b, f = c.get("bytes", 0.0), c.get("flops", 0.0)
            floor = max(b / (cc.get("cache_read_GBps", 1) * 1e3), f / (cc.get("f32_GFLOPs", 1) * 1e3))
            dram = b / (cc.get("read_GBps", 1) * 1e3)
            ok, can = rt / ht >= 2, rt / 2 >= floor
            total += 1
            met += ok
            possible += can
            lines.append(f"| {op} | {c['label']} | {rt:.1f} ({spread(ref)}) | {ht:.1f} ({spread(hal)}) | {rt / ht:.2f} | "
                         f"{'met' if ok else 'not met'} | {floor:.1f} | {dram:.1f} | {'yes' if can else 'no'} |")
    out = ["Per report: " + "; ".join(sorted(hosts)), "", *lines, "",
           f"{met} of {total} cases at 2x or more; in {total - possible} of {total} half the reference's time is below the "
           "optimistic floor."]
    text = "\n".join(out) + "\n"
    if a.out:
        open(a.out, "w").write(text)
    print(text, end="")


if __name__ == "__main__":
    main()
