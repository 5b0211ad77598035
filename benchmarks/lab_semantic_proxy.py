"""The semantic list alone, MiniLM against another embedder, on the units both have vectors for.

    python benchmarks/lab_semantic_proxy.py RUN.pkl VECTORS.pkl --embedder bge-small-en-v1.5-q

VECTORS.pkl: [(unit id, MiniLM vector, other vector)] read from a database whose index rebuild
with the other embedder was stopped part way (``recall_lab.py collect --reuse``): a random part
of the units, the same for both. Each question ranks its scope's units of that part by cosine
with its text (MiniLM's kept question vector; the other embedder's ``embed_queries``); R@10
counts the gold documents of that part. A proxy for first-stage candidate quality, paired.
"""

from __future__ import annotations

import argparse
import json
import pickle
from pathlib import Path

import numpy as np
from _lab_experiments import Kept
from _onnx_bert import OnnxBertEmbedder
from _recall import paired

from graphmem.embed.minilm import MiniLMEmbedder


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("run", type=Path)
    ap.add_argument("vectors", type=Path)
    ap.add_argument("--embedder", default="bge-small-en-v1.5-q")
    ap.add_argument("--json", action="store_true", help="last line: the figures as one JSON object")
    args = ap.parse_args()
    lab = Kept(pickle.loads(args.run.read_bytes()))
    rows = pickle.loads(args.vectors.read_bytes())
    units = lab.units
    by_scope: dict[str, list[int]] = {}
    ids = [u for u, _, _ in rows]
    a = np.asarray([x for _, x, _ in rows], np.float32)
    b = np.asarray([y for _, _, y in rows], np.float32)
    docs = [lab.doc_of(units[u].source.episode_id) for u in ids]
    for n, u in enumerate(ids):
        by_scope.setdefault(units[u].scope.subject_id, []).append(n)
    questions = [*lab.lq, *lab.mq]
    other = OnnxBertEmbedder(args.embedder)
    qb = np.asarray(other.embed_queries([q.text for q in questions]), np.float32)
    kept = lab.kept["vectors"]
    missing = [q.text for q in questions if q.text not in kept]
    extra = dict(zip(missing, MiniLMEmbedder().embed(missing))) if missing else {}
    qa = np.asarray([kept.get(q.text) or extra[q.text] for q in questions], np.float32)
    scores = {"minilm": [], args.embedder: []}
    meta = []
    for i, q in enumerate(questions):
        rows_q = by_scope.get(q.subject.split(":", 1)[1], [])
        gold = {d for d in (docs[n] for n in rows_q) if d in q.gold}
        if not gold:
            continue
        for name, dv, qv in (("minilm", a, qa[i]), (args.embedder, b, qb[i])):
            sims = dv[rows_q] @ qv
            top = [docs[rows_q[j]] for j in np.argsort(-sims)[:10]]
            scores[name].append(len(gold & set(top)) / len(gold))
        meta.append(q)
    figures = {}
    for set_name in ("locomo", "musique"):
        for half in ("A", "B"):
            idx = [
                k
                for k, q in enumerate(meta)
                if q.half == half and (q.subject == "user:musique") == (set_name == "musique")
            ]
            base = [scores["minilm"][k] for k in idx]
            new = [scores[args.embedder][k] for k in idx]
            g, lo, hi = paired(base, new)
            figures[f"{set_name} {half}"] = {
                "n": len(idx),
                "minilm": float(np.mean(base)),
                args.embedder: float(np.mean(new)),
                "gain": [g, lo, hi],
            }
            print(
                f"{set_name} {half} semantic-only R@10 n={len(idx)}: minilm {np.mean(base):.3f} "
                f"{args.embedder} {np.mean(new):.3f}  gain {g:+.3f} [{lo:+.3f},{hi:+.3f}]"
            )
    if args.json:
        print(json.dumps({"embedder": args.embedder, "semantic_only_r_at_10": figures}))


if __name__ == "__main__":
    main()
