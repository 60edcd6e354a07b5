#!/usr/bin/env python3
"""Writes tokenizer.json and tokenizer_config.json here: a small byte-level BPE tokenizer in the layout of Qwen3.5's
(the pre-tokenizer's split regex, ByteLevel, pair-format merges, <|...|> special tokens, a non-special <think>),
trained by a few rounds of BPE on a fixed text, with ids that fit hf-tiny's 512 embedding rows and leave rows that no
token names. Used by the GGUF vocabulary tests (test_gguf_model.cpp, test_gguf_py.sh). Deterministic: rerunning it
rewrites the same bytes."""
import json
import re
from collections import Counter

QWEN35_SPLIT = r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?[\p{L}\p{M}]+|\p{N}| ?[^\s\p{L}\p{M}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"
TEXT = ("the quick brown fox jumps over the lazy dog while the other dogs sleep in the sun and the fox "
        "thinks that the dogs are lazy; then the fox runs into the forest, and the dogs wake up")


def byte_alphabet():
    printable = [b for b in range(256) if 33 <= b <= 126 or 161 <= b <= 172 or b >= 174]
    chars = {b: chr(b) for b in printable}
    n = 0
    for b in range(256):
        if b not in chars:
            chars[b] = chr(256 + n)
            n += 1
    return [chars[b] for b in printable] + [chars[b] for b in range(256) if b not in printable], chars


order, byte_char = byte_alphabet()
vocab = {c: i for i, c in enumerate(order)}
words = [''.join(byte_char[b] for b in w.encode()) for w in re.findall(r' ?\S+', TEXT)]
seqs = [list(w) for w in words]
merges = []
for _ in range(40):
    pairs = Counter()
    for s in seqs:
        pairs.update(zip(s, s[1:]))
    if not pairs:
        break
    (a, b), _ = max(pairs.items(), key=lambda kv: (kv[1], kv[0]))
    merges.append([a, b])
    vocab.setdefault(a + b, len(vocab))
    for s in seqs:
        i = 0
        while i < len(s) - 1:
            if s[i] == a and s[i + 1] == b:
                s[i:i + 2] = [a + b]
            i += 1

added = [(500, '<|endoftext|>', True), (501, '<|im_start|>', True), (502, '<|im_end|>', True), (503, '<think>', False),
         (504, '</think>', False)]
tok = {
    'version': '1.0', 'truncation': None, 'padding': None,
    'added_tokens': [{'id': i, 'content': c, 'single_word': False, 'lstrip': False, 'rstrip': False,
                      'normalized': False, 'special': s} for i, c, s in added],
    'normalizer': {'type': 'NFC'},
    'pre_tokenizer': {'type': 'Sequence', 'pretokenizers': [
        {'type': 'Split', 'pattern': {'Regex': QWEN35_SPLIT}, 'behavior': 'Isolated', 'invert': False},
        {'type': 'ByteLevel', 'add_prefix_space': False, 'trim_offsets': False, 'use_regex': False}]},
    'post_processor': {'type': 'ByteLevel', 'add_prefix_space': False, 'trim_offsets': False, 'use_regex': False},
    'decoder': {'type': 'ByteLevel', 'add_prefix_space': False, 'trim_offsets': False, 'use_regex': False},
    'model': {'type': 'BPE', 'dropout': None, 'unk_token': None, 'continuing_subword_prefix': '',
              'end_of_word_suffix': '', 'fuse_unk': False, 'byte_fallback': False, 'ignore_merges': False,
              'vocab': vocab, 'merges': merges},
}
cfg = {
    'add_bos_token': False, 'add_prefix_space': False, 'bos_token': None, 'eos_token': '<|im_end|>',
    'pad_token': '<|endoftext|>', 'unk_token': None, 'errors': 'replace', 'model_max_length': 262144,
    'tokenizer_class': 'Qwen2Tokenizer', 'split_special_tokens': False,
    'chat_template': "{%- for message in messages %}{{- '<|im_start|>' + message.role + '\\n' + message.content + "
                     "'<|im_end|>\\n' }}{%- endfor %}{%- if add_generation_prompt %}{{- '<|im_start|>assistant\\n' }}"
                     "{%- endif %}",
    'added_tokens_decoder': {str(i): {'content': c, 'lstrip': False, 'normalized': False, 'rstrip': False,
                                      'single_word': False, 'special': s} for i, c, s in added},
}
with open('tokenizer.json', 'w', encoding='utf-8') as f:
    json.dump(tok, f, ensure_ascii=False, indent=1)
    f.write('\n')
with open('tokenizer_config.json', 'w', encoding='utf-8') as f:
    json.dump(cfg, f, ensure_ascii=False, indent=1)
    f.write('\n')
print(f'{len(vocab)} tokens, {len(merges)} merges, {len(added)} added tokens')
