#!/usr/bin/env python3
"""Writes the seed corpora of tests/fuzz/corpus/<name>/ (except gguf/: make_gguf_seeds.cpp) from golden/hf-tiny,
cut down to a few KB each. Run from the repository root: python3 tests/fuzz/make_seeds.py"""
import json
import os
import struct

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TINY = os.path.join(ROOT, "golden", "hf-tiny")
OUT = os.path.join(ROOT, "tests", "fuzz", "corpus")


def write(name, file, data):
    os.makedirs(os.path.join(OUT, name), exist_ok=True)
    with open(os.path.join(OUT, name, file), "wb") as f:
        f.write(data if isinstance(data, bytes) else data.encode())


def safetensors(header, data):
    """The writer's layout: u64 header length, JSON header padded with spaces to 8 bytes, data."""
    h = json.dumps(header, separators=(",", ":")).encode()
    h += b" " * ((8 - len(h) % 8) % 8)
    return struct.pack("<Q", len(h)) + h + data


def cut_real(path, names):
    """The named tensors of a real checkpoint file, re-packed with their bytes, header order kept."""
    with open(path, "rb") as f:
        blob = f.read()
    n = struct.unpack("<Q", blob[:8])[0]
    header = json.loads(blob[8 : 8 + n])
    base = 8 + n
    out, data = {"__metadata__": header.get("__metadata__", {})}, b""
    for name in names:
        e = header[name]
        a, b = e["data_offsets"]
        out[name] = {"dtype": e["dtype"], "shape": e["shape"], "data_offsets": [len(data), len(data) + b - a]}
        data += blob[base + a : base + b]
    return safetensors(out, data)


# safetensors: a cut of the real hf-tiny checkpoint, every dtype, and the smallest valid file.
write("safetensors", "hf_tiny_cut.safetensors",
      cut_real(os.path.join(TINY, "model", "model.safetensors"),
               ["model.layers.0.linear_attn.A_log", "model.layers.0.linear_attn.dt_bias",
                "model.layers.0.input_layernorm.weight"]))
write("safetensors", "official_bf16_cut.safetensors",
      cut_real(os.path.join(TINY, "official-layout", "model-00002-of-00002.safetensors"),
               ["model.language_model.layers.2.linear_attn.A_log", "model.language_model.layers.2.linear_attn.norm.weight"]))
dt = {"F64": ("<d", [1.5, -2.0]), "F32": ("<f", [0.25]), "F16": ("<e", [1.0, -0.5, 65504.0]),
      "BF16": (None, [0x3F80, 0xC000]), "I64": ("<q", [7, -1]), "I32": ("<i", [3]), "U8": ("<B", [1, 2, 255])}
header, data = {"__metadata__": {"format": "pt", "note": "every dtype"}}, b""
for name, (fmt, vals) in dt.items():
    raw = b"".join(struct.pack("<H", v) if fmt is None else struct.pack(fmt, v) for v in vals)
    header[name.lower()] = {"dtype": name, "shape": [len(vals)], "data_offsets": [len(data), len(data) + len(raw)]}
    data += raw
header["scalar"] = {"dtype": "F32", "shape": [], "data_offsets": [len(data), len(data) + 4]}
data += struct.pack("<f", 3.0)
header["empty"] = {"dtype": "F32", "shape": [0, 4], "data_offsets": [len(data), len(data)]}
header["matrix"] = {"dtype": "F32", "shape": [2, 1, 2], "data_offsets": [len(data), len(data) + 16]}
data += struct.pack("<4f", 1, 2, 3, 4)
write("safetensors", "every_dtype.safetensors", safetensors(header, data))
write("safetensors", "empty_header.safetensors", struct.pack("<Q", 2) + b"{}")

# safetensors_index: the real two-shard index cut to a few entries, naming the fuzz target's shards.
index = json.load(open(os.path.join(TINY, "official-layout", "model.safetensors.index.json")))
wm = index["weight_map"]
write("safetensors_index", "official_cut.json", json.dumps(
    {"metadata": index["metadata"], "weight_map": {k: wm[k] for k in list(wm)[:3] + list(wm)[-2:]}}, indent=2))
write("safetensors_index", "two_shards.json", json.dumps(
    {"metadata": {"total_size": 48}, "weight_map": {"a.weight": "model-00001-of-00002.safetensors",
                                                    "b.weight": "model-00002-of-00002.safetensors",
                                                    "ids": "model-00002-of-00002.safetensors"}}))
write("safetensors_index", "one_shard.json", json.dumps({"weight_map": {"a.weight": "model-00001-of-00002.safetensors"}}))

# config: the flat text config, the nested qwen3_5_moe wrapper, and the interval rule with legacy rope fields.
flat = open(os.path.join(TINY, "model", "config.json")).read()
write("config", "hf_tiny.json", flat)
write("config", "official_nested.json", open(os.path.join(TINY, "official-layout", "config.json")).read())
c = json.loads(flat)
del c["layer_types"], c["rope_parameters"]
c.update(full_attention_interval=2, rope_theta=10000.0, partial_rotary_factor=0.5, tie_word_embeddings=True)
write("config", "interval_legacy_rope.json", json.dumps(c))

# tokens: ids separated by any whitespace.
write("tokens", "cli.txt", "5 17 300 2 2 9 511 0\n")
write("tokens", "whitespace.txt", " 1\t2\n\n3 \r\n40\v7\f 2147483647")
write("tokens", "one.txt", "0")

# plan: --ops strings as the README and the tests write them.
plans = ["*=vulkan", "*=vulkan,ssm_scan=vulkan:per_token", "matmul=reference",
         " ssm_scan = reference , moe_experts=reference,", "*=reference,rmsnorm=vulkan", "lm_head=vulkan:rowdot"]
for i, p in enumerate(plans):
    write("plan", f"plan{i}.txt", p)
