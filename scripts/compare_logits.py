#!/usr/bin/env python3
"""An engine's logits against the oracle's on the same model and token ids: relative L2 over every position and
the argmax agreement, one line per engine (the deviation column beside speed in the reports).

  compare_logits.py ORACLE.safetensors LABEL=LOGITS [LABEL=LOGITS ...]

ORACLE: `hybridlab run --out` (tensor `logits` [positions, vocab], the all-reference plan). LOGITS: the same from
another plan, or raw little-endian f32 [positions, vocab] as `../shared/peers/llama.cpp/logits` writes them."""
import json
import os
import struct
import sys

import numpy as np


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
    return np.frombuffer(data, dtype="<f4").reshape(rows, cols).astype(np.float64)


def read_logits(path, shape):
    if path.endswith(".safetensors"):
        return read_safetensors_logits(path)
    data = np.fromfile(path, dtype="<f4")
    if data.size != shape[0] * shape[1]:
        fail(f"{path}: {data.size} f32 values, the oracle's logits are {shape[0]} x {shape[1]}")
    return data.reshape(shape).astype(np.float64)


def compare(oracle, got):
    """(relative L2, argmax agreement, non-finite count) of got against oracle."""
    bad = int(np.size(got) - np.isfinite(got).sum())
    if bad:
        return float("nan"), float("nan"), bad
    rel = float(np.linalg.norm(got - oracle) / max(np.linalg.norm(oracle), 1e-300))
    agree = float(np.mean(np.argmax(got, axis=1) == np.argmax(oracle, axis=1)))
    return rel, agree, 0


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
