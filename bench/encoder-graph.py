"""Where a query's encoder time goes, and what other int8 graphs of the same model would cost (issue 61).

The search process embeds each new query with the set-up's int8 graph (docs/embedding.md). This
runs graphs in onnxruntime directly, one thread, and prints:

1. CPU a run by the text's tokens, for the set-up's int8 and float graphs: what a query costs
   without the search process around it, and how much of it does not grow with the text.
2. Short queries in batches (batch 1, 2, 4, 8): CPU a query, and how far a query's vector in a batch
   is from its vector alone (the int8 graph quantizes its activations with one scale a batch).
3. Graphs made here from the float graph, each against it: weight-only int8 and int4 (onnxruntime's
   MatMulNBits, its activations quantized a row at a time, so its vectors do not depend on their
   batch) and static int8 (activation scales fixed from calibration texts): CPU a run, cosine to the
   float graph's vectors for 1-, 2- and 4-word queries and whole questions, batch dependence, and
   SemEval-2016 MAP by pure cosine (subject + body, as bench/embedding-models.ts).

Run (a throw-away virtualenv; the set-up's graphs in $KN_MODEL_CACHE, ~/.cache/kn-models by default):
  python3 -m venv /tmp/eg && /tmp/eg/bin/pip install onnx==1.23.2 numpy==2.4.6 onnxruntime==1.30.0 \
    onnx_ir==0.2.1 tokenizers==0.22.1 && /tmp/eg/bin/python bench/encoder-graph.py
"""

import html
import os
import random
import re
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
from onnxruntime.quantization import CalibrationDataReader, CalibrationMethod, QuantFormat, QuantType, quantize_static
from onnxruntime.quantization.matmul_nbits_quantizer import DefaultWeightOnlyQuantConfig, MatMulNBitsQuantizer
from tokenizers import BertWordPieceTokenizer

cache = Path(os.environ.get("KN_MODEL_CACHE", Path.home() / ".cache" / "kn-models"))
INT8 = cache / "all-MiniLM-L6-v2-int8" / "model.onnx"
FLOAT = cache / "all-MiniLM-L6-v2" / "model.onnx"
data = Path(os.environ.get("SHARED_DATA_DIR", Path(__file__).resolve().parents[2] / "shared" / "data"))
semeval = data / "semeval2016-task3" / "SemEval2016-Task3-CQA-QL-train-part2.xml"
for file in (INT8, FLOAT):
    if not file.exists():
        sys.exit(f"{file} missing: infra/ensure-model.sh sets it up")
if not semeval.exists():
    sys.exit(f"data set semeval2016-task3 missing: put {semeval.name} of SemEval-2016 task 3 in {semeval.parent} (SHARED_DATA_DIR names the folder that holds semeval2016-task3)")

tokenizer = BertWordPieceTokenizer(str(INT8.parent / "vocab.txt"), lowercase=True)
tokenizer.enable_truncation(256)


def session(path: Path) -> ort.InferenceSession:
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    options.inter_op_num_threads = 1
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    return ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])


def feeds(ids: np.ndarray, mask: np.ndarray) -> dict[str, np.ndarray]:
    return {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}


def embed(s: ort.InferenceSession, texts: list[str]) -> np.ndarray:
    """Unit vectors of texts run as one padded batch (mean pooling, as the search process)."""
    encoded = [tokenizer.encode(t).ids for t in texts]
    width = max(map(len, encoded))
    ids = np.zeros((len(encoded), width), np.int64)
    mask = np.zeros_like(ids)
    for row, e in enumerate(encoded):
        ids[row, : len(e)] = e
        mask[row, : len(e)] = 1
    hidden = s.run(None, feeds(ids, mask))[0]
    v = (hidden * mask[:, :, None]).sum(1) / mask.sum(1)[:, None]
    return v / np.linalg.norm(v, axis=1)[:, None]


def cpu_ms(run, repeat: int) -> float:
    for _ in range(max(5, repeat // 10)):
        run()
    start = time.process_time()
    for _ in range(repeat):
        run()
    return (time.process_time() - start) / repeat * 1000


def run_of_tokens(s: ort.InferenceSession, n: int):
    ids = np.array([[101] + [2000 + i for i in range(n - 2)] + [102]], np.int64)
    f = feeds(ids, np.ones_like(ids))
    return lambda: s.run(None, f)


xml = semeval.read_text(encoding="utf8")
subjects = [html.unescape(s) for s in re.findall(r"<(?:Org|Rel)QSubject>(.*?)</", xml, re.S)]
bodies = [html.unescape(s) for s in re.findall(r"<(?:Org|Rel)QBody>(.*?)</", xml, re.S)]
questions = [f"{a}\n{b}" for a, b in zip(subjects, bodies)]
random.seed(61)
queries = {f"{n} words": [" ".join(s.split()[:n]) for s in random.sample(subjects, 100)] for n in (1, 2, 4)}
queries["questions"] = random.sample(questions, 40)
everyQuery = [q for qs in queries.values() for q in qs]

# Each <OrgQuestion> holds one of its related questions: the 67 originals are grouped by their id.
groups: dict[str, tuple[str, list[tuple[bool, str]]]] = {}
for id, block in re.findall(r'<OrgQuestion ORGQ_ID="([^"]+)">(.*?)</OrgQuestion>', xml, re.S):
    subject = html.unescape(re.search(r"<OrgQSubject>(.*?)</", block, re.S).group(1))
    body = html.unescape(re.search(r"<OrgQBody>(.*?)</", block, re.S).group(1))
    related = groups.setdefault(id, (f"{subject}\n{body}", []))[1]
    for label, s, b in re.findall(r'RELQ_RELEVANCE2ORGQ="([^"]+)"[^>]*>\s*<RelQSubject>(.*?)</RelQSubject>\s*<RelQBody>(.*?)</RelQBody>', block, re.S):
        related.append((label != "Irrelevant", html.unescape(s) + "\n" + html.unescape(b)))


def semeval_map(s: ort.InferenceSession) -> float:
    precisions = []
    for original, related in groups.values():
        q = embed(s, [original])[0]
        scores = np.vstack([embed(s, [t])[0] for _, t in related]) @ q
        relevant = [related[i][0] for i in np.argsort(-scores)]
        hits, total = 0, 0.0
        for rank, r in enumerate(relevant, 1):
            if r:
                hits += 1
                total += hits / rank
        precisions.append(total / hits if hits else 0.0)
    return 100 * float(np.mean(precisions))


def batch_dependence(s: ort.InferenceSession, alone: np.ndarray, size: int) -> tuple[float, float]:
    """Cosine of each short query's vector in a batch of `size` random short queries with its vector alone."""
    short = everyQuery[:300]
    cosines = [float(embed(s, [q, *random.sample(short, size - 1)])[0] @ alone[i]) for i, q in enumerate(short[:150])]
    return float(np.median(cosines)), float(np.min(cosines))


print("1. CPU ms a run by tokens, one thread")
for name, path in (("int8 (set-up)", INT8), ("float", FLOAT)):
    s = session(path)
    print(f"  {name:14}", "  ".join(f"{n} tokens {cpu_ms(run_of_tokens(s, n), 600 if n <= 10 else 150):.3f}" for n in (3, 5, 10, 20, 40)))

print("2. short queries (1, 2 and 4 words) in batches, the int8 graph")
int8 = session(INT8)
alone = np.vstack([embed(int8, [q]) for q in everyQuery])
short = everyQuery[:300]
for size in (1, 2, 4, 8):
    batches = [short[i : i + size] for i in range(0, 96, size)]
    at = iter(range(10**9))
    ms = cpu_ms(lambda: embed(int8, batches[next(at) % len(batches)]), 300) / size
    dependence = "" if size == 1 else "  cosine to alone: median %.4f, min %.4f" % batch_dependence(int8, alone, size)
    print(f"  batch {size}: {ms:.3f} ms a query{dependence}")

print("3. graphs made from the float graph (CPU ms a run at 3 / 5 / 10 tokens; cosine to the float graph: median, min)")
reference = session(FLOAT)
floatVectors = np.vstack([embed(reference, [q]) for q in everyQuery])


def calibration_texts():
    texts = random.sample(questions, 120) + random.sample(subjects, 120)
    texts += [" ".join(s.split()[:n]) for s in random.sample(subjects, 120) for n in (1, 2, 4)]
    return iter([feeds(*(lambda ids: (ids, np.ones_like(ids)))(np.array([tokenizer.encode(t).ids], np.int64))) for t in texts])


class Calibration(CalibrationDataReader):
    def __init__(self):
        self.texts = calibration_texts()

    def get_next(self):
        return next(self.texts, None)


with tempfile.TemporaryDirectory() as work:
    made = {"int8 (set-up)": INT8}
    for bits, block in ((8, 32), (8, 128), (4, 32)):
        out = Path(work) / f"nbits{bits}-{block}.onnx"
        config = DefaultWeightOnlyQuantConfig(block_size=block, is_symmetric=True, accuracy_level=4, bits=bits)
        quantizer = MatMulNBitsQuantizer(onnx.load(str(FLOAT)), bits=bits, block_size=block, is_symmetric=True, accuracy_level=4, algo_config=config)
        quantizer.process()
        quantizer.model.save_model_to_file(str(out), use_external_data_format=False)
        made[f"weight-only int{bits}, blocks of {block}"] = out
    out = Path(work) / "static.onnx"
    quantize_static(
        str(FLOAT), str(out), Calibration(), quant_format=QuantFormat.QOperator, per_channel=True,
        activation_type=QuantType.QUInt8, weight_type=QuantType.QInt8, calibrate_method=CalibrationMethod.MinMax,
        op_types_to_quantize=["MatMul", "Gather"],
    )
    made["static int8 (MinMax)"] = out
    print(f"  {'float':36} SemEval MAP {semeval_map(reference):.2f}")
    for name, path in made.items():
        s = session(path)
        costs = " / ".join(f"{cpu_ms(run_of_tokens(s, n), 600):.3f}" for n in (3, 5, 10))
        vectors = np.vstack([embed(s, [q]) for q in everyQuery])
        fidelity = []
        start = 0
        for label, qs in queries.items():
            c = (vectors[start : start + len(qs)] * floatVectors[start : start + len(qs)]).sum(1)
            fidelity.append(f"{label} {np.median(c):.3f}, {c.min():.3f}")
            start += len(qs)
        median, least = batch_dependence(s, vectors, 4)
        batches = [short[i : i + 4] for i in range(0, 96, 4)]
        at = iter(range(10**9))
        batched = cpu_ms(lambda: embed(s, batches[next(at) % len(batches)]), 300) / 4
        print(
            f"  {name:36} CPU {costs}; cosine {'; '.join(fidelity)}; in a batch of 4: {batched:.3f} ms a query, cosine to alone min {least:.4f}; SemEval MAP {semeval_map(s):.2f}"
        )
