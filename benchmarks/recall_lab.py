"""Research harness for issue 44: recall quality without LLM calls, measured on LoCoMo and MuSiQue.

    python benchmarks/recall_lab.py collect --embedder minilm|<onnx model> --uri bolt://127.0.0.1:7710
    python benchmarks/recall_lab.py compare A.pkl B.pkl      # embedders, paired, per half
    python benchmarks/recall_lab.py experiments minilm.pkl   # learned fusion, PPR, decomposition

``compare`` and ``experiments`` take ``--json``: their last stdout line is then one JSON object.

``collect`` WIPES THE TARGET DATABASE, ingests LoCoMo (stored form, as locomo_recall.py) and the
MuSiQue corpus (as musique_recall.py) into it with the embedder named, and asks every question in
the hybrid and hybrid+hops2 modes through graphmem's own recall (the real statement). It also
keeps what a replay needs (``_recall.ListReplay``: each ranked list of each question alone, the
walk hops, the question vectors) and the mention graph (units -> entities), pickled under
``~/.cache/graphmem/bench/lab/<embedder>.pkl``, so the experiments run offline over the same
candidates with graphmem's own fusion code.

Halves as the benchmarks have them: LoCoMo conversations 1-5 (A) / 6-10 (B), MuSiQue questions
1-50 (A) / 51-100 (B). Every choice an experiment makes is made on one half and reported on the
other, both directions, with 95% bootstrap intervals and a paired bootstrap of the gain over
today's default on the same questions.
"""

from __future__ import annotations

import argparse
import json
import pickle
import sys
import time
from collections import defaultdict
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import locomo_recall
import musique_recall
from _common import default_uri, wipe
from _recall import DiskVectors, ListReplay, ask, bootstrap, covered_at, paired, recall_at

from graphmem import GraphMem
from graphmem.domain.models import Page, Scope, UnitFilter, utcnow
from graphmem.pipelines.recall import Recaller
from graphmem.settings.config import Settings, default_home

LAB = default_home() / "bench" / "lab"
LABELS = ("hybrid", "hybrid+hops2")
LOCOMO_GROUPS = ("single-hop", "temporal", "multi-hop", "open-domain")
#: RAW benchmark-only Cypher: every unit's entities (what the walks cross), by scope.
RAW_MENTIONS = (
    "MATCH (u:Unit)-[r:ABOUT|MENTIONS]->(e:Entity) "
    "RETURN u.id AS unit, u.scope AS scope, e.name AS name, "
    "CASE WHEN type(r) = 'ABOUT' THEN r.role ELSE r.kind END AS kind"
)


def make_embedder(name: str):
    if name in ("minilm", "hashing"):
        return None
    from _onnx_bert import OnnxBertEmbedder

    return OnnxBertEmbedder(name)


class QueryView:
    """An embedder's question side (``embed_queries`` where it has one), as an embedder."""

    def __init__(self, inner):
        self.inner, self.name, self.dimension = inner, f"{inner.name}-query", inner.dimension
        self._embed = getattr(inner, "embed_queries", inner.embed)

    def embed(self, texts):
        return self._embed(texts)


class Recording:
    """Stands for the index the recaller asks: question vectors from ``queries`` (kept, for
    the replay), the rest from the real index."""

    def __init__(self, index, queries):
        self._index, self._queries, self.seen = index, queries, {}

    def vectors(self, texts):
        out = self._queries.embed(list(texts))
        self.seen.update(zip(texts, out))
        return out

    def __getattr__(self, name):
        return getattr(self._index, name)


class Offline:
    """The index a replay stands on offline: kept question vectors, no database."""

    def __init__(self, name, vectors):
        self.embedder = type("E", (), {"name": name, "dimension": 384})()
        self._vectors = vectors

    def vectors(self, texts):
        return [self._vectors[t] for t in texts]

    def recall(self, request):
        raise KeyError("not in the replay")

    def hop(self, request, step):
        raise KeyError("not in the replay")


class Scopes:
    """What ``_recall.ask`` needs of a GraphMem."""

    @staticmethod
    def scopes(subject, project, include_shared):
        return [Scope.parse(subject)]


def sets(locomo: Path, musique: Path):
    convs = json.loads(locomo.read_text())
    corpus = musique_recall.Corpus(musique)
    lq, _ = locomo_recall.questions_of(convs, "stored")
    mq = musique_recall.questions_of(musique)
    return convs, corpus, lq, mq


def collect(args) -> None:
    convs, corpus, lq, mq = sets(args.locomo, args.musique)
    lq = lq[:: args.every]  # a fixed, even sample of LoCoMo's questions (both halves alike)
    inner = make_embedder(args.embedder)
    settings = Settings.from_env(neo4j_uri=args.uri, embedder="minilm" if inner else args.embedder)
    if not args.reuse:
        wipe(args.uri)
    mem = GraphMem.connect(settings, embedder=inner, check_index=not args.reuse)
    docs = DiskVectors(mem.index.embedder)
    docs.load()
    mem.index.embedder = docs
    started = time.perf_counter()
    if args.reuse:
        # The same units, mentions and text index: only the vectors change (a new generation
        # of the vector index, as `graphmem index rebuild` builds it for a new model).
        if mem.index.stored_model() != (docs.name, docs.dimension):
            print(f"re-embedded {mem.index.rebuild()} units with {docs.name}", flush=True)
    else:
        locomo_recall.ingest(mem, convs, "stored")
        corpus.ingest(mem)
    ingest_s = time.perf_counter() - started
    print(f"ingest {ingest_s:.0f} s; documents: {docs.summary()}", flush=True)
    queries = DiskVectors(QueryView(docs.inner))
    recording = Recording(mem.index, queries)
    recaller = Recaller(recording, rrf_k=mem.recaller.rrf_k, weights=mem.recaller.weights)
    now = utcnow()
    answers: dict[str, dict[str, list[str]]] = {}
    seconds = {}
    for name, qs, doc_of in (("locomo", lq, locomo_recall.doc_of), ("musique", mq, corpus.doc_of)):
        got, secs = ask(mem, qs, args.labels, recaller=recaller, doc_of=doc_of, now=now, progress=name)
        for label, by_q in got.items():
            answers.setdefault(label, {}).update(by_q)
        seconds[name] = secs
    units = all_units(mem, lq, mq)
    if args.no_replay:
        return finish(
            args, mem, docs, queries, ingest_s, now, lq, mq, corpus, answers, {}, seconds, None, recording, units
        )
    # The replay: each list alone and the walk hops, over the same questions.
    replay = ListReplay(recording)
    replayer = Recaller(replay, rrf_k=mem.recaller.rrf_k, weights=mem.recaller.weights)
    replayed = {}
    for name, qs, doc_of in (("locomo", lq, locomo_recall.doc_of), ("musique", mq, corpus.doc_of)):
        got, _ = ask(mem, qs, args.labels, recaller=replayer, doc_of=doc_of, now=now, progress=f"{name} replay")
        for label, by_q in got.items():
            replayed.setdefault(label, {}).update(by_q)
    finish(
        args, mem, docs, queries, ingest_s, now, lq, mq, corpus, answers, replayed, seconds, replay, recording, units
    )


def all_units(mem, lq, mq) -> dict:
    """Every unit of the benchmark subjects, by id (what a replay may reach beyond its lists)."""
    out = {}
    for subject in sorted({q.subject for q in [*lq, *mq]}):
        for u in mem.store.list_units(Scope.parse(subject), UnitFilter(), Page(limit=10_000)):
            out[u.id] = u
    return out


def finish(
    args, mem, docs, queries, ingest_s, now, lq, mq, corpus, answers, replayed, seconds, replay, recording, units
):
    docs.save()
    queries.save()
    with mem.store.conn.driver.session(database=mem.store.conn.database) as session:
        mentions = defaultdict(list)
        for r in session.run(RAW_MENTIONS):
            mentions[r["unit"]].append((r["name"], r["kind"]))
    out = {
        "embedder": args.embedder,
        "ingest_s": ingest_s,
        "docs": docs.summary(),
        "now": now,
        "settings": {"rrf_k": mem.recaller.rrf_k, "weights": dict(mem.recaller.weights)},
        "questions": {"locomo": lq, "musique": mq},
        "episode_doc": {"musique": corpus.key},
        "answers": answers,
        "replayed": replayed,
        "seconds": seconds,
        "lists": replay._lists if replay else {},
        "hops": replay._hops if replay else {},
        "units": units,
        "vectors": recording.seen,
        "mentions": dict(mentions),
    }
    mem.close()
    LAB.mkdir(parents=True, exist_ok=True)
    path = args.out or LAB / f"{args.embedder}.pkl"
    path.write_bytes(pickle.dumps(out))
    print(f"kept {path}")
    if replayed:
        agree = np.mean([answers["hybrid"][q] == replayed["hybrid"][q] for q in answers["hybrid"]])
        print(f"replay agrees with the statement on {agree:.1%} of hybrid top-10 lists")
    report({"default": answers["hybrid"]}, lq, mq)


# -- measuring ----------------------------------------------------------------------------


def measures(set_name: str):
    if set_name == "locomo":
        return {"R@10": lambda g, a: recall_at(g, a, 10), "R@5": lambda g, a: recall_at(g, a, 5)}
    return {
        "R@5": lambda g, a: recall_at(g, a, 5),
        "R@2": lambda g, a: recall_at(g, a, 2),
        "all@10": lambda g, a: covered_at(g, a, 10),
    }


def groups_of(set_name: str, questions) -> list[tuple[str, list]]:
    out = []
    if set_name == "locomo":
        for g in LOCOMO_GROUPS:
            out.append((g, [q for q in questions if q.group == g]))
    else:
        out.append(("two-hop", [q for q in questions if q.group == "2"]))
    out.append(("all", list(questions)))
    return out


def table(runs: dict[str, dict[str, list[str]]], lq, mq, base: str | None = None, halves=("A", "B")) -> dict:
    """Figures of each run per set, half and group, with intervals; and, with ``base``, each
    run's paired gain over it."""
    result: dict = {}
    for set_name, qs in (("locomo", lq), ("musique", mq)):
        for half in halves:
            mine = [q for q in qs if q.half == half]
            for group, gq in groups_of(set_name, mine):
                for mname, m in measures(set_name).items():
                    if set_name == "locomo" and mname != "R@10":
                        continue
                    row = {}
                    for run, ans in runs.items():
                        vals = [m(q.gold, ans[q.id]) for q in gq if q.id in ans]
                        cell = {"mean": bootstrap(vals)}
                        if base and run != base:
                            bvals = [m(q.gold, runs[base][q.id]) for q in gq if q.id in ans]
                            cell["gain"] = paired(bvals, vals)
                        row[run] = cell
                    result[f"{set_name} {half} {group} {mname}"] = {"n": len(gq), **row}
    return result


def print_result(result: dict) -> None:
    for key, row in result.items():
        cells = []
        for run, cell in row.items():
            if run == "n":
                continue
            m, lo, hi = cell["mean"]
            s = f"{run} {m:.3f} [{lo:.3f},{hi:.3f}]"
            if "gain" in cell:
                g, glo, ghi = cell["gain"]
                s += f" Δ{g:+.3f} [{glo:+.3f},{ghi:+.3f}]{'*' if glo > 0 else ''}"
            cells.append(s)
        print(f"{key:<34} n={row['n']:<4} " + " | ".join(cells))


def report(runs, lq, mq, base=None):
    result = table(runs, lq, mq, base)
    print_result(result)
    return result


def load(path: Path) -> dict:
    return pickle.loads(Path(path).read_bytes())


def compare(args) -> None:
    kept = [load(p) for p in args.runs]
    lq, mq = kept[0]["questions"]["locomo"], kept[0]["questions"]["musique"]
    for label in LABELS:
        if not all(label in k["answers"] for k in kept):
            continue
        print(f"\n== {label}")
        runs = {k["embedder"]: k["answers"][label] for k in kept}
        result = report(runs, lq, mq, base=kept[0]["embedder"])
        if args.json:
            print(json.dumps({"label": label, "figures": result}))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("collect")
    c.add_argument("--embedder", default="minilm")
    c.add_argument("--uri", default=default_uri())
    c.add_argument("--locomo", type=Path, default=Path("../shared/bench-data/locomo/locomo10.json"))
    c.add_argument("--musique", type=Path, default=Path("../shared/bench-data/musique"))
    c.add_argument("--out", type=Path, default=None)
    c.add_argument("--every", type=int, default=1, help="ask every N-th LoCoMo question only (a fixed sample)")
    c.add_argument("--no-replay", action="store_true", help="only the answers (an embedder comparison)")
    c.add_argument("--labels", nargs="+", default=list(LABELS), choices=list(LABELS), help="modes asked for real")
    c.add_argument(
        "--reuse",
        action="store_true",
        help="no wipe, no ingest: re-embed what the database holds with this embedder (same units and graph)",
    )
    u = sub.add_parser("units", help="add the database's units to a kept run (collected before units were kept)")
    u.add_argument("run", type=Path)
    u.add_argument("--uri", default=default_uri())
    k = sub.add_parser("compare")
    k.add_argument("runs", nargs="+", type=Path)
    k.add_argument("--json", action="store_true")
    e = sub.add_parser("experiments")
    e.add_argument("run", type=Path)
    e.add_argument("--json", action="store_true")
    e.add_argument("--only", nargs="+", choices=("learned", "ppr", "second"), default=None)
    e.add_argument("--second-models", nargs="+", default=["bge-small-en-v1.5"])
    args = ap.parse_args()
    if args.cmd == "collect":
        collect(args)
    elif args.cmd == "units":
        kept = load(args.run)
        mem = GraphMem.connect(Settings.from_env(neo4j_uri=args.uri), check_index=False)
        kept["units"] = all_units(mem, kept["questions"]["locomo"], kept["questions"]["musique"])
        mem.close()
        args.run.write_bytes(pickle.dumps(kept))
        print(f"{len(kept['units'])} units kept in {args.run}")
    elif args.cmd == "compare":
        compare(args)
    else:
        import _lab_experiments

        _lab_experiments.run(load(args.run), args)


if __name__ == "__main__":
    main()
