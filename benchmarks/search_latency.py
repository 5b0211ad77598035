"""Scoped search latency of Neo4jIndex against raw Neo4j index calls, at several data sizes.

    NEO4J_URI=bolt://127.0.0.1:7691 python benchmarks/search_latency.py --sizes 10000 100000

WIPES THE TARGET DATABASE. Point it at a dedicated benchmark server, never the test one.

Per size: units are written through Neo4jStore.commit (batches of 1000) over 20 scopes (one
holding half the units, 18 splitting the rest evenly, one tiny scope of 5 units), with random
unit-normalised 384-d vectors (numpy, seeded) set through Neo4jIndex.upsert via an embedder
that returns precomputed vectors keyed by text ("bench-random", 384 dims). Then, for
--queries random query vectors / word pairs, timed alternately query by query:

  ours: index.search_vector(v, scope, 10) for the large, a mid and the tiny scope;
        index.search_lexical(words, scope, 10) for the large, mid and tiny scope
  raw:  CALL db.index.vector.queryNodes('unit_embedding', 10, $v)
        CALL db.index.fulltext.queryNodes('unit_text', $q, {limit: 10})

and checked: the tiny scope's vector search returns exactly its 5 units, and no hit of any
scoped search belongs to another scope.
"""

from __future__ import annotations

import argparse
import sys
import time
from datetime import timezone, datetime
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import default_uri, median, pct, timed, vocabulary, wipe  # noqa: E402

from graphmem.adapters.neo4j_driver import Neo4jConnection
from graphmem.adapters.neo4j_index import Neo4jIndex
from graphmem.adapters.neo4j_store import Neo4jStore
from graphmem.config import Settings
from graphmem.models import MemoryKind, MemoryUnit, Scope, SourceRef, TemporalMeta, WriteBatch, content_hash

# BENCHMARK-ONLY RAW BASELINES: unscoped calls straight to Neo4j's indexes, for comparison.
RAW_VECTOR = "CALL db.index.vector.queryNodes('unit_embedding', 10, $v) YIELD node, score RETURN node.id AS id, score"
RAW_FULLTEXT = (
    "CALL db.index.fulltext.queryNodes('unit_text', $q, {limit: 10}) YIELD node, score "
    "RETURN node.id AS id, score"
)

DIM = 384
N_SCOPES = 20
TINY = 5
BATCH = 1000


class RandomEmbedder:
    """Embedder whose vectors are precomputed, keyed by text (no embedding cost)."""

    name = "bench-random"
    dimension = DIM

    def __init__(self) -> None:
        self.by_text: dict[str, list[float]] = {}

    def embed(self, texts):
        return [self.by_text[t] for t in texts]


def unit_vectors(rng: np.random.Generator, n: int) -> np.ndarray:
    v = rng.standard_normal((n, DIM)).astype(np.float32)
    v /= np.linalg.norm(v, axis=1, keepdims=True)
    return v


def scope_sizes(n: int) -> list[int]:
    """20 scopes: [large = n/2, 18 mid ones splitting the rest evenly, tiny = 5]."""
    large = n // 2
    rest = n - large - TINY
    mids = [rest // (N_SCOPES - 2)] * (N_SCOPES - 2)
    for i in range(rest - sum(mids)):
        mids[i] += 1
    return [large, *mids, TINY]


def load(uri: str, n: int, seed: int, vocab: list[str]):
    wipe(uri)
    conn = Neo4jConnection(Settings.from_env(neo4j_uri=uri))
    embedder = RandomEmbedder()
    index = Neo4jIndex(conn, embedder)
    index.ensure()
    store = Neo4jStore(conn)
    rng = np.random.default_rng(seed)
    scopes = [Scope.parse(f"user:bench-{i:02d}") for i in range(N_SCOPES)]
    sizes = scope_sizes(n)
    owner: dict[str, str] = {}  # unit id -> scope key
    members: dict[str, set[str]] = {s.key: set() for s in scopes}
    now = datetime.now(timezone.utc)
    t0 = time.perf_counter()
    serial = 0
    for scope, size in zip(scopes, sizes):
        for start in range(0, size, BATCH):
            m = min(BATCH, size - start)
            vecs = unit_vectors(rng, m)
            words = rng.integers(0, len(vocab), size=(m, 10))
            units = []
            for j in range(m):
                serial += 1
                text = f"unit {serial} " + " ".join(vocab[w] for w in words[j])
                embedder.by_text[text] = vecs[j].tolist()
                u = MemoryUnit(
                    kind=MemoryKind.semantic, scope=scope, content=text, content_hash=content_hash(text),
                    source=SourceRef(episode_id=f"bench-{serial}", channel="bench", extractor_version="bench"),
                    time=TemporalMeta(created_at=now),
                )
                units.append(u)
                owner[u.id] = scope.key
                members[scope.key].add(u.id)
            store.commit(WriteBatch(units=tuple(units)), scope)
            index.upsert(units)
            embedder.by_text.clear()
    conn.schema("CALL db.awaitIndexes(600)", what="await indexes")  # benchmark-only
    return conn, index, scopes, sizes, owner, members, time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--uri", default=default_uri())
    ap.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--seed", type=int, default=7)
    args = ap.parse_args()

    vocab = vocabulary(args.seed)

    rows = []
    checks = []
    for n in args.sizes:
        conn, index, scopes, sizes, owner, members, load_s = load(args.uri, n, args.seed, vocab)
        print(f"[{n}] loaded {sum(sizes)} units over {len(scopes)} scopes in {load_s:.1f} s "
              f"(large {sizes[0]}, mid {sizes[1]}, tiny {sizes[-1]})", flush=True)
        large, mid, tiny = scopes[0], scopes[1], scopes[-1]
        rng = np.random.default_rng(args.seed + n)
        qvecs = unit_vectors(rng, args.queries)
        qwords = [" ".join(vocab[i] for i in rng.integers(0, len(vocab), size=2)) for _ in range(args.queries)]

        def raw(query, **p):
            return conn.read_tx(lambda tx: [r.data() for r in tx.run(query, p)], what="raw")

        # warm-up (not measured)
        for i in range(10):
            v = qvecs[i].tolist()
            index.search_vector(v, large, 10); index.search_vector(v, mid, 10); index.search_vector(v, tiny, 10)
            index.search_lexical(qwords[i], large, 10); raw(RAW_VECTOR, v=v); raw(RAW_FULLTEXT, q=qwords[i])

        times: dict[str, list[float]] = {c: [] for c in
                                          ("vector large", "vector mid", "vector tiny", "raw vector",
                                           "lexical large", "lexical mid", "lexical tiny", "raw fulltext")}
        tiny_bad = foreign = 0
        for i in range(args.queries):
            v = qvecs[i].tolist()
            q = qwords[i]
            for case, scope, fn in (
                ("vector large", large, lambda: index.search_vector(v, large, 10)),
                ("raw vector", None, lambda: raw(RAW_VECTOR, v=v)),
                ("vector mid", mid, lambda: index.search_vector(v, mid, 10)),
                ("raw vector", None, lambda: raw(RAW_VECTOR, v=v)),
                ("vector tiny", tiny, lambda: index.search_vector(v, tiny, 10)),
                ("raw vector", None, lambda: raw(RAW_VECTOR, v=v)),
                ("lexical large", large, lambda: index.search_lexical(q, large, 10)),
                ("raw fulltext", None, lambda: raw(RAW_FULLTEXT, q=q)),
                ("lexical mid", mid, lambda: index.search_lexical(q, mid, 10)),
                ("raw fulltext", None, lambda: raw(RAW_FULLTEXT, q=q)),
                ("lexical tiny", tiny, lambda: index.search_lexical(q, tiny, 10)),
                ("raw fulltext", None, lambda: raw(RAW_FULLTEXT, q=q)),
            ):
                ms, hits = timed(fn)
                times[case].append(ms)
                if scope is None:
                    continue
                foreign += sum(1 for h in hits if owner.get(h.id) != scope.key)
                if case == "vector tiny" and {h.id for h in hits} != members[tiny.key]:
                    tiny_bad += 1
        base = {"vector": median(times["raw vector"]), "lexical": median(times["raw fulltext"])}
        for case, t in times.items():
            kind = "lexical" if case.startswith(("lexical", "raw fulltext")) else "vector"
            rows.append((n, case, median(t), pct(t, 95), median(t) / base[kind]))
        checks.append((n, tiny_bad, foreign))
        print(f"[{n}] done: tiny-scope violations {tiny_bad}/{args.queries}, foreign hits {foreign}", flush=True)
        conn.close()

    print()
    print(f"{'size':>7}  {'case':<14}{'p50 ms':>9}{'p95 ms':>9}{'x raw p50':>11}")
    for n, case, p50, p95, ratio in rows:
        print(f"{n:>7}  {case:<14}{p50:>9.2f}{p95:>9.2f}{ratio:>11.2f}")
    print()
    for n, bad, foreign in checks:
        print(f"size {n}: tiny scope not exactly its {TINY} units: {bad} of {args.queries} queries; "
              f"hits from another scope: {foreign}")


if __name__ == "__main__":
    main()
