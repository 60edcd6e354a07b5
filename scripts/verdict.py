"""Verdicts on one experiment case: which variant is fastest, by how much, and which timings are too noisy to claim
anything from. Used by report.py (each case's verdict line, the summary it prints, the index) and tested on recorded
inputs (tests/reports/test_verdict.py).

Rules:
- device classes are ranked apart: GPU variants (hand-written Vulkan, Halide's Vulkan) among themselves; CPU ones
  (the reference, Halide's CPU schedules) among themselves;
- a variant is represented by its fastest passing configuration (sweep point) that is not noisy;
- noisy: the spread of a timing, (p90 - p10) / median (or (max - min) / median where the report has no percentiles),
  exceeds NOISE_BOUND; a noisy timing is named but never ranked or used for a speed-up;
- margins are time ratios (>1: the best is that much faster): over the runner-up of its class, over the variant the
  default plan runs (`default_variant`, what `*=vulkan` runs for the case: the family default followed where it
  delegates, `default_family_variant`) and over the reference;
- peers (llama.cpp's op at this case's shape): the fastest GPU variant against each peer row measured in the same run
  (`measured`), unless the peer's own range over its evaluations (`range_us`) exceeds NOISE_BOUND of its median;
  quoted peers (experiments/anchors.json, another day's numbers) are shown but never compared.
"""

NOISE_BOUND = 0.25


def spread(result):
    t = result.get("time_us") or {}
    med = t.get("median")
    if not med:
        return None
    if "p10" in t and "p90" in t:
        return (t["p90"] - t["p10"]) / med
    if "min" in t and "max" in t:
        return (t["max"] - t["min"]) / med
    return None


def noisy(result):
    s = spread(result)
    return s is not None and s > NOISE_BOUND


def device_class(result):
    return "GPU" if str(result.get("where", "")).startswith("GPU") else "CPU"


def _timed(case):
    return [r for r in case.get("results", []) if r.get("status") in ("pass", "reference") and r.get("time_us")]


def _params(result):
    p = result.get("params") or {}
    return " ".join(f"{k.split('.')[-1]}={v}" for k, v in sorted(p.items()))


def _rank(results):
    """The fastest quiet configuration of each variant, fastest first; and the variants with only noisy timings."""
    best, loud = {}, set()
    for r in results:
        name = r["variant"]
        if noisy(r):
            loud.add(name)
            continue
        if name not in best or r["time_us"]["median"] < best[name]["time_us"]["median"]:
            best[name] = r
    ranked = sorted(best.values(), key=lambda r: r["time_us"]["median"])
    return ranked, sorted(loud - set(best))


def verdict(case):
    """{'GPU': {...}, 'CPU': {...}} for the classes present: best (result), runner_up (result or None), and the margins
    vs_runner_up, vs_default, vs_reference (None where not applicable); noisy: variant names left unranked."""
    timed = _timed(case)
    ref = next((r for r in timed if r.get("status") == "reference" and not noisy(r)), None)
    out = {}
    for cls in ("GPU", "CPU"):
        ranked, loud = _rank([r for r in timed if device_class(r) == cls])
        if not ranked and not loud:
            continue
        v = {"best": ranked[0] if ranked else None, "runner_up": ranked[1] if len(ranked) > 1 else None, "noisy": loud,
             "vs_runner_up": None, "vs_default": None, "vs_reference": None, "default": None}
        b = v["best"]
        if b:
            t = b["time_us"]["median"]
            if v["runner_up"]:
                v["vs_runner_up"] = v["runner_up"]["time_us"]["median"] / t
            d = case.get("default_variant")
            if cls == "GPU" and d:
                # The default is the default variant at the profile's tuning (no swept params), not its best point.
                quiet = [r for r in timed if device_class(r) == cls and not noisy(r)]
                dr = next((r for r in quiet if r["variant"] == d and not r.get("params")), None)
                dr = dr or next((r for r in ranked if r["variant"] == d), None)
                v["default"] = d
                if dr is not None and dr is not b:
                    v["vs_default"] = dr["time_us"]["median"] / t
            if ref is not None and b is not ref:
                v["vs_reference"] = ref["time_us"]["median"] / t
        if cls == "GPU":
            measured = [p for p in case.get("peers", []) if p.get("measured") and p.get("time_us")]
            v["vs_peers"] = [(p, p["time_us"] / b["time_us"]["median"]) for p in measured if b and not peer_noisy(p)]
            v["noisy_peers"] = [p for p in measured if peer_noisy(p)]
        out[cls] = v
    return out


def peer_noisy(p):
    """A peer measured over several evaluations (range_us) whose range exceeds NOISE_BOUND of its median."""
    r = p.get("range_us")
    return bool(r) and (r[1] - r[0]) / p["time_us"] > NOISE_BOUND


def _name(r):
    p = _params(r)
    return f"`{r['variant']}`" + (f" ({p})" if p else "")


def verdict_line(case):
    """One markdown line: the GPU verdict, then the CPU one, then what was too noisy to rank."""
    v = verdict(case)
    parts = []
    for cls in ("GPU", "CPU"):
        c = v.get(cls)
        if not c:
            continue
        b = c["best"]
        if b is None:
            parts.append(f"{cls}: no quiet timing")
            continue
        is_default = cls == "GPU" and b["variant"] == c["default"] and not b.get("params")
        s = f"{cls}: {_name(b)}{' (the default)' if is_default else ''} {b['time_us']['median']:.2f} us"
        if c["runner_up"] is not None:
            s += f", {c['vs_runner_up']:.2f}x the runner-up {_name(c['runner_up'])}"
        else:
            s += ", the only quiet one"
        if c["vs_default"] is not None:
            via = case.get("default_family_variant")
            at = " at the profile's tuning" if b["variant"] == c["default"] else ""
            s += f", {c['vs_default']:.2f}x the default `{c['default']}`{at}" + (f" (what `{via}` runs here)" if via else "")
        if c["vs_reference"] is not None:
            s += f", {c['vs_reference']:.3g}x the reference"
        for p, ratio in c.get("vs_peers", []):
            s += f", {ratio:.2f}x {p['name']} ({p['time_us']:.2f} us, same run)"
        for p in c.get("noisy_peers", []):
            s += f"; {p['name']} noisy ({p['range_us'][0]:.1f}..{p['range_us'][1]:.1f} us), not compared"
        parts.append(s)
    loud = sorted({n for c in v.values() for n in c["noisy"]})
    line = "**Verdict** " + ("; ".join(parts) if parts else "nothing timed") + "."
    if loud:
        line += (f" Noisy (spread over {NOISE_BOUND:.0%} of the median), not ranked: "
                 + ", ".join(f"`{n}`" for n in loud) + ".")
    return line


def peer_cell(v):
    """The measured peers of a case with the best GPU variant's margin: '12.9 (0.72x), KHR 13.4 (0.75x), alone ...'."""
    out = []
    for p, ratio in (v.get("GPU") or {}).get("vs_peers", []):
        kind = "alone " if "test-backend-ops" in p.get("source", "") else "KHR " if "KHR-only" in p["name"] else ""
        out.append(f"{kind}{p['time_us']:.1f} ({ratio:.2f}x)")
    return ", ".join(out)
