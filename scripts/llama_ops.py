#!/usr/bin/env python3
"""llama.cpp as a per-op peer, measured in the same device call as hybridlab's experiments.

  llama_ops.py cases OUT.txt
      writes test-backend-ops --test-file lines (op, type, shape, sources, name) for the experiments' full-size
      cases that llama.cpp has one op for: every quantized projection of the matmul experiment (q4_K / q6_K
      weights, n = 1 ... 512 tokens) and the routed experts of the moe experiment (q4_K gate and up, q6_K down,
      256 experts, top-8, random routes); run `test-backend-ops perf -b Vulkan0 --test-file OUT.txt`.
  llama_ops.py peers --device SLUG --version V [--prefill T=LOG ...] [--decode CTX=LOG ...] [--tbo LOG ...] --out JSON
      reads llama.cpp's per-op times and writes them as peer rows for the experiments' reports
      (`hybridlab experiment NAME --peers JSON`):
        --prefill T[:ENGINE]=LOG  llama-bench -p T (-ub >= T) under GGML_VK_PERF_LOGGER=1: the ops inside its prompt graph
        --decode CTX[:ENGINE]=LOG llama-bench -p 0 -n N -d CTX under GGML_VK_PERF_LOGGER=1: the ops of one decoded token
        --tbo LOG        test-backend-ops perf on the lines `cases` wrote: each op alone at the experiment's shape
      A graph's per-layer ops (routed experts, router, gated delta net, conv, attention) are summed over the graph
      and divided by the layers that run them; single calls (projections, norms) are the logger's mean per call; each
      row is the median over the graph's evaluations in the log (the first, a warm-up, left out where there are
      several), their range beside it.
"""
import argparse
import json
import re
import sys

GGML_OP = {"MUL_MAT": 29, "MUL_MAT_ID": 30}  # enum values of ggml 0c1e570 (checked with test-backend-ops support)
GGML_TYPE = {"f32": (0, 4, 1), "q6_K": (14, 210, 256), "q4_K": (12, 144, 256), "i32": (26, 4, 1)}  # id, bytes, values
EXPERTS, TOP_K, EXPERT_WIDTH, HIDDEN = 256, 8, 512, 2048

# The matmul experiment's quantized cases: (name, in, out, type, op), n tokens (ops/matmul/cases.cpp).
PROJECTIONS = [("qkv", 2048, 8192, "q4_K", "matmul"), ("qkv", 2048, 8192, "q6_K", "matmul"),
               ("z", 2048, 4096, "q4_K", "matmul"), ("out", 4096, 2048, "q4_K", "matmul"),
               ("expert", 2048, 512, "q4_K", "matmul"), ("gates", 2048, 32, "q4_K", "matmul"),
               ("lm_head", 2048, 248320, "q6_K", "lm_head")]
NS = [1, 8, 40, 128, 512]
EXPERT_TS = [1, 8, 64, 512]


def fail(msg):
    sys.exit(f"llama_ops.py: {msg}")


def src(type_name, ne):
    """One source: type id, ne0..3, nb0..3 (contiguous; quantized rows are whole blocks)."""
    tid, block_bytes, block_values = GGML_TYPE[type_name]
    ne = list(ne) + [1] * (4 - len(ne))
    nb = [block_bytes, block_bytes * ne[0] // block_values]
    nb += [nb[1] * ne[1], nb[1] * ne[1] * ne[2]]
    return " ".join(str(v) for v in [tid] + ne + nb)


def line(op, dst_ne, sources, name):
    ne = list(dst_ne) + [1] * (4 - len(dst_ne))
    params = " ".join(["0"] * 16)
    return f"{GGML_OP[op]} 0 {' '.join(map(str, ne))} 16 {params} {len(sources)} {' '.join(sources)} {name}"


def encode(experiment, op, case, part=""):
    """A test name without spaces that names its case: experiment/op/case with "~" for " " (labels hold no "~")."""
    return "/".join([experiment, op, case.replace(" ", "~")] + ([part] if part else []))


def decode_name(name):
    parts = name.split("/")
    if len(parts) not in (3, 4):
        return None
    return parts[0], parts[1], parts[2].replace("~", " ")


def cases():
    out = []
    for name, k, m, t, op in PROJECTIONS:
        for n in NS:
            label = f"{name} {t} {k}->{m} n={n}"
            out.append(line("MUL_MAT", [m, n], [src(t, [k, m]), src("f32", [k, n])], encode("matmul", op, label)))
    for T in EXPERT_TS:
        label = f"q4_K T={T}"
        ids = src("i32", [TOP_K, T])
        for part, t, k, m, x_rows in (("gate", "q4_K", HIDDEN, EXPERT_WIDTH, 1), ("up", "q4_K", HIDDEN, EXPERT_WIDTH, 1),
                                      ("down", "q6_K", EXPERT_WIDTH, HIDDEN, TOP_K)):
            sources = [src(t, [k, m, EXPERTS]), src("f32", [k, x_rows, T]), ids]
            out.append(line("MUL_MAT_ID", [m, TOP_K, T], sources, encode("moe", "moe_experts", label, part)))
    return out


# ---- parsing --------------------------------------------------------------------------------------------------

ENTRY = re.compile(r"^(?P<name>.+?): (?P<count>\d+) x (?P<avg>[0-9.e+]+) us = (?P<total>[0-9.e+]+) us")


def graph_blocks(path):
    """The 'Vulkan Timings:' blocks of a GGML_VK_PERF_LOGGER log: [{name: (count, avg_us, total_us)}]."""
    blocks, cur = [], None
    try:
        text = open(path, errors="replace").read()
    except OSError as e:
        fail(f"{path}: {e.strerror}")
    for raw in text.splitlines():
        s = raw.strip()
        if s == "Vulkan Timings:":
            cur = {}
            blocks.append(cur)
        elif cur is not None:
            m = ENTRY.match(s)
            if m:
                cur[m["name"]] = (int(m["count"]), float(m["avg"]), float(m["total"]))
            elif s.startswith("Total time") or not s:
                cur = None
    return blocks


# A projection: "MUL_MAT q4_K m=8192 n=512 k=2048", the mat-vec "MUL_MAT_VEC ...", fused ones "MUL_MAT_ADD MUL_MAT_VEC ...".
MM = re.compile(r"(?:^|\s)MUL_MAT(?:_VEC)? (?P<type>\S+) m=(?P<m>\d+) n=(?P<n>\d+) k=(?P<k>\d+)$")


def pick_blocks(blocks, n, path):
    """The blocks whose projections ran n tokens (prompt graphs of T = n, or decoded tokens for n = 1), less the first
    where there are several (llama-bench's warm-up run)."""
    hits = []
    for b in blocks:
        ns = {int(m["n"]) for m in (MM.search(k) for k in b) if m}
        if ns and n in ns and (n == 1) == (ns == {1}):
            hits.append(b)
    if not hits:
        fail(f"{path}: no GGML_VK_PERF_LOGGER block with {n}-token projections (was it run with GGML_VK_PERF_LOGGER=1?)")
    return hits[1:] if len(hits) > 1 else hits


def median_rows(per_block):
    """One row per peer: the median over the blocks (graph evaluations) of its time, their range beside it."""
    by = {}
    for rows in per_block:
        for r in rows:
            by.setdefault((r["experiment"], r["op"], r["case"], r["name"]), []).append(r)
    out = []
    for rs in by.values():
        t = sorted(r["time_us"] for r in rs)
        mid = len(t) // 2
        row = dict(rs[0], time_us=round(t[mid] if len(t) % 2 else (t[mid - 1] + t[mid]) / 2, 3))
        row["evaluations"] = len(t)
        if len(t) > 1:
            row["range_us"] = [t[0], t[-1]]
        out.append(row)
    return out


def per_layer(block, pattern, anchor=None):
    """The time per layer of the ops matching pattern: their total over the calls of the one-per-layer op anchor
    (the router for the routed experts' two or three MUL_MAT_IDs), else their mean per call. A block may be a
    partial graph or several graphs: counting calls, not layers, holds either way."""
    hits = [v for k, v in block.items() if re.match(pattern, k)]
    if not hits:
        return None
    units = sum(v[0] for k, v in block.items() if anchor and re.match(anchor, k)) or sum(v[0] for v in hits)
    return sum(v[2] for v in hits) / units, sum(v[0] for v in hits) / units


def graph_rows(block, T, ctx, what, version, engine="", attention_only=False):
    """Peer rows from one graph: T tokens (prefill), or one token at context ctx (decode); attention_only: a second
    decode graph at a longer context, where only attention's case differs."""
    rows = []
    engine = f"Vulkan {engine}".strip()
    where = f"llama.cpp {version} {engine}, inside its {what} graph (GGML_VK_PERF_LOGGER)"

    def add(experiment, op, case, us, name):
        rows.append({"experiment": experiment, "op": op, "case": case, "time_us": round(us, 3),
                     "name": f"llama.cpp {engine} {name}", "source": where})

    router = r"TOPK_MOE"
    for pattern, anchor, experiment, op, case, name in (
            (r"MUL_MAT_ID", router, "moe", "moe_experts", f"q4_K T={T}", "MUL_MAT_ID gate, up, down"),
            (router, None, "moe", "moe_router", f"T={T}", "softmax + top-k + norm, fused"),
            (r"GATED_DELTA_NET", None, "ssm_scan", "ssm_scan", f"T={T}", "GATED_DELTA_NET"),
            (r"SSM_CONV", None, "ssm_conv", "ssm_conv", f"T={T}", "SSM_CONV (+ SiLU)"),
            (r"FLASH_ATTN_EXT", None, "attention", "attention",
             f"decode ctx={ctx}" if T == 1 else f"prefill T={T}", "FLASH_ATTN_EXT")):
        r = per_layer(block, pattern, anchor)
        if r and (op == "attention" or not attention_only):
            add(experiment, op, case, r[0], f"{name}, per layer ({r[1]:g} calls each)")
    projections = {}  # (type, k, m, n) -> [calls, total us]: plain and fused calls of one shape together
    for key, (count, avg, total) in block.items():
        m = MM.search(key)
        if m:
            acc = projections.setdefault((m["type"], int(m["k"]), int(m["m"]), int(m["n"])), [0, 0.0])
            acc[0] += count
            acc[1] += total
    for (t, k, o, n), (count, total) in sorted(projections.items()):
        for name, pk, pm, pt, op in PROJECTIONS:
            if (pk, pm, pt) == (k, o, t) and n == T and not attention_only:
                add("matmul", op, f"{name} {t} {k}->{o} n={n}", total / count,
                    f"{'MUL_MAT_VEC' if n == 1 else 'MUL_MAT'} {t} {k}->{o} x{n} (mean of {count})")
    for key, (count, avg, _) in block.items():
        m = re.match(r"^(RMS_NORM_MUL )?RMS_NORM\((\d+),(\d+),(\d+),(\d+)\)", key)
        if m and int(m[2]) == HIDDEN and int(m[3]) == T and T in (1, 64, 512, 4096) and not attention_only:
            add("norms", "rmsnorm", f"T={T}", avg, f"{'RMS_NORM+MUL' if m[1] else 'RMS_NORM'} 2048 x {T} (mean of {count})")
    return rows


TBO = re.compile(r"^\s*(?P<op>[A-Z_]+)\(name=(?P<name>[^,]+),.*\):\s+(?P<runs>\d+) runs -\s+(?P<us>[0-9.]+) us/run")


def tbo_rows(path, version):
    sums = {}
    try:
        text = open(path, errors="replace").read()
    except OSError as e:
        fail(f"{path}: {e.strerror}")
    for raw in text.splitlines():
        m = TBO.match(raw)
        if not m:
            continue
        key = decode_name(m["name"])
        if key:
            us, parts = sums.get(key, (0.0, []))
            sums[key] = (us + float(m["us"]), parts + [m["name"].split("/")[3] if m["name"].count("/") == 3 else m["op"]])
    rows = []
    for (experiment, op, case), (us, parts) in sums.items():
        if op == "moe_experts" and sorted(parts) != ["down", "gate", "up"]:
            continue  # a run cut short: gate without up and down is not the op
        what = " + ".join(parts)
        rows.append({"experiment": experiment, "op": op, "case": case, "time_us": round(us, 3),
                     "name": f"llama.cpp Vulkan {'MUL_MAT_ID ' + what if op == 'moe_experts' else 'MUL_MAT'} alone",
                     "source": f"llama.cpp {version} test-backend-ops perf at this case's shape"})
    return rows


def kv(spec, what):
    """N[:ENGINE]=LOG: a token count or context, the llama.cpp configuration's name (e.g. KHR-only), the log."""
    key, sep, path = spec.partition("=")
    n, _, engine = key.partition(":")
    if not sep or not path or not n.isdigit() or int(n) < 1:
        fail(f"{what} takes N[:ENGINE]=LOG, got '{spec}'")
    return int(n), engine, path


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("cases")
    c.add_argument("out")
    p = sub.add_parser("peers")
    p.add_argument("--device", required=True)
    p.add_argument("--version", required=True)
    p.add_argument("--prefill", action="append", default=[])
    p.add_argument("--decode", action="append", default=[])
    p.add_argument("--tbo", action="append", default=[])
    p.add_argument("--out", required=True)
    a = ap.parse_args()
    if a.cmd == "cases":
        with open(a.out, "w") as f:
            f.write("\n".join(cases()) + "\n")
        return
    rows = []
    for spec in a.prefill:
        T, engine, path = kv(spec, "--prefill")
        rows += median_rows(graph_rows(b, T, 0, f"pp{T}", a.version, engine) for b in pick_blocks(graph_blocks(path), T, path))
    for i, spec in enumerate(a.decode):
        ctx, engine, path = kv(spec, "--decode")
        rows += median_rows(graph_rows(b, 1, ctx, f"decode (ctx {ctx})", a.version, engine, attention_only=i > 0)
                            for b in pick_blocks(graph_blocks(path), 1, path))
    for path in a.tbo:
        rows += tbo_rows(path, a.version)
    if not rows:
        fail("no llama.cpp op times found in the given logs")
    for r in rows:
        r["device"] = a.device
    about = (f"llama.cpp {a.version} per-op times measured on {a.device} in the same device call as the experiments "
             "(scripts/llama_ops.py)")
    with open(a.out, "w") as f:
        json.dump({"about": about, "measured": True, "peers": rows}, f, indent=1)
    print(f"llama_ops.py: {len(rows)} peer rows -> {a.out}")


if __name__ == "__main__":
    main()
