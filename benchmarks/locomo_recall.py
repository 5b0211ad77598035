"""LoCoMo evidence recall of GraphMem.recall in lexical, semantic, hybrid and hybrid+hops=2 modes.

    NEO4J_URI=bolt://127.0.0.1:7691 python benchmarks/locomo_recall.py [DATA] --embedder minilm|hashing
        [--conversations N]

WIPES THE TARGET DATABASE (the embedder name is recorded in it, so each embedder needs a fresh
one). Point it at a dedicated benchmark server, never the test one.

One subject per conversation (user:locomo-<sample_id>); each turn is one episode (id
"<sample_id>:<dia_id>", occurred_at = its session date in UTC, channel chat, raw
"[<date>] <speaker>: <text>" plus " [image: <blip_caption>]"), ingested with extractor "none".
For every question except category 5: recall top 10 and map hits to dia_ids through
unit.source.episode_id; evidence recall@1/5/10 and all-covered@10 per category, beside the
BM25 reference figures of ../shared/bench-data/README.md (computed over all 10 conversations).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from collections import defaultdict
from datetime import datetime, timezone
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import default_uri, wipe  # noqa: E402

from graphmem import GraphMem
from graphmem.config import Settings
from graphmem.models import Episode, Scope

CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}  # 5 adversarial: excluded
#: BM25 over turns, from bench-data/README.md: (R@5, R@10, all-covered@10).
BM25 = {
    "single-hop": (0.627, 0.700, 0.688),
    "temporal": (0.635, 0.696, 0.659),
    "multi-hop": (0.188, 0.277, 0.103),
    "open-domain": (0.248, 0.274, 0.191),
}
MODES = (("lexical", "lexical", 0), ("semantic", "semantic", 0), ("hybrid", "hybrid", 0), ("hybrid+hops2", "hybrid", 2))
KS = (1, 5, 10)
_EVIDENCE = re.compile(r"D:?(\d+):(\d+)")


def parse_date(text: str) -> datetime:
    """'1:56 pm on 8 May, 2023' as UTC."""
    text = " ".join(text.split())
    for fmt in ("%I:%M %p on %d %B, %Y", "%I:%M %p on %d %b, %Y"):
        try:
            return datetime.strptime(text, fmt).replace(tzinfo=timezone.utc)
        except ValueError:
            pass
    raise ValueError(f"unparsed session date {text!r}")


def normalise_evidence(ids: list[str]) -> set[str]:
    """"D8:6; D9:17" -> two ids, "D:11:26" -> "D11:26", "D30:05" -> "D30:5"."""
    return {f"D{int(a)}:{int(b)}" for raw in ids for a, b in _EVIDENCE.findall(raw)}


def episodes_of(conv: dict) -> list[Episode]:
    sample = conv["sample_id"]
    c = conv["conversation"]
    scope = Scope.parse(f"user:locomo-{sample}")
    sessions = sorted((k for k in c if re.fullmatch(r"session_\d+", k) and isinstance(c[k], list)),
                      key=lambda k: int(k.split("_")[1]))
    out = []
    for key in sessions:
        date = c[f"{key}_date_time"]
        at = parse_date(date)
        for turn in c[key]:
            raw = f"[{date}] {turn['speaker']}: {turn['text']}"
            if turn.get("blip_caption"):
                raw += f" [image: {turn['blip_caption']}]"
            out.append(Episode(id=f"{sample}:{turn['dia_id']}", scope=scope, occurred_at=at, raw=raw, channel="chat"))
    return out


class TimedEmbedder:
    """Wraps the embedder to measure texts embedded and seconds spent."""

    def __init__(self, inner):
        self.inner, self.name, self.dimension = inner, inner.name, inner.dimension
        self.texts, self.seconds = 0, 0.0

    def embed(self, texts):
        t = time.perf_counter()
        out = self.inner.embed(texts)
        self.seconds += time.perf_counter() - t
        self.texts += len(texts)
        return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("data", nargs="?", default="../shared/bench-data/locomo/locomo10.json", type=Path)
    ap.add_argument("--uri", default=default_uri())
    ap.add_argument("--embedder", choices=("minilm", "hashing"), default="minilm")
    ap.add_argument("--conversations", type=int, default=None, help="only the first N conversations")
    args = ap.parse_args()

    convs = json.loads(args.data.read_text())[: args.conversations]
    wipe(args.uri)
    mem = GraphMem.connect(Settings.from_env(neo4j_uri=args.uri, embedder=args.embedder))
    timer = TimedEmbedder(mem.index.embedder)
    mem.index.embedder = timer
    if hasattr(timer.inner, "load"):
        timer.inner.load()  # model load is not ingest time

    t0 = time.perf_counter()
    n_eps = n_units = 0
    for conv in convs:
        eps = episodes_of(conv)
        mem.ingest(eps, extractor="none")
        n_eps += len(eps)
    ingest_s = time.perf_counter() - t0
    embed_texts, embed_s = timer.texts, timer.seconds
    n_units = mem.index.status().get("units", None)
    print(f"ingested {n_eps} turns of {len(convs)} conversations in {ingest_s:.1f} s "
          f"({n_eps / ingest_s:.1f} turns/s); index status units={n_units}")
    print(f"embedding during ingest: {embed_texts} texts in {embed_s:.1f} s "
          f"({embed_texts / max(embed_s, 1e-9):.1f} texts/s, {args.embedder})", flush=True)

    # sums[mode][cat] = [n, r1, r5, r10, all10]
    sums = {m: defaultdict(lambda: [0, 0.0, 0.0, 0.0, 0.0]) for m, _, _ in MODES}
    skipped = normalised = unmapped = 0
    latency = defaultdict(float)
    t_q = time.perf_counter()
    for conv in convs:
        subject = f"user:locomo-{conv['sample_id']}"
        for qa in conv["qa"]:
            cat = CATEGORIES.get(qa.get("category"))
            if cat is None:
                continue
            gold = normalise_evidence(qa.get("evidence", []))
            if set(qa.get("evidence", [])) != gold:
                normalised += 1
            if not gold:
                skipped += 1
                continue
            for label, mode, hops in MODES:
                t = time.perf_counter()
                hits = mem.recall(qa["question"], subject, k=10, mode=mode, hops=hops)
                latency[label] += time.perf_counter() - t
                dias = []
                for h in hits:
                    sample, _, dia = h.unit.source.episode_id.partition(":")
                    if sample != conv["sample_id"]:
                        unmapped += 1
                    dias.append(dia)
                s = sums[label][cat]
                s[0] += 1
                for i, k in enumerate(KS, 1):
                    s[i] += len(gold & set(dias[:k])) / len(gold)
                s[4] += float(gold <= set(dias[:10]))
    n_q = sums["lexical"] and sum(v[0] for v in sums["lexical"].values())
    print(f"{n_q} questions (category 5 excluded); {skipped} skipped for no evidence; "
          f"{normalised} with malformed evidence normalised; hits outside the conversation: {unmapped}; "
          f"query phase {time.perf_counter() - t_q:.1f} s")
    print("mean recall latency ms: " + ", ".join(f"{m} {1000 * latency[m] / max(n_q, 1):.0f}" for m, _, _ in MODES))
    print()
    print(f"embedder={args.embedder}  conversations={len(convs)}")
    print(f"{'category':<12}{'n':>5}  {'mode':<13}{'R@1':>7}{'R@5':>7}{'R@10':>7}{'all@10':>8}   "
          f"{'BM25 R@5':>9}{'R@10':>7}{'all@10':>8}")
    for cat in (*CATEGORIES.values(), "all"):
        for label, _, _ in MODES:
            if cat == "all":
                rows = list(sums[label].values())
                s = [sum(r[i] for r in rows) for i in range(5)]
            else:
                s = sums[label].get(cat)
                if not s or not s[0]:
                    continue
            n = s[0]
            ref = BM25.get(cat)
            ref_txt = f"{ref[0]:>9.3f}{ref[1]:>7.3f}{ref[2]:>8.3f}" if ref else f"{'':>9}{'':>7}{'':>8}"
            print(f"{cat:<12}{n:>5}  {label:<13}{s[1] / n:>7.3f}{s[2] / n:>7.3f}{s[3] / n:>7.3f}{s[4] / n:>8.3f}   {ref_txt}")


if __name__ == "__main__":
    main()
