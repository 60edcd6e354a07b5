#!/usr/bin/env python3
"""An engine's logits against the oracle's on the same model and token ids: relative L2 over every position and
the argmax agreement, one line per engine (the deviation column beside speed in the reports).

  compare_logits.py ORACLE.safetensors LABEL=LOGITS [LABEL=LOGITS ...]

ORACLE: `hybridlab run --out` (tensor `logits` [positions, vocab], the all-reference plan). LOGITS: the same from
another plan, or raw little-endian f32 [positions, vocab] as `../shared/peers/llama.cpp/logits` writes them."""
import array
import json
import math
import os
import struct
import sys

try:
    import numpy as np
except ImportError:  # a machine without numpy (the GPU machine): the same numbers from the standard library, slower
    np = None


def fail(msg):
    print(f"compare_logits.py: {msg}", file=sys.stderr)
    sys.exit(2)


def read_safetensors_logits(path):
    if not os.path.isfile(path):
        fail(f"no file '{path}'")
    with open(path, "rb") as f:
        raw = f.read()
    if len(raw) < 8:
        fail(f"{path}: not a safetensors file")
    n = struct.unpack("<Q", raw[:8])[0]
    try:
        header = json.loads(raw[8:8 + n])
        t = header["logits"]
    except (ValueError, KeyError, TypeError):
        fail(f"{path}: no 'logits' tensor in its header")
    if t.get("dtype") != "F32" or len(t.get("shape", [])) != 2:
        fail(f"{path}: 'logits' is not a 2-d F32 tensor")
    a, b = t["data_offsets"]
    rows, cols = t["shape"]
    data = raw[8 + n + a:8 + n + b]
    if len(data) != rows * cols * 4:
        fail(f"{path}: 'logits' holds {len(data)} bytes, its shape needs {rows * cols * 4}")
    return as_matrix(data, rows, cols)


class Rows:
    """[rows, cols] f32 values without numpy: a flat array and its shape."""
    def __init__(self, flat, rows, cols):
        self.flat, self.shape = flat, (rows, cols)


def as_matrix(data, rows, cols):
    if np is not None:
        return np.frombuffer(data, dtype="<f4").reshape(rows, cols).astype(np.float64)
    flat = array.array("f")
    flat.frombytes(data)
    if sys.byteorder != "little":
        flat.byteswap()
    return Rows(flat, rows, cols)


def read_logits(path, shape):
    if path.endswith(".safetensors"):
        return read_safetensors_logits(path)
    with open(path, "rb") as f:
        data = f.read()
    if len(data) != shape[0] * shape[1] * 4:
        fail(f"{path}: {len(data) // 4} f32 values, the oracle's logits are {shape[0]} x {shape[1]}")
    return as_matrix(data, shape[0], shape[1])


def compare(oracle, got):
    """(relative L2, argmax agreement, non-finite count) of got against oracle."""
    if np is None:
        return compare_plain(oracle, got)
    bad = int(np.size(got) - np.isfinite(got).sum())
    if bad:
        return float("nan"), float("nan"), bad
    rel = float(np.linalg.norm(got - oracle) / max(np.linalg.norm(oracle), 1e-300))
    agree = float(np.mean(np.argmax(got, axis=1) == np.argmax(oracle, axis=1)))
    return rel, agree, 0


def compare_plain(oracle, got):
    rows, cols = oracle.shape
    o, g = oracle.flat, got.flat
    bad = sum(1 for v in g if not math.isfinite(v))
    if bad:
        return float("nan"), float("nan"), bad
    num = math.fsum((a - b) * (a - b) for a, b in zip(g, o))
    den = math.fsum(b * b for b in o)
    agree = 0
    for r in range(rows):
        lo, hi = r * cols, (r + 1) * cols
        go, oo = g[lo:hi], o[lo:hi]
        agree += go.index(max(go)) == oo.index(max(oo))
    return math.sqrt(num) / max(math.sqrt(den), 1e-300), agree / rows, 0


def main():
    if len(sys.argv) < 3:
        fail("usage: compare_logits.py ORACLE.safetensors LABEL=LOGITS [LABEL=LOGITS ...]")
    oracle = read_safetensors_logits(sys.argv[1])
    print(f"oracle: {sys.argv[1]}, {oracle.shape[0]} positions x {oracle.shape[1]} logits")
    for spec in sys.argv[2:]:
        if "=" not in spec:
            fail(f"'{spec}': give LABEL=LOGITS")
        label, path = spec.rsplit("=", 1)  # labels may hold '=' (a plan), paths rarely do
        if not os.path.isfile(path):
            fail(f"{label}: no file '{path}'")
        rel, agree, bad = compare(oracle, read_logits(path, oracle.shape))
        if bad:
            print(f"{label}: {bad} non-finite logits: no comparison")
        else:
            print(f"{label}: relative L2 {rel:.3e}, argmax agreement {agree:.4f}")


if __name__ == "__main__":
    main()
