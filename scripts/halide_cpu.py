#!/usr/bin/env python3
"""Issue 24's CPU table from experiment reports run with --family halide on one host: per case, the Eigen reference
against the op's tuned Halide schedule (halide:<op>:tuned), their ratio, whether it reaches 2x, and whether 2x is
physically possible there: the optimistic floor is the larger of the case's bytes at the host's cache read rate and its
flops at the host's f32 FMA rate (the report's cpu_ceilings at its thread count); half the reference's time must stay
above it. A DRAM floor (bytes at the memory read rate) is shown beside it: inputs rotated past the caches meet that one.
Cases where either side has no passing timing are left out.

With --rounds, the arguments are directories, each one round of the same experiments (its *.json reports): per case the
ratio in every round, and the cases at 2x in every round (timings on a shared machine move between runs).

usage: halide_cpu.py REPORT.json [REPORT.json ...] [--ops matmul,attention,...] [--out FILE.md]
       halide_cpu.py --rounds DIR [DIR ...] [--ops ...] [--out FILE.md]"""
import argparse
import glob
import json
import os


def median(r):
    t = r.get("time_us")
    return t.get("median") if isinstance(t, dict) else None


def spread(r):
    t = r.get("time_us") or {}
    return f" ({t['p10']:.1f}..{t['p90']:.1f})" if t.get("p10") is not None and t.get("p90") is not None else ""


def host_line(rep):
    host = rep.get("host", {})
    if isinstance(host, dict):
        host = host.get("cpu") or host.get("name") or f"{host.get('hardware_threads', '?')} hardware threads"
    cc = (rep.get("cpu_ceilings") or [{}])[0]
    return (f"{rep.get('experiment', '?')}: {host}, read {cc.get('read_GBps', 0):.1f} GB/s, cache read "
            f"{cc.get('cache_read_GBps', 0):.1f} GB/s, f32 FMA {cc.get('f32_GFLOPs', 0):.1f} GFLOP/s at "
            f"{cc.get('threads', '?')} threads, commit {rep.get('commit', '?')}")


def rows(reports, ops=()):
    """(op, label, reference us, Halide us, ratio, met, optimistic floor us, DRAM floor us, possible, ref, halide)."""
    out = []
    for rep in reports:
        cc = (rep.get("cpu_ceilings") or [{}])[0]
        cache, fma, dram = cc.get("cache_read_GBps"), cc.get("f32_GFLOPs"), cc.get("read_GBps")
        for c in rep.get("cases", []):
            op = c.get("op", "")
            if ops and op not in ops:
                continue
            res = {r["variant"]: r for r in c.get("results", [])}
            ref, hal = res.get("reference"), res.get(f"halide:{op}:tuned")
            if not ref or not hal or hal.get("status") != "pass" or not median(ref) or not median(hal):
                continue
            rt, ht = median(ref), median(hal)
            b, f = c.get("bytes", 0.0), c.get("flops", 0.0)
            floor = max(b / (cache * 1e3) if cache else 0.0, f / (fma * 1e3) if fma else 0.0)
            dfloor = b / (dram * 1e3) if dram else 0.0
            out.append((op, c["label"], rt, ht, rt / ht, rt / ht >= 2, floor, dfloor, rt / 2 >= floor, ref, hal))
    return out


def table(reports, ops=()):
    head = ("| op | case | Eigen reference us (p10..p90) | tuned Halide us (p10..p90) | reference / Halide | 2x | "
            "optimistic floor us | DRAM floor us | 2x physically possible |")
    lines = [head, "|" + "---|" * (head.count("|") - 1)]
    rs = rows(reports, ops)
    for op, label, rt, ht, ratio, met, floor, dfloor, can, ref, hal in rs:
        lines.append(f"| {op} | {label} | {rt:.1f}{spread(ref)} | {ht:.1f}{spread(hal)} | {ratio:.2f} | "
                     f"{'met' if met else 'not met'} | {floor:.1f} | {dfloor:.1f} | {'yes' if can else 'no'} |")
    met = sum(r[5] for r in rs)
    impossible = sum(not r[8] for r in rs)
    lines += ["", f"{met} of {len(rs)} cases at 2x or more; in {impossible} of {len(rs)} half the reference's time is "
              "below the optimistic floor."]
    return lines, met, impossible, len(rs)


def rounds_table(rounds, ops=()):
    """rounds: one list of reports per round. Per (op, case) in the first round's order: each round's reference and
    Halide medians and ratio; met where every round reaches 2x."""
    per = [{(r[0], r[1]): r for r in rows(reps, ops)} for reps in rounds]
    n = len(rounds)
    head = ("| op | case | " + " | ".join(f"round {i + 1}: reference / Halide us" for i in range(n)) +
            " | ratios | 2x in every round |")
    lines = [head, "|" + "---|" * (head.count("|") - 1)]
    met = total = 0
    for key in per[0]:
        if not all(key in p for p in per):
            continue
        rs = [p[key] for p in per]
        every = all(r[5] for r in rs)
        met += every
        total += 1
        lines.append(f"| {key[0]} | {key[1]} | " + " | ".join(f"{r[2]:.1f} / {r[3]:.1f}" for r in rs) + " | " +
                     ", ".join(f"{r[4]:.2f}" for r in rs) + f" | {'met' if every else 'not met'} |")
    lines += ["", f"{met} of {total} cases at 2x or more in every one of {n} rounds."]
    return lines, met, total


def load_dir(d):
    return [json.load(open(p)) for p in sorted(glob.glob(os.path.join(d, "**", "*.json"), recursive=True))
            if json.load(open(p)).get("cases") is not None and os.path.basename(p) != "bandwidth.json"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("reports", nargs="+")
    ap.add_argument("--ops", default="")
    ap.add_argument("--out")
    ap.add_argument("--rounds", action="store_true")
    a = ap.parse_args()
    ops = set(filter(None, a.ops.split(",")))
    if a.rounds:
        rounds = [load_dir(d) for d in a.reports]
        lines, _, _ = rounds_table(rounds, ops)
        text = "\n".join([f"Round {i + 1}: " + "; ".join(host_line(r) for r in reps) for i, reps in enumerate(rounds)] +
                          ["", *lines]) + "\n"
    else:
        reports = [json.load(open(p)) for p in a.reports]
        lines, _, _, _ = table(reports, ops)
        text = "\n".join(["Reports: " + "; ".join(host_line(r) for r in reports), "", *lines]) + "\n"
    if a.out:
        open(a.out, "w").write(text)
    print(text, end="")


if __name__ == "__main__":
    main()
