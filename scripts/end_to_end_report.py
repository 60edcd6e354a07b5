#!/usr/bin/env python3
"""reports/<device>/end_to_end.md: the full-size model's bench, its per-op breakdown, the decode roofline, the
correctness check against the oracle, and the peers measured in the same device call (llama.cpp's llama-bench JSON, as
scripts/device_e2e.sh writes them) side by side with ratios.

  end_to_end_report.py --bench BENCH.json [--oracle ORACLE.log] [--synth SYNTH.log] --bandwidth BANDWIDTH.json
                       [--peer 'LABEL=LLAMA_BENCH.json|.log' ...] [--deviation COMPARE_LOGITS.log] --out MD

--deviation: scripts/compare_logits.py's output on the same file and token ids; its label `hybridlab` is this plan, the
others name peers by their --peer label. The peers' table gets each engine's relative L2 and argmax agreement with the
oracle beside its speed.
"""
import argparse
import json
import re

import rdna4_projection


def llama_bench_rows(path):
    """llama-bench -o json output (alone or after its log lines): {"pp512": row, "tg128": row}."""
    text = open(path).read()
    start = text.find("[") if text.lstrip().startswith("[") else text.find("\n[")
    if start < 0:
        raise SystemExit(f"end_to_end_report.py: {path}: no llama-bench JSON array")
    try:
        rows = json.loads(text[start:])
    except json.JSONDecodeError as e:
        raise SystemExit(f"end_to_end_report.py: {path}: llama-bench JSON does not parse: {e}")
    return rows_by_test(rows)


NOISY_STDDEV = 0.05  # a peer's llama-bench standard deviation over this fraction of its mean: its ratio is no claim


def deviations(path):
    """compare_logits.py's lines `LABEL: relative L2 X, argmax agreement Y` -> {LABEL: (X, Y)}."""
    out = {}
    for line in open(path):
        m = re.match(r"(.+): relative L2 (\S+), argmax agreement (\S+)$", line.strip())
        if m:
            out[m.group(1)] = (float(m.group(2)), float(m.group(3)))
    if not out:
        raise SystemExit(f"end_to_end_report.py: {path}: no 'LABEL: relative L2 X, argmax agreement Y' line")
    return out


def ceilings(path):
    """The device's measured ceilings from its bandwidth report: read_GBps, f32_TFLOPs, f16_TFLOPs (None if unmeasured)."""
    bw = {c["label"]: c for c in json.load(open(path))["cases"]}
    return {"read_GBps": bw["read"]["GBps"], "f32_TFLOPs": bw["f32 fma"]["TFLOPs"],
            "f16_TFLOPs": next((c["TFLOPs"] for label, c in bw.items() if label.startswith("f16 matrix")), None)}


def rows_by_test(rows):
    out = {}
    for row in rows:
        label = f"pp{row['n_prompt']}" if row["n_gen"] == 0 else f"tg{row['n_gen']}"
        out[label] = row
    return out

GROUPS = [
    ("projections", {"matmul", "lm_head", "matmul_group", "matmul_add_rmsnorm", "add_rmsnorm_matmul_group"}),
    ("MoE", {"moe_router", "moe_experts", "shared_expert", "moe_block", "moe_block_add_rmsnorm", "add_rmsnorm_moe_block"}),
    ("Gated DeltaNet", {"gdn_prep", "ssm_conv", "l2norm", "ssm_gates", "ssm_scan", "gated_rmsnorm", "gdn_output", "gdn_decode"}),
    ("attention", {"attention", "rope", "slice", "attention_prep", "attention_decode"}),
    ("norms, residual", {"rmsnorm", "add", "add_rmsnorm"}),
    ("embed, argmax", {"embed", "argmax (bench)"}),
]


def group_of(op):
    for name, ops in GROUPS:
        if op in ops:
            return name
    return "other"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bench", required=True)
    ap.add_argument("--oracle", help="the oracle step's log (left out: the report says the check did not run in this call)")
    ap.add_argument("--synth")
    ap.add_argument("--bandwidth", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--note", action="append", default=[], help="a line for the report's header (how the run was made)")
    ap.add_argument("--peer", action="append", default=[], metavar="LABEL=JSON",
                    help="llama-bench JSON (or its log) measured in the same device call on the same GGUF")
    ap.add_argument("--ablation", action="append", default=[], metavar="WHAT=JSON",
                    help="a bench JSON of the same model with one change, described by WHAT")
    ap.add_argument("--deviation", help="scripts/compare_logits.py's log: each engine's logits against the oracle's")
    ap.add_argument("--deviation-from", help="where --deviation was measured when not in this call (shown in its columns' "
                                              "headers, e.g. \"abc1234's call\")")
    a = ap.parse_args()
    dev_of = deviations(a.deviation) if a.deviation else {}
    b = json.load(open(a.bench))
    ceil = ceilings(a.bandwidth)
    read_gbps, f32_tflops, f16_tflops = ceil["read_GBps"], ceil["f32_TFLOPs"], ceil["f16_TFLOPs"]
    # Peers measured by `hybridlab bench --peer` (in the bench JSON), then those given as llama-bench outputs.
    peers = [(p["label"], rows_by_test(p["llama_bench"])) for p in b.get("peers", [])]
    for spec in a.peer:
        label, path = spec.split("=", 1)
        peers.append((label, llama_bench_rows(path)))
    unmatched = [l for l in dev_of if l != "hybridlab" and l not in {p for p, _ in peers}]
    if unmatched:
        raise SystemExit(f"end_to_end_report.py: {a.deviation}: '{unmatched[0]}' names no engine here (hybridlab or a --peer label)")
    cost = b["model"]["per_token"]
    bytes_tok, flops_tok = cost["decode_bytes_per_token"], cost["matmul_flops_per_token"]
    oracle = open(a.oracle).read() if a.oracle else None
    synth = open(a.synth).read() if a.synth else ""
    dev = b["device"]
    L = []
    w = L.append
    w(f"# Full-size end to end on {dev['name']}\n")
    w("The whole Qwen3.6-35B-A3B shape (40 layers: 30 Gated DeltaNet + 10 gated attention, 256 experts top-8 plus the shared "
      "expert, vocab 248320) from a synthetic Q4_K_M GGUF written on the GPU machine by `hybridlab synth`, every op on Vulkan, "
      "measured with `hybridlab bench` (scripts/device_e2e.sh)" + (", beside llama.cpp's llama-bench on the same file in the "
      "same device call" if peers else "") + ".\n")
    w(f"- device: **{dev['name']}**, driver {dev.get('driver')} {dev.get('driver_info', '')}, Vulkan {dev.get('vulkan', '?')}, subgroup {dev.get('subgroup_size', '?')}, profile `{dev.get('profile', '?')}`, commit `{b['commit']}`, {b['date']}")
    w(f"- plan: `{b['plan']}`")
    w(f"- model: `{b['model']['source']}` ({b['model']['origin']}), {b['model']['layers']} layers, vocab {b['model']['vocab']}")
    m = re.search(r"-> (\S+): ([\d.]+ GB, \d+ tensors \([^)]*\)) in ([\d.]+) s", synth)
    if m:
        w(f"- synthetic file: {m.group(2)}, written in {float(m.group(3)):.0f} s on the GPU machine's CPUs")
    warm = f"{b['warmup_runs']} warm-up" + (f" (more until {b['warmup_ms']:.0f} ms of them)" if b.get('warmup_ms') else "")
    w(f"- prompt: {b['tokens']}; prefill in chunks of {b['prefill_chunk']} tokens; {b['runs']} timed runs after "
      f"{warm}, median; timing: {b['timing']}")
    w(f"- per token (from the GGUF's tensor types): a decode step reads {bytes_tok / 1e9:.3f} GB of weights; the projections "
      f"do {flops_tok / 1e9:.2f} GFLOP ({cost['method']})")
    w(f"- ceilings measured on this device (reports/{dev['slug']}/bandwidth.json): read {read_gbps:.0f} GB/s, f32 FMA "
      f"{f32_tflops:.1f} TFLOP/s" + (f", f16 matrix (cooperative) {f16_tflops:.1f} TFLOP/s" if f16_tflops else ""))
    for n in a.note:
        w(f"- {n}")
    w("")

    w("## Throughput\n")
    w("| test | tok/s (median) | min .. max | ms / token | host ms / token in the steps | dispatches / token | submits / run | "
      "fraction of roofline |")
    w("|---|---|---|---|---|---|---|---|")
    for t in b["tests"]:
        tps = t["tok_per_s"]["median"]
        if t["phase"] == "decode":
            frac = bytes_tok * tps / (read_gbps * 1e9)
            roof = f"{100 * frac:.1f}% of the {read_gbps:.0f} GB/s read roofline ({bytes_tok / 1e9:.2f} GB/token)"
        else:
            ceiling, what = (f16_tflops, "f16 matrix") if f16_tflops else (f32_tflops, "f32 FMA")
            roof = f"{100 * flops_tok * tps / (ceiling * 1e12):.2f}% of the {what} roofline (projection flops only)"
        w(f"| {t['label']} | **{tps:.1f}** | {t['tok_per_s']['min']:.1f} .. {t['tok_per_s']['max']:.1f} | "
          f"{t['ms_per_token']:.3f} | {t.get('host_record_ms_per_token', float('nan')):.3f} | {t['dispatches_per_token']:.2f} | "
          f"{t['submits']} | {roof} |")
    w("")
    for t in b["tests"]:
        dev = t.get("device_tok_per_s", {}).get("median")
        if t["phase"] == "prefill" and dev:
            wall_ms, dev_ms = t["tokens"] / t["tok_per_s"]["median"] * 1e3, t["tokens"] / dev * 1e3
            w(f"On the GPU a {t['label']} run takes {dev_ms:.2f} ms from its first command to its last ({dev:.1f} tok/s; Vulkan "
              f"timestamps at the run's first and last command, median); the other {wall_ms - dev_ms:.2f} ms of the wall clock's "
              f"median ({wall_ms:.2f} ms) are the host's, before the first command reaches the GPU and after the last has finished.")
    floor = b.get("dispatch_floor_us")
    if floor is not None:
        w(f"Dispatch floor on this device: **{floor:.2f} us** of GPU time per dependent dispatch ({b['dispatch_floor_method']}).")
        for t in b["tests"]:
            if t["phase"] == "decode":
                fl = t["dispatches_per_token"] * floor * 1e-3
                w(f"A decode token's {t['dispatches_per_token']:.0f} dispatches cost at least {fl:.2f} ms of its {t['ms_per_token']:.2f} ms "
                  f"at that floor ({100 * fl / t['ms_per_token']:.0f}%); the weights alone at the read ceiling take "
                  f"{bytes_tok / (read_gbps * 1e9) * 1e3:.2f} ms. The host spends {t.get('host_record_ms_per_token', float('nan')):.2f} ms "
                  "per token recording the step, overlapped with the GPU (the stream is submitted every "
                  "device.stream.flush_dispatches dispatches, a step's first segment at once).")
                if "gpu_ms_per_token" in t:
                    w(f"On the GPU a decode step takes {t['gpu_ms_per_token']:.3f} ms from its first command to its last, and "
                      f"{t.get('gpu_gap_ms_between_tokens', float('nan')):.3f} ms pass from one step's end to the next one's "
                      "start (the argmax, the id's download, the host's turnaround; Vulkan timestamps around each step).")
                if t.get("replayed_dispatches"):
                    w(f"Decode replays the step recorded once: per token the host records "
                      f"{t['recorded_dispatches_per_token']:.1f} of the {t['dispatches_per_token']:.1f} dispatches the GPU runs "
                      "(the token- and position-dependent ops: embed, rope, attention with its KV cache); the rest are "
                      "command buffer segments submitted again.")
        w("")
    # RDNA4 projection, calibrated on llama.cpp's KHR-only path (the one RDNA4 has) measured in the same call.
    khr = next(((label, rows) for label, rows in peers if "KHR" in label), None)
    if khr and f16_tflops:
        w("\n".join(rdna4_projection.section({t["label"]: t["tok_per_s"]["median"] for t in b["tests"]}, khr[0],
                                             {k: r["avg_ts"] for k, r in khr[1].items()}, bytes_tok, flops_tok, ceil)))
        for k, r in khr[1].items():
            if r["stddev_ts"] > NOISY_STDDEV * r["avg_ts"]:
                w(f"The calibrating peer's {k} is noisy in this call ({r['avg_ts']:.1f} +- {r['stddev_ts']:.1f} tok/s): its "
                  f"calibration error is uncertain by about {100 * r['stddev_ts'] / r['avg_ts']:.0f} points.\n")
    else:
        w("No RDNA4 projection here: it is calibrated on llama.cpp's KHR-only Vulkan path measured in the same call "
          "(a peer labelled KHR), and this call has none" + ("" if f16_tflops else " (or no f16 matrix ceiling)") + ".\n")

    tests = {t["label"]: t for t in b["tests"]}
    if peers:
        w("## Beside the peers (same device call, same GGUF)\n")
        labels = [t["label"] for t in b["tests"]]
        src = f" ({a.deviation_from})" if a.deviation_from else ""
        dcols = f" | relative L2 vs oracle{src} | argmax agreement{src}" if dev_of else ""
        def dcells(label):
            if not dev_of:
                return ""
            d = dev_of.get(label)
            return f" | {d[0]:.2e} | {d[1]:.4f}" if d else " | - | -"
        w("| engine | " + " | ".join(f"{l} tok/s" for l in labels) + " | " +
          " | ".join(f"hybridlab / engine, {l}" for l in labels) + dcols + " |")
        w("|---|" + "---|" * (2 * len(labels) + (2 if dev_of else 0)))
        w("| hybridlab (this plan) | " + " | ".join(f"**{tests[l]['tok_per_s']['median']:.1f}**" for l in labels) + " | " +
          " | ".join("1.00" for _ in labels) + dcells("hybridlab") + " |")
        for label, rows in peers:
            cells, ratios = [], []
            for l in labels:
                row = rows.get(l)
                if row is None:
                    cells.append("-")
                    ratios.append("-")
                else:
                    cells.append(f"{row['avg_ts']:.1f} +- {row['stddev_ts']:.1f}")
                    noisy = row["stddev_ts"] > NOISY_STDDEV * row["avg_ts"]
                    ratios.append(f"{tests[l]['tok_per_s']['median'] / row['avg_ts']:.2f}" + (" (noisy)" if noisy else ""))
            w(f"| {label} | " + " | ".join(cells) + " | " + " | ".join(ratios) + dcells(label) + " |")
        if dev_of:
            w("\nDeviation from the oracle (the f32 CPU reference on the same file): logits of every position of "
              "the same token ids (scripts/device_e2e.sh: 72 prompt ids, then 4 more; hybridlab prefills the 72 and decodes the 4, "
              "llama.cpp evaluates all 76 in one batch), relative L2 over all of them and the fraction of positions whose argmax agrees (scripts/compare_logits.py). Engines without a row were not "
              "compared in this call.")
        builds = sorted({f"{r['backends']} {r['build_commit']}" for _, rows in peers for r in rows.values()})
        w(f"\nllama.cpp builds: {', '.join(builds)}; llama-bench reports the mean and standard deviation of its runs, "
          f"hybridlab the median. A ratio marked noisy: the peer's standard deviation exceeds {100 * NOISY_STDDEV:.0f}% of "
          "its mean (a slow run among its runs): no claim is made from it.\n")

    if oracle is not None:
        fallback = "no per-token fallback" in oracle
        w(f"Per-token fallback in prefill: {'none (plan executor usage report)' if fallback else 'see the oracle log'}.\n")

    if a.ablation:
        w("## One change at a time\n")
        w("The same model and plan with one change each, measured in the same device call (median of each bench's timed "
          "runs, min .. max).\n")
        w("| change | pp512 tok/s | decode tok/s | decode dispatches / token |")
        w("|---|---|---|---|")
        base = {t["phase"] if t["phase"] == "decode" else t["label"]: t for t in b["tests"]}
        def row(what, tests):
            pp = tests.get("pp512")
            dec = tests.get("decode")
            tps = lambda t: f"{t['tok_per_s']['median']:.1f} ({t['tok_per_s']['min']:.1f} .. {t['tok_per_s']['max']:.1f})"
            w(f"| {what} | {tps(pp)} | " if pp else f"| {what} | - | ", )
            L[-1] += (f"{tps(dec)} (tg{dec['tokens']}) | {dec['dispatches_per_token']:.1f} |" if dec else "- | - |")
        row("none (the table above)", base)
        for spec in a.ablation:
            what, path = spec.rsplit("=", 1)  # the description may hold "=" (a plan), the path not
            x = json.load(open(path))
            row(what, {t["phase"] if t["phase"] == "decode" else t["label"]: t for t in x["tests"]})
        w("")

    w("## Where the time goes\n")
    w("One extra profiled run per test (Vulkan timestamps around every op's dispatches; the timestamps add a little per op, "
      "so the sum exceeds the unprofiled time). Per op type, then per op.\n")
    for t in b["tests"]:
        if t["label"] not in ("pp512", "tg128") and t["phase"] != "decode":
            continue
        br = t.get("breakdown")
        if not br:
            continue
        tok = t["tokens"]
        w(f"### {t['label']} ({br['wall_ms']:.1f} ms wall profiled, {br['ops_ms']:.1f} ms in ops)\n")
        groups = {}
        for o in br["ops"]:
            g = groups.setdefault(group_of(o["op"]), [0.0, 0])
            g[0] += o["ms"]
            g[1] += o["calls"]
        w("| op type | ms | share | ms / token | op calls / token |")
        w("|---|---|---|---|---|")
        for name, (ms, calls) in sorted(groups.items(), key=lambda kv: -kv[1][0]):
            w(f"| {name} | {ms:.2f} | {100 * ms / br['ops_ms']:.1f}% | {ms / tok:.4f} | {calls / tok:.2f} |")
        w("")
        w("| op | ms | share | calls | us / call |")
        w("|---|---|---|---|---|")
        for o in br["ops"]:
            w(f"| {o['op']} | {o['ms']:.2f} | {100 * o['share']:.1f}% | {o['calls']} | {1e3 * o['ms'] / max(o['calls'], 1):.1f} |")
        w("")

    w("## Correctness at full size\n")
    if oracle is None:
        w("Not checked in this device call (no oracle step): the per-op numerics are the experiments' (each variant against "
          "the oracle at full shapes).")
        open(a.out, "w").write("\n".join(L) + "\n")
        print(f"wrote {a.out}")
        return
    if "check-oracle:" in oracle:
        w("The Vulkan forward's logits against the oracle's (f32, on the GPU machine's CPUs) on the same GGUF: "
          "`hybridlab run --ops '<plan>' --check-oracle`: the prompt in one prefill chunk, then 4 decode steps (rows below).\n")
        w("```")
        for line in oracle.splitlines():
            if line.startswith("check-oracle:") or line.startswith("prefill:") or line.startswith("hybridlab run: 16 tokens"):
                w(line)
        w("```\n")
    elif "hybridlab" in dev_of:
        rel, agree = dev_of["hybridlab"]
        w(f"The plan's logits against the oracle's on the same GGUF and ids: relative L2 {rel:.3e}, argmax agreement "
          f"{agree:.4f} (the deviation column above; the plan's run: --oracle's log).\n")
    else:
        raise SystemExit(f"end_to_end_report.py: {a.oracle}: no check-oracle lines, and no --deviation row for hybridlab")
    w("Each op's variant per layer kind and phase (the plan executor's usage report):\n")
    w("```")
    in_table = False
    for line in oracle.splitlines():
        if line.startswith("op ") and "variant" in line:
            in_table = True
        if in_table:
            w(line)
            if line.startswith("prefill:") or line.startswith("PER-TOKEN"):
                break
    w("```")
    open(a.out, "w").write("\n".join(L) + "\n")
    print(f"wrote {a.out}")


if __name__ == "__main__":
    main()
