#!/usr/bin/env python3
"""Reads a GGUF file that hybridlab wrote with gguf-py (llama.cpp's own reader, the `gguf` package pinned in
scripts/requirements-tools.txt) and checks it against gguf-py's tables for arch qwen35moe:

- every key is one gguf-py knows (gguf.Keys), and has the type gguf-py's GGUFWriter gives that key (the add_* method
  convert_hf_to_gguf.py calls for it is called on a scratch writer with the file's value and the types compared);
- the keys llama.cpp's qwen35moe loader and its vocabulary loader require are present, and the vocabulary is one
  llama.cpp accepts (tokenizer.ggml.model gpt2, a known pre-tokenizer, one distinct token per embedding row, a type
  per token, merges, special ids inside the vocabulary, <arch>.vocab_size equal to the embedding's rows);
- every tensor name is one of gguf-py's TENSOR_NAMES for MODEL_TENSORS[QWEN35MOE] (blocks below block_count), every
  tensor a block of its kind needs is there, and the embedding and norms have the shapes the metadata implies;
- --reference F32.gguf: every tensor, dequantized by gguf-py (gguf.quants), is within its type's rounding of the
  same tensor of an f32 file of the same model;
- --tokenizer DIR: the vocabulary is what llama.cpp's converter makes of DIR's tokenizer files (tokens and types by
  convert_hf_to_gguf.py's rules, merges, special ids, add_*_token flags and chat template by gguf-py's SpecialVocab);
- --placeholder: the vocabulary is hybridlab's placeholder (docs/running.md).

usage: gguf_py_check.py FILE.gguf [--reference F32.gguf] [--tokenizer DIR | --placeholder]
Prints one line per file; exits 1 listing every problem found."""
import argparse
import importlib.metadata
import json
import sys
from pathlib import Path

import numpy as np

import gguf
from gguf import GGUFReader, GGUFValueType, GGUFWriter, Keys, MODEL_ARCH, MODEL_TENSOR, TokenType

ARCH = gguf.MODEL_ARCH_NAMES[MODEL_ARCH.QWEN35MOE]

# Key -> the GGUFWriter method convert_hf_to_gguf.py writes it with (None: the method takes no value).
def key_methods():
    a = lambda k: k.format(arch=ARCH)  # noqa: E731
    L, At, R, S, T, G = Keys.LLM, Keys.Attention, Keys.Rope, Keys.SSM, Keys.Tokenizer, Keys.General
    return {
        G.ARCHITECTURE: 'add_architecture', G.TYPE: 'add_type', G.NAME: 'add_name', G.FILE_TYPE: 'add_file_type',
        G.QUANTIZATION_VERSION: 'add_quantization_version', G.ALIGNMENT: 'add_custom_alignment',
        a(L.VOCAB_SIZE): 'add_vocab_size', a(L.CONTEXT_LENGTH): 'add_context_length',
        a(L.EMBEDDING_LENGTH): 'add_embedding_length', a(L.BLOCK_COUNT): 'add_block_count',
        a(L.EXPERT_COUNT): 'add_expert_count', a(L.EXPERT_USED_COUNT): 'add_expert_used_count',
        a(L.EXPERT_FEED_FORWARD_LENGTH): 'add_expert_feed_forward_length',
        a(L.EXPERT_SHARED_FEED_FORWARD_LENGTH): 'add_expert_shared_feed_forward_length',
        a(L.FULL_ATTENTION_INTERVAL): 'add_full_attention_interval', a(L.NEXTN_PREDICT_LAYERS): 'add_nextn_predict_layers',
        a(At.HEAD_COUNT): 'add_head_count', a(At.HEAD_COUNT_KV): 'add_head_count_kv',
        a(At.LAYERNORM_RMS_EPS): 'add_layer_norm_rms_eps', a(At.KEY_LENGTH): 'add_key_length',
        a(At.VALUE_LENGTH): 'add_value_length', a(R.FREQ_BASE): 'add_rope_freq_base',
        a(R.DIMENSION_COUNT): 'add_rope_dimension_count', a(R.DIMENSION_SECTIONS): 'add_rope_dimension_sections',
        a(S.CONV_KERNEL): 'add_ssm_conv_kernel', a(S.INNER_SIZE): 'add_ssm_inner_size',
        a(S.STATE_SIZE): 'add_ssm_state_size', a(S.TIME_STEP_RANK): 'add_ssm_time_step_rank',
        a(S.GROUP_COUNT): 'add_ssm_group_count',
        T.MODEL: 'add_tokenizer_model', T.PRE: 'add_tokenizer_pre', T.LIST: 'add_token_list',
        T.TOKEN_TYPE: 'add_token_types', T.MERGES: 'add_token_merges', T.SCORES: 'add_token_scores',
        T.BOS_ID: 'add_bos_token_id', T.EOS_ID: 'add_eos_token_id', T.UNK_ID: 'add_unk_token_id',
        T.SEP_ID: 'add_sep_token_id', T.PAD_ID: 'add_pad_token_id', T.MASK_ID: 'add_mask_token_id',
        T.ADD_BOS: 'add_add_bos_token', T.ADD_EOS: 'add_add_eos_token', T.ADD_SEP: 'add_add_sep_token',
        T.CHAT_TEMPLATE: 'add_chat_template',
    }

# What llama.cpp needs to load the file: its qwen35moe hyperparameters and a gpt2 vocabulary.
REQUIRED = [Keys.General.ARCHITECTURE] + [k.format(arch=ARCH) for k in (
    Keys.LLM.BLOCK_COUNT, Keys.LLM.CONTEXT_LENGTH, Keys.LLM.EMBEDDING_LENGTH, Keys.Attention.HEAD_COUNT,
    Keys.Attention.HEAD_COUNT_KV, Keys.Attention.LAYERNORM_RMS_EPS, Keys.Attention.KEY_LENGTH,
    Keys.Attention.VALUE_LENGTH, Keys.LLM.EXPERT_COUNT, Keys.LLM.EXPERT_USED_COUNT,
    Keys.LLM.EXPERT_FEED_FORWARD_LENGTH, Keys.LLM.EXPERT_SHARED_FEED_FORWARD_LENGTH, Keys.SSM.CONV_KERNEL,
    Keys.SSM.STATE_SIZE, Keys.SSM.GROUP_COUNT, Keys.SSM.TIME_STEP_RANK, Keys.SSM.INNER_SIZE,
    Keys.LLM.FULL_ATTENTION_INTERVAL, Keys.Rope.DIMENSION_COUNT, Keys.Rope.DIMENSION_SECTIONS,
    Keys.LLM.VOCAB_SIZE)] + [Keys.Tokenizer.MODEL, Keys.Tokenizer.PRE, Keys.Tokenizer.LIST,
                             Keys.Tokenizer.TOKEN_TYPE, Keys.Tokenizer.MERGES]

SPECIAL_KEYS = {'bos': Keys.Tokenizer.BOS_ID, 'eos': Keys.Tokenizer.EOS_ID, 'unk': Keys.Tokenizer.UNK_ID,
                'sep': Keys.Tokenizer.SEP_ID, 'pad': Keys.Tokenizer.PAD_ID, 'mask': Keys.Tokenizer.MASK_ID}
ADD_KEYS = {'bos': Keys.Tokenizer.ADD_BOS, 'eos': Keys.Tokenizer.ADD_EOS, 'sep': Keys.Tokenizer.ADD_SEP}

# llama.cpp's names for the split regexes of Qwen's tokenizers (llama-vocab.cpp).
SPLITS = {
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+": 'qwen2',
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?[\p{L}\p{M}]+|\p{N}| ?[^\s\p{L}\p{M}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+": 'qwen35',
}

# Relative L2 of a dequantized tensor from its f32 original: round to nearest at each type's precision, with room.
TOLERANCE = {'F32': 0.0, 'F16': 2e-3, 'BF16': 1e-2, 'Q8_0': 2e-2, 'Q6_K': 5e-2, 'Q5_K': 8e-2, 'Q5_0': 8e-2,
             'Q5_1': 8e-2, 'Q4_K': 0.15}

GATED_DELTANET = [MODEL_TENSOR.ATTN_QKV, MODEL_TENSOR.ATTN_GATE, MODEL_TENSOR.SSM_BETA, MODEL_TENSOR.SSM_ALPHA,
                  MODEL_TENSOR.SSM_CONV1D, MODEL_TENSOR.SSM_DT, MODEL_TENSOR.SSM_A, MODEL_TENSOR.SSM_NORM,
                  MODEL_TENSOR.SSM_OUT]
FULL_ATTENTION = [MODEL_TENSOR.ATTN_Q, MODEL_TENSOR.ATTN_K, MODEL_TENSOR.ATTN_V, MODEL_TENSOR.ATTN_OUT,
                  MODEL_TENSOR.ATTN_Q_NORM, MODEL_TENSOR.ATTN_K_NORM]
EVERY_BLOCK = [MODEL_TENSOR.ATTN_NORM, MODEL_TENSOR.ATTN_POST_NORM, MODEL_TENSOR.FFN_GATE_INP,
               MODEL_TENSOR.FFN_GATE_EXP, MODEL_TENSOR.FFN_UP_EXP, MODEL_TENSOR.FFN_DOWN_EXP,
               MODEL_TENSOR.FFN_GATE_INP_SHEXP, MODEL_TENSOR.FFN_GATE_SHEXP, MODEL_TENSOR.FFN_UP_SHEXP,
               MODEL_TENSOR.FFN_DOWN_SHEXP]


def values(reader):
    return {name: f.contents() for name, f in reader.fields.items() if not name.startswith('GGUF.')}


def check_keys(reader, kv, problems):
    methods = key_methods()
    scratch = GGUFWriter(None, ARCH)
    for name, field in reader.fields.items():
        if name.startswith('GGUF.'):
            continue
        if name not in methods:
            problems.append(f'key {name} is not in gguf-py\'s tables for {ARCH}')
            continue
        if methods[name] != 'add_architecture':  # the writer sets general.architecture itself
            getattr(scratch, methods[name])(kv[name])
        want = scratch.kv_data[0][name]
        have = [GGUFValueType(t) for t in field.types]
        want_types = [want.type]
        if want.type == GGUFValueType.ARRAY:
            want_types.append(want.sub_type or GGUFValueType.get_type(want.value[0]))
        if have != want_types:
            problems.append(f'key {name} has type {[t.name for t in have]}, gguf-py writes {[t.name for t in want_types]}')
    for k in REQUIRED:
        if k not in kv:
            problems.append(f'key {k} is missing (llama.cpp needs it)')


def check_vocab(kv, n_vocab, problems):
    tokens, types = kv.get(Keys.Tokenizer.LIST, []), kv.get(Keys.Tokenizer.TOKEN_TYPE, [])
    if kv.get(Keys.Tokenizer.MODEL) != 'gpt2':
        problems.append(f'tokenizer.ggml.model is {kv.get(Keys.Tokenizer.MODEL)!r}, not gpt2')
    if kv.get(Keys.Tokenizer.PRE) not in SPLITS.values():
        problems.append(f'tokenizer.ggml.pre is {kv.get(Keys.Tokenizer.PRE)!r}, not one of {sorted(SPLITS.values())}')
    if len(tokens) != n_vocab:
        problems.append(f'{len(tokens)} tokens for an embedding of {n_vocab} rows')
    if len(set(tokens)) != len(tokens):
        problems.append('token strings repeat (llama.cpp asserts they are distinct)')
    if len(types) != len(tokens):
        problems.append(f'{len(types)} token types for {len(tokens)} tokens')
    if not set(types) <= {int(t) for t in TokenType}:
        problems.append(f'token types outside gguf-py\'s TokenType: {sorted(set(types) - {int(t) for t in TokenType})}')
    merges = kv.get(Keys.Tokenizer.MERGES, [])
    if not merges or any(' ' not in m[1:] for m in merges):
        problems.append('merges missing, empty or without a space separating the pair')
    if kv.get(Keys.LLM.VOCAB_SIZE.format(arch=ARCH)) != n_vocab:
        problems.append(f'{ARCH}.vocab_size is {kv.get(Keys.LLM.VOCAB_SIZE.format(arch=ARCH))}, the embedding has {n_vocab} rows')
    for kind, key in SPECIAL_KEYS.items():
        if key in kv and not 0 <= kv[key] < n_vocab:
            problems.append(f'{key} = {kv[key]} is outside the {n_vocab} tokens')


def check_tensors(reader, kv, problems):
    n_blocks = kv[Keys.LLM.BLOCK_COUNT.format(arch=ARCH)]
    interval = kv[Keys.LLM.FULL_ATTENTION_INTERVAL.format(arch=ARCH)]
    hidden = kv[Keys.LLM.EMBEDDING_LENGTH.format(arch=ARCH)]
    names = gguf.TENSOR_NAMES
    allowed = set()
    for t in gguf.MODEL_TENSORS[MODEL_ARCH.QWEN35MOE]:
        allowed |= {names[t].format(bid=b) for b in range(n_blocks)} if '{bid}' in names[t] else {names[t]}
    have = {}
    for t in reader.tensors:
        base = t.name.rsplit('.', 1)[0] if t.name.endswith(('.weight', '.bias')) else t.name
        have[base] = t
        if base not in allowed:
            problems.append(f'tensor {t.name} is not a {ARCH} tensor name in gguf-py\'s tables')
        if not isinstance(t.tensor_type, gguf.GGMLQuantizationType):
            problems.append(f'tensor {t.name} has type {t.tensor_type}, not a GGML type')
    need = [names[MODEL_TENSOR.TOKEN_EMBD], names[MODEL_TENSOR.OUTPUT_NORM]]
    for b in range(n_blocks):
        kinds = EVERY_BLOCK + (FULL_ATTENTION if (b + 1) % interval == 0 else GATED_DELTANET)
        need += [names[k].format(bid=b) for k in kinds]
    for n in need:
        if n not in have:
            problems.append(f'tensor {n} is missing')
    embd = have.get(names[MODEL_TENSOR.TOKEN_EMBD])
    if embd is not None and list(embd.shape[:1]) != [hidden]:
        problems.append(f'token_embd has shape {list(embd.shape)}, expected [{hidden}, vocab]')
    for n in [names[MODEL_TENSOR.OUTPUT_NORM]] + [names[MODEL_TENSOR.ATTN_NORM].format(bid=b) for b in range(n_blocks)]:
        if n in have and list(have[n].shape) != [hidden]:
            problems.append(f'{n} has shape {list(have[n].shape)}, expected [{hidden}]')
    return int(embd.shape[1]) if embd is not None and len(embd.shape) > 1 else 0


def check_against(reader, ref_path, problems):
    ref = {t.name: t for t in GGUFReader(ref_path).tensors}
    worst = {}
    for t in reader.tensors:
        r = ref.get(t.name)
        if r is None:
            problems.append(f'tensor {t.name} is not in the reference {ref_path}')
            continue
        got = gguf.quants.dequantize(t.data, t.tensor_type).astype(np.float64).reshape(-1)
        want = np.asarray(r.data, dtype=np.float32).astype(np.float64).reshape(-1)
        if got.size != want.size:
            problems.append(f'tensor {t.name}: {got.size} values, the reference has {want.size}')
            continue
        rel = float(np.linalg.norm(got - want) / max(np.linalg.norm(want), 1e-30))
        name = t.tensor_type.name
        worst[name] = max(worst.get(name, 0.0), rel)
        if not rel <= TOLERANCE.get(name, 0.0):
            problems.append(f'tensor {t.name} ({name}) dequantizes {rel:.3e} away from the reference (tolerance {TOLERANCE.get(name)})')
    return ', '.join(f'{k} {v:.1e}' for k, v in sorted(worst.items()))


def looks_special(t):  # convert_hf_to_gguf.py's does_token_look_special
    return (t in ('<pad>', '<mask>', '<2mass>', '[@BOS@]') or (t.startswith('<|') and t.endswith('|>'))
            or (t.startswith('<｜') and t.endswith('｜>')) or (t.startswith('<unused') and t.endswith('>')))


def check_tokenizer(kv, n_vocab, tok_dir, problems):
    tok = json.loads((Path(tok_dir) / 'tokenizer.json').read_text(encoding='utf-8'))
    # Tokens and types: convert_hf_to_gguf.py's get_vocab_base on what AutoTokenizer would report.
    reverse = {i: t for t, i in tok['model']['vocab'].items()}
    added = {a['id']: a for a in tok.get('added_tokens', [])}
    for i, a in added.items():
        reverse[i] = a['content']
    tokens, types = [], []
    for i in range(n_vocab):
        if i not in reverse:
            tokens.append(f'[PAD{i}]'), types.append(int(TokenType.UNUSED))
        elif i in added:
            special = added[i].get('special', False) or looks_special(reverse[i])
            tokens.append(reverse[i] if special else reverse[i].replace('\u2581', ' '))
            types.append(int(TokenType.CONTROL if special else TokenType.USER_DEFINED))
        else:
            tokens.append(reverse[i]), types.append(int(TokenType.NORMAL))
    if kv.get(Keys.Tokenizer.LIST) != tokens:
        problems.append('tokens differ from the converter\'s reading of tokenizer.json')
    if kv.get(Keys.Tokenizer.TOKEN_TYPE) != types:
        problems.append('token types differ from the converter\'s reading of tokenizer.json')
    splits = [p['pattern']['Regex'] for p in tok['pre_tokenizer'].get('pretokenizers', [tok['pre_tokenizer']])
              if p.get('type') == 'Split']
    if kv.get(Keys.Tokenizer.PRE) != SPLITS.get(splits[0] if splits else None):
        problems.append(f'tokenizer.ggml.pre is {kv.get(Keys.Tokenizer.PRE)!r}, the split regex says {SPLITS.get(splits[0] if splits else None)!r}')
    # Merges, special ids, add_*_token and the chat template: gguf-py's SpecialVocab, as the converter uses it.
    sv = gguf.SpecialVocab(tok_dir, load_merges=True, n_vocab=n_vocab)
    if kv.get(Keys.Tokenizer.MERGES) != sv.merges:
        problems.append(f'merges differ from SpecialVocab\'s ({len(kv.get(Keys.Tokenizer.MERGES, []))} vs {len(sv.merges)})')
    ids = {k: v for k, v in sv.special_token_ids.items() if k in SPECIAL_KEYS}
    have_ids = {k: kv[key] for k, key in SPECIAL_KEYS.items() if key in kv}
    if have_ids != ids:
        problems.append(f'special token ids {have_ids}, SpecialVocab says {ids}')
    adds = {k: v for k, v in sv.add_special_token.items() if k in ADD_KEYS}
    have_adds = {k: kv[key] for k, key in ADD_KEYS.items() if key in kv}
    if have_adds != adds:
        problems.append(f'add_*_token flags {have_adds}, SpecialVocab says {adds}')
    if kv.get(Keys.Tokenizer.CHAT_TEMPLATE) != sv.chat_template:
        problems.append('chat template differs from SpecialVocab\'s')


def check_placeholder(kv, n_vocab, problems):
    tokens, types = kv.get(Keys.Tokenizer.LIST, []), kv.get(Keys.Tokenizer.TOKEN_TYPE, [])
    if not tokens or tokens[-1] != '<|endoftext|>' or types[-1] != int(TokenType.CONTROL):
        problems.append('the placeholder\'s last token is not <|endoftext|> (CONTROL)')
    for key in (Keys.Tokenizer.BOS_ID, Keys.Tokenizer.EOS_ID, Keys.Tokenizer.PAD_ID):
        if kv.get(key) != n_vocab - 1:
            problems.append(f'{key} = {kv.get(key)}, the placeholder puts it on the last token {n_vocab - 1}')
    if kv.get(Keys.Tokenizer.PRE) != 'qwen2' or kv.get(Keys.Tokenizer.ADD_BOS) is not False:
        problems.append('the placeholder is pre-tokenizer qwen2 with add_bos_token false')


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('file')
    ap.add_argument('--reference')
    group = ap.add_mutually_exclusive_group()
    group.add_argument('--tokenizer')
    group.add_argument('--placeholder', action='store_true')
    args = ap.parse_args()
    problems = []
    reader = GGUFReader(args.file)
    kv = values(reader)
    if kv.get(Keys.General.ARCHITECTURE) != ARCH:
        problems.append(f'general.architecture is {kv.get(Keys.General.ARCHITECTURE)!r}, not {ARCH}')
    check_keys(reader, kv, problems)
    n_vocab = check_tensors(reader, kv, problems) if not any('is missing' in p for p in problems) else 0
    check_vocab(kv, n_vocab, problems)
    worst = check_against(reader, args.reference, problems) if args.reference else ''
    if args.tokenizer:
        check_tokenizer(kv, n_vocab, args.tokenizer, problems)
    if args.placeholder:
        check_placeholder(kv, n_vocab, problems)
    name = Path(args.file).name
    if problems:
        print(f'FAIL {name}: ' + '; '.join(problems))
        return 1
    print(f'ok   {name} (gguf-py {importlib.metadata.version("gguf")}): {len(kv)} keys, {len(reader.tensors)} tensors, '
          f'vocabulary {kv[Keys.Tokenizer.MODEL]}/{kv[Keys.Tokenizer.PRE]} of {n_vocab} tokens, {len(kv[Keys.Tokenizer.MERGES])} merges'
          + (f'; dequantized vs f32: {worst}' if worst else ''))
    return 0


if __name__ == '__main__':
    sys.exit(main())
