#!/usr/bin/env python3
"""Markdown and plots from an experiment's JSON report, and the index across devices.

  report.py reports/<device>/<experiment>.json   -> <experiment>.md and <experiment>-*.png beside it
  report.py --index reports                      -> reports/README.md
The JSON schema (hybridlab.experiment/1) is described in reports/SCHEMA.md."""
import glob
import json
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from verdict import NOISE_BOUND, noisy, peer_cell, spread, verdict, verdict_line  # noqa: E402

# The plots need matplotlib; the tables do not. Where it is missing (the GPU machine's bare Python) the markdown is
# written without plots and a line says so.
try:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
except ImportError:
    plt = None


def fmt(v, spec="{:.3g}"):
    return "" if v is None else spec.format(v)


def series_key(result):
    params = result.get("params") or {}
    p = " ".join(f"{k.split('.')[-1]}={v}" for k, v in sorted(params.items()))
    where = " (CPU)" if result.get("status") == "reference" else ""
    return result["variant"] + where + (f" ({p})" if p else "")


def x_of(case):
    shape = case.get("shape") or {}
    if not shape:
        return None, None
    name = next(iter(shape))  # the first named size is the x axis
    return name, shape[name]


def group_of(case, xname):
    # the label without its "x=value" token, so matmul's shapes get one line each
    return re.sub(r"\s*\b%s=\S+" % re.escape(xname or "~"), "", case["label"]).strip()


def plots(report, base):
    """time vs the first shape size per op, one line per (variant, params, group); relative error per variant."""
    out = []
    ops = []
    for c in report["cases"]:
        if c.get("op") and c["op"] not in ops:
            ops.append(c["op"])
    for op in ops:
        cases = [c for c in report["cases"] if c.get("op") == op]
        lines = {}
        errors = {}
        xname = None
        for c in cases:
            xname, x = x_of(c)
            if x is None:
                continue
            for r in c["results"]:
                if r.get("status") not in ("pass", "reference"):
                    continue
                key = series_key(r) + (" " + group_of(c, xname) if group_of(c, xname) else "")
                lines.setdefault(key, []).append((x, r["time_us"]["median"]))
                if "rel_l2" in r:
                    errors.setdefault(series_key(r), []).append(max(r["rel_l2"], 1e-12))
        if not lines:
            continue
        fig, ax = plt.subplots(figsize=(8, 4.8))
        for key, pts in sorted(lines.items()):
            pts.sort()
            ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=key, linestyle="--" if key.startswith("reference") else "-")
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel(xname)
        ax.set_ylabel("time (us, median)")
        ax.set_title(f"{report['experiment']} / {op} on {report['device']['name']}")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=6, loc="best")
        name = f"{base}-{op}-time.png"
        fig.tight_layout()
        fig.savefig(name, dpi=110)
        plt.close(fig)
        out.append((op, "time", os.path.basename(name)))
        if errors:
            fig, ax = plt.subplots(figsize=(8, 3.2))
            keys = sorted(errors)
            ax.bar(range(len(keys)), [max(errors[k]) for k in keys])
            ax.set_xticks(range(len(keys)))
            ax.set_xticklabels(keys, rotation=20, ha="right", fontsize=7)
            ax.set_yscale("log")
            ax.set_ylabel("worst relative L2 vs oracle")
            ax.axhline(report.get("tolerances", {}).get(op, 1e-5), color="red", linestyle=":", label="tolerance")
            ax.legend(fontsize=7)
            ax.set_title(f"{op}: error against the reference (worst over cases)")
            name = f"{base}-{op}-error.png"
            fig.tight_layout()
            fig.savefig(name, dpi=110)
            plt.close(fig)
            out.append((op, "error", os.path.basename(name)))
    return out


def markdown(report, images):
    d = report["device"]
    lines = [f"# {report['experiment']} on {d['name']}", "", report.get("description", ""), ""]
    lines += [
        f"- device: **{d['name']}** ({d.get('type', '?')}), driver {d.get('driver', '?')} {d.get('driver_info', '')}, "
        f"Vulkan {d.get('vulkan', '?')}, subgroup {d.get('subgroup_size', '?')}"
        + (" (every pipeline pinned to it: `subgroup_size_preferred`)" if d.get("subgroup_pinned") else "")
        + f", profile `{d.get('profile', '?')}`",
        f"- commit `{report['commit']}`, {report['date']}, "
        + ("**QUICK shapes** (CPU Vulkan device; `FULL=1` for the model's shapes)" if report.get("quick") else "full model shapes")
        + (", best of 3 wall-clock runs of the whole prompt and of the decode steps after a warm-up run (per-op "
           "times: Vulkan timestamps for device ops, wall clock for host ops)" if report["experiment"] == "forward" else
           f", median of {report.get('runs', '?')} timed runs after warm-up (Vulkan timestamp queries"
           + (f" around chains of {report['chain']} calls, each behind a barrier, per call: a decode stream's dependent step"
              if report.get("chain") else "")
           + "; host-timed variants say so in their row)"),
    ]
    if report.get("quick") and report["experiment"] not in ("bandwidth", "forward"):
        # The description names the model's shapes; a QUICK run times smaller ones.
        labels = list(dict.fromkeys(c["label"] for c in report["cases"]))
        lines.append("- QUICK cases run (not the shapes above): " + ", ".join(f"`{x}`" for x in labels))
    if report.get("no_sweep") or report.get("gpu_only") or report.get("family"):
        lines.append("- a reduced run: " + ", ".join(x for x, on in (
            ("each GPU variant at this device's tuning only (no tunable sweep)", report.get("no_sweep")),
            ("CPU variants other than the reference left out", report.get("gpu_only")),
            (f"only the {report.get('family')} variants and the reference", report.get("family"))) if on))
    if report.get("peers_about"):
        lines.append(f"- peers: {report['peers_about']}; the rows below marked *measured, same run*")
    if report.get("cases_filter"):
        lines.append(f"- a partial run: only the cases whose label matches `{report['cases_filter']}`")
    ceil = report.get("ceilings")
    if ceil and report["experiment"] != "bandwidth":
        lines.append(
            f"- ceilings (measured on this device): read {ceil['read_GBps']:.1f} GB/s, copy {ceil['copy_GBps']:.1f} GB/s, "
            f"f32 FMA {ceil['f32_TFLOPs']:.2f} TFLOP/s ({ceil.get('source', '')})")
        lines.append(
            "- roofline: the larger of bytes / read bandwidth and flops / f32 rate; *fraction* = roofline time / measured time")
        if any("of_same_size_read" in r for c in report.get("cases", []) for r in c.get("results", [])):
            lines.append(
                "- *of a read* (memory-bound rows of at least 1 MiB): the time of a plain read of the same bytes, chained on "
                "this device as a decode stream chains its kernels (the bandwidth experiment's reads of decode sizes, "
                "interpolated), / measured time: what a kernel of that size can reach here, its fixed costs included")
        for cc in report.get("cpu_ceilings", []):
            lines.append(
                f"- CPU ceilings (measured in this run, {cc['threads']} threads): read {cc['read_GBps']:.1f} GB/s (a "
                f"{cc['buffer_MiB']} MiB buffer; from L2, 128 KiB per thread: {cc['cache_read_GBps']:.1f} GB/s), f32 FMA "
                f"{cc['f32_GFLOPs']:.1f} GFLOP/s: the roofline of the CPU rows run on that many threads (a row whose data the "
                "caches hold can pass 100%)")
        if report.get("timing_floor_us") is not None:
            lines.append(f"- timing floor: {report['timing_floor_us']:.2f} us, the median time of a 4-value add through the same "
                         "path (allocation, dispatch, barrier, timestamps); GPU times near it measure that path, not the kernel")
        proj = report.get("projection", {})
        lines.append(f"- **RDNA4 projection** ({proj.get('device', '')}: {proj.get('GBps')} GB/s, {proj.get('f32_TFLOPs')} f32 TFLOP/s, "
                     f"{proj.get('f16_TFLOPs')} f16 TFLOP/s): {proj.get('method', '')}")
    lines.append("")
    if report["experiment"] == "bandwidth":
        lines += ["| measurement | bytes / flops | time (us) | rate |", "|---|---|---|---|"]
        for c in report["cases"]:
            rate = f"{c['GBps']:.1f} GB/s" if "GBps" in c else f"{c['TFLOPs']:.2f} TFLOP/s"
            amount = fmt(c.get("bytes") or c.get("flops"), "{:.3g}")
            lines.append(f"| {c['label']} | {amount} | {c['time_us']:.1f} | {rate} |")
        small = report.get("decode_size_reads")
        if small:
            lines += ["", f"Reads of decode sizes, {small['chain']} chained ({small['method']}): what a decode mat-vec of that "
                      "many bytes could take at best in a decode stream.", "",
                      "| MiB | us per read | GB/s | of the read ceiling | prefetched: us per read | GB/s | prefetched, plain loads: us "
                      "| one region: us per read |",
                      "|---|---|---|---|---|---|---|---|"]
            for r in small["reads"]:
                pre = (f"{r['prefetched_time_us']:.2f} | {r['prefetched_GBps']:.0f}" if "prefetched_time_us" in r else " | ")
                pre += f" | {r['prefetched_plain_time_us']:.2f}" if "prefetched_plain_time_us" in r else " | "
                pre += f" | {r['cached_time_us']:.2f}" if "cached_time_us" in r else " | "
                lines.append(f"| {r['MiB']} | {r['time_us']:.2f} | {r['GBps']:.0f} | {100 * r['of_read_ceiling']:.0f}% | {pre} |")
        return "\n".join(lines) + "\n"
    if report["experiment"] == "forward":
        return "\n".join(lines + forward_markdown(report, images)) + "\n"
    if report.get("failures"):
        lines += [f"**{report['failures']} variant runs FAILED their numerics check** (marked below; timed only under --time-failing).", ""]
    current = None
    for c in report["cases"]:
        op = c.get("op", "")
        if op != current:
            current = op
            tol = report.get("tolerances", {}).get(op)
            lines += [f"## {op}", "", f"Tolerance: relative L2 <= {tol:g} against the oracle (reference) on the same fresh random inputs.", ""]
            for (iop, kind, img) in images:
                if iop == op:
                    lines += [f"![{op} {kind}]({img})", ""]
        shape = ", ".join(f"{k} {v:g}" for k, v in (c.get("shape") or {}).items())
        lines += [f"### {c['label']}", "", f"{shape}; counted {c['bytes']:.4g} bytes, {c['flops']:.4g} flops", "",
                  "| variant | where | status | rel L2 | median us (min..max) | GB/s | TFLOP/s | roofline | bound | RDNA4 projected us |",
                  "|---|---|---|---|---|---|---|---|---|---|"]
        for r in c["results"]:
            t = r.get("time_us")
            times = f"{t['median']:.2f} ({t['min']:.2f}..{t['max']:.2f})" if t else ""
            if t and noisy(r):
                times += f" **noisy** ({spread(r):.0%} spread)"
            frac = r.get("fraction_of_ceiling")
            roof = fmt(frac * 100 if frac is not None else None, '{:.1f}%')
            if r.get("of_same_size_read") is not None:
                roof += f" ({100 * r['of_same_size_read']:.0f}% of a read)"
            status = r.get("status", "")
            if status in ("fail", "error"):
                status = f"**{status.upper()}**" + (f": {r.get('why')}" if r.get("why") else "")
            if status == "unavailable":
                status += f": {r.get('why', '')}"
            lines.append(
                f"| {series_key(r)} | {r.get('where', '')} | {status} | {fmt(r.get('rel_l2'), '{:.2e}')} | {times} | "
                f"{fmt(r.get('GBps'), '{:.1f}')} | {fmt(r.get('TFLOPs'), '{:.3f}')} | {roof} | "
                f"{r.get('bound') or ''} | {fmt(r.get('rdna4_projected_us'), '{:.1f}')} |")
        for p in c.get("peers", []):
            # Measured in this run (--peers): GB/s from this case's counted bytes; quoted constants: their source only.
            how = "measured, same run" if p.get("measured") else f"quoted: {p.get('source', '')}"
            gbps = fmt(c["bytes"] / p["time_us"] / 1e3, "{:.1f}") if p.get("measured") and c.get("bytes") else ""
            t = f"{p['time_us']:.2f}" + (f" ({p['range_us'][0]:.2f}..{p['range_us'][1]:.2f})" if p.get("range_us") else "")
            lines.append(f"| *peer:* {p['name']} | {p.get('device', '')} | {how} | | {t} | {gbps} | | | | |")
        lines += ["", verdict_line(c), ""]
        lines += dispatches_markdown(c)
    lines += schedules_markdown(report)
    return "\n".join(lines) + "\n"


def dispatches_markdown(case):
    """--dispatches: each profiled variant's dispatches by pipeline, each alone between two timestamps."""
    lines = []
    for r in case["results"]:
        d = r.get("dispatches")
        if not d:
            continue
        total = sum(x["us"] for x in d)
        lines += [f"Dispatches of `{series_key(r)}`, each alone between two timestamps (behind a barrier: no overlap, so "
                  f"they add up to {total:.2f} us against the {r['time_us']['median']:.2f} us of the call; median of "
                  f"{min(r['time_us']['runs'], 5)} calls):", "",
                  "| pipeline | dispatches per call | us | share |", "|---|---|---|---|"]
        lines += [f"| {x['pipeline']} | {x['calls']} | {x['us']:.2f} | {100 * x['us'] / total:.1f}% |" for x in d]
        lines.append("")
    return lines


SCHEDULE_RE = re.compile(r"^(halide(?:-vulkan)?:[^:]+):([^:]+)$")


def schedules_markdown(report):
    """The same algorithm under each of its schedules: rows of variants named <family>:<op>:<schedule>
    (the Halide variants), one table per algorithm, one column per schedule, the reference for scale."""
    algos = {}  # algorithm -> where, timing, schedules, cases: {label: {schedule or "reference": us or status}}
    order = []
    for c in report["cases"]:
        ref = next((r for r in c["results"] if r.get("status") == "reference" and r.get("time_us")), None)
        for r in c["results"]:
            m = SCHEDULE_RE.match(r.get("variant", ""))
            if not m:
                continue
            algo, sched = m.groups()
            if algo not in algos:
                algos[algo] = {"where": "", "timing": "", "schedules": [], "cases": {}}
                order.append(algo)
            a = algos[algo]
            if sched not in a["schedules"]:
                a["schedules"].append(sched)
            row = a["cases"].setdefault(c["label"], {})
            if ref:
                row["reference"] = ref["time_us"]["median"]
            if r.get("status") == "pass":
                row[sched] = r["time_us"]["median"]
                a["where"] = a["where"] or r.get("where", "")
                a["timing"] = a["timing"] or r.get("timing", "")
            else:
                row[sched] = r.get("status", "?")
    if not algos:
        return []
    lines = ["## schedules", "",
             "The same algorithm (one Halide pipeline) under each of its named schedules: median us per case, the best "
             "schedule, and its speedup over the Eigen reference (CPU) of the same case. A schedule is a set of "
             "GeneratorParams (ops/halide/CMakeLists.txt).", ""]
    for algo in order:
        a = algos[algo]
        scheds = a["schedules"]
        lines += [f"### {algo}" + (f" ({a['where']})" if a["where"] else ""), ""]
        if a["timing"]:
            lines += [f"Timing: {a['timing']}.", ""]
        lines += ["| case | reference | " + " | ".join(scheds) + " | best | best vs reference |",
                  "|---|---|" + "---|" * len(scheds) + "---|---|"]
        for label, row in a["cases"].items():
            timed = {k: v for k, v in row.items() if k in scheds and isinstance(v, (int, float))}
            best = min(timed, key=timed.get) if timed else None
            ref = row.get("reference")
            cells = [fmt(row[k], "{:.2f}") if isinstance(row.get(k), (int, float)) else str(row.get(k, "")) for k in scheds]
            speed = f"{ref / timed[best]:.2f}x" if best and ref else ""
            lines.append(f"| {label} | {fmt(ref, '{:.2f}')} | " + " | ".join(cells) + f" | {best or '-'} | {speed} |")
        lines.append("")
    return lines


def forward_markdown(report, images):
    lines = []
    for img in images:
        lines += [f"![{img[1]}]({img[2]})", ""]
    for c in report["cases"]:
        lines += [f"## {c['label']}", "", f"{c['config']}", ""]
        lines += ["| plan | prefill tok/s | prompt | decode tok/s | dispatches / prefill token | dispatches / decode token | "
                  "per-token fallback in prefill | logits rel L2 vs reference | argmax agreement |",
                  "|---|---|---|---|---|---|---|---|---|"]
        for r in c["results"]:
            p, d = r["prefill"], r["decode"]
            vs = r.get("vs_reference")
            err = f"{vs['rel_l2']:.2e} | {vs['argmax_agreement']:.4f}" if vs else "(the reference) | "
            lines.append(f"| {r['plan'] or 'all reference'} | {p['tok_per_s']:.1f} | {p['tokens']} | {d['tok_per_s']:.1f} | "
                         f"{p['dispatches_per_token']:.2f} | {d['dispatches_per_token']:.1f} | "
                         f"{'**YES**' if r['prefill_per_token_fallback'] else 'no'} | {err} |")
        vr = c.get("vulkan_vs_reference")
        if vr:
            lines += ["", f"Vulkan plan vs reference plan on the same prompt: logits relative L2 {vr['rel_l2']:.2e}, "
                      f"argmax agreement {vr['argmax_agreement']:.4f}.", ""]
        for r in c["results"]:
            for phase in ("prefill", "decode"):
                b = r[phase]["breakdown"]
                lines += [f"### {r['plan']}: {phase} breakdown ({b['wall_ms']:.2f} ms wall, {b['op_sum_ms']:.2f} ms in ops)", "",
                          "| op | ms | share | calls / token | timed on |", "|---|---|---|---|---|"]
                for o in b["ops"]:
                    lines.append(f"| {o['op']} | {o['ms']:.3f} | {100 * o['share']:.1f}% | {o['calls_per_token']:.2f} | {o['timed_on']} |")
                lines.append("")
    return lines


def forward_plots(report, base):
    fig, axes = plt.subplots(1, 2, figsize=(10, 4))
    for ax, phase in zip(axes, ("prefill", "decode")):
        labels, vals = [], []
        for c in report["cases"]:
            for r in c["results"]:
                labels.append(f"{c['label'][:28]}\n{r['plan'][:28]}")
                vals.append(r[phase]["tok_per_s"])
        ax.barh(range(len(vals)), vals)
        ax.set_yticks(range(len(vals)))
        ax.set_yticklabels(labels, fontsize=6)
        ax.set_xscale("log")
        ax.set_xlabel(f"{phase} tok/s")
        ax.grid(True, axis="x", alpha=0.3)
    fig.suptitle(f"forward on {report['device']['name']}")
    fig.tight_layout()
    name = f"{base}-throughput.png"
    fig.savefig(name, dpi=110)
    plt.close(fig)
    return [("forward", "throughput", os.path.basename(name))]


def write_report(path):
    with open(path) as f:
        report = json.load(f)
    base = path[:-5]
    for old in glob.glob(base + "-*.png"):
        os.remove(old)
    kind = report["experiment"]
    # The tables first: a run cut by its time limit while the plots are drawn still leaves its markdown report.
    with open(base + ".md", "w") as f:
        f.write(markdown(report, []))
    if plt is None and kind != "bandwidth":
        print(f"report.py: no matplotlib here: {base}.md written without its plots", file=sys.stderr)
        images = []
    else:
        images = forward_plots(report, base) if kind == "forward" else (plots(report, base) if kind != "bandwidth" else [])
    if images:
        with open(base + ".md", "w") as f:
            f.write(markdown(report, images))
    if kind not in ("bandwidth", "forward"):
        print(f"\n{kind} on {report['device']['name']} ({'QUICK' if report.get('quick') else 'full'} shapes): verdicts per case")
        for c in report["cases"]:
            print(f"{c.get('op', '')} {c['label']}: {verdict_line(c).replace('**', '').replace('`', '')}")


def bench_rows(bench):
    """`hybridlab bench` reports (reports/SCHEMA.md, hybridlab.bench/1): one row per test."""
    out = ["", "## Bench", "", "`hybridlab bench` (README, \"Bench\"): median tok/s of the wall clock over the runs.", "",
           "| device | model | layers | plan | test | tok/s | min .. max | commit | report |", "|---|---|---|---|---|---|---|---|---|"]
    for path, dev, r in bench:
        for t in r["tests"]:
            s = t["tok_per_s"]
            out.append(f"| {dev} | {r['model']['source']} | {r['model']['layers']} | {r['plan'][:40]} | {t['label']} | "
                       f"{s['median']:.2f} | {s['min']:.2f} .. {s['max']:.2f} | {r['commit']} | [{os.path.basename(path)}]({path}) |")
    return out if bench else []


def index(root):
    rows, bench = [], []
    for path in sorted(glob.glob(os.path.join(root, "*", "*.json"))):
        with open(path) as f:
            r = json.load(f)
        dev = os.path.basename(os.path.dirname(path))
        if r.get("schema") == "hybridlab.bench/1":
            bench.append((os.path.relpath(path, root), dev, r))
            continue
        rel = os.path.relpath(path[:-5] + ".md", root)
        if r["experiment"] == "bandwidth":
            c = r["ceilings"]
            rows.append((r["experiment"], "", "", dev, f"read {c['read_GBps']:.0f} GB/s, copy {c['copy_GBps']:.0f} GB/s, "
                         f"{c['f32_TFLOPs']:.1f} f32 TFLOP/s", "", "", rel, r))
            continue
        if r["experiment"] == "forward":
            for c in r["cases"]:
                for x in c["results"]:
                    rows.append((r["experiment"], "", c["label"], dev, x["plan"][:40],
                                 f"prefill {x['prefill']['tok_per_s']:.0f} tok/s, decode {x['decode']['tok_per_s']:.0f} tok/s", "",
                                 rel, r, "per-token fallback" if x["prefill_per_token_fallback"] else ""))
            continue
        for c in r["cases"]:
            failing = [x["variant"] for x in c["results"] if x.get("status") in ("fail", "error")]
            v = verdict(c)
            best = (v.get("GPU") or {}).get("best") or (v.get("CPU") or {}).get("best")
            rows.append((r["experiment"], c.get("op", ""), c["label"], dev,
                         series_key(best) if best else "-",
                         f"{best['time_us']['median']:.2f}" if best else "-",
                         f"{100 * best['fraction_of_ceiling']:.1f}%" if best and best.get("fraction_of_ceiling") is not None else "-",
                         rel, r, ", ".join(failing), peer_cell(v)))
    out = ["# hybridlab reports", "",
           "Every experiment's report per device (`make experiment NAME=...` writes them; `make report` rebuilds this index).",
           "Times are medians of Vulkan timestamp measurements; *roofline* is the fraction of the device's measured ceiling "
           "(the `bandwidth` experiment of the same device). QUICK reports (CPU devices) use reduced shapes.", "",
           f"*Best variant*: the fastest GPU variant (CPU where none ran on the GPU) whose timing is not noisy (spread over "
           f"{NOISE_BOUND:.0%} of the median); each report's verdict lines give the margins.", "",
           "*llama.cpp*: its time for the op at the case's shape measured in the same device call (`--peers`), in its graph "
           "(NV coopmat2 default, *KHR*: coopmat KHR only) or *alone* (test-backend-ops), and the best variant's margin "
           "(x > 1: hybridlab faster).", "",
           "| experiment | op | case | device | best variant | time (us) | roofline | llama.cpp us (margin) | failing | report |",
           "|---|---|---|---|---|---|---|---|---|---|"]
    for row in rows:
        exp, op, label, dev, best, t, frac, rel, r = row[:9]
        failing = row[9] if len(row) > 9 else ""
        peers = row[10] if len(row) > 10 else ""
        quick = " (QUICK)" if r.get("quick") else ""
        out.append(f"| {exp} | {op} | {label} | {dev}{quick} | {best} | {t} | {frac} | {peers} | {failing} | "
                   f"[{os.path.basename(rel)}]({rel}) |")
    out += bench_rows(bench)
    with open(os.path.join(root, "README.md"), "w") as f:
        f.write("\n".join(out) + "\n")


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--index":
        index(sys.argv[2])
    elif len(sys.argv) == 2:
        write_report(sys.argv[1])
    else:
        sys.exit(__doc__)
