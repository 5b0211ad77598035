"""Ingest throughput of the write pipeline (`facts` extractor, rule policy) against a raw
UNWIND CREATE of the same nodes and edges, in the same run on the same server.

Facts: every YAGO15k line (subject, predicate, object, with its since/until years when given),
then generated facts of the same shape up to --facts. Ten facts per episode, --batch facts per
write. Both runs take the facts' vectors computed before their clock starts (the embedder's own
speed: benchmarks/embedder_throughput.py); the pipeline plans each write while the one before
commits, as `graphmem ingest` does.

The raw baseline writes what a searchable store needs and nothing more: episodes, units with
their vector (computed before the clock starts) under a vector index, one decision per unit and
the entities, in one UNWIND CREATE per write. It sends the vectors as the pipeline does: as
float32 bytes to a Bolt 6 server (``neo4j.vector.Vector``; ``graphmem.adapters.neo4j.driver.Embedding``),
else as lists. The pipeline also checks every fact against what
is stored (duplicates, timelines), writes the search entries and the mention links.

Each of --rounds rounds (default 3) runs both, each from an emptied database, raw first; the
figures are the medians of the rounds (the machine is noisy: one pair of runs at 10k facts gave
ratios from 0.36 to 0.55 within the hour).

    python benchmarks/ingest_throughput.py --uri bolt://127.0.0.1:7696 --facts 100000 [--rounds 3] [--json]
"""

from __future__ import annotations

import argparse
import json
import random
import re
import time
from datetime import UTC, datetime

from _common import default_uri, median, wipe
from neo4j.vector import Vector

from graphmem import GraphMem, Settings
from graphmem.adapters.neo4j.driver import Neo4jConnection
from graphmem.domain.models import Episode, Fact, Scope, content_hash, entity_id, new_id, utcnow
from graphmem.embed import HashingEmbedder, MiniLMEmbedder

LINE = re.compile(r'^<([^>]+)>\t<([^>]+)>\t<([^>]+)>(?:\t<(occursSince|occursUntil)>\t"(\d{4})-)?')

#: BENCHMARK-ONLY RAW CYPHER: the baseline writes the same nodes and edges with no checks.
RAW_CREATE = """
UNWIND $rows AS row
CREATE (e:Episode) SET e = row.episode
WITH e, row
UNWIND row.units AS unit
CREATE (u:Unit) SET u = unit.props
WITH e, row, u, unit
CALL db.create.setNodeVectorProperty(u, 'embedding', unit.vector)
CREATE (e)-[:DERIVED]->(u)
CREATE (d:Decision) SET d = unit.decision
CREATE (e)-[:DECIDED]->(d)-[:PRODUCED]->(u)
WITH u, unit
UNWIND unit.entities AS ent
MERGE (x:Entity {id: ent.id}) ON CREATE SET x.name = ent.name, x.scope = ent.scope
CREATE (u)-[:ABOUT {role: ent.role}]->(x)
"""
#: BENCHMARK-ONLY RAW CYPHER: the baseline's vector index, as a raw store would declare it.
RAW_VECTOR_INDEX = (
    "CREATE VECTOR INDEX raw_unit_embedding IF NOT EXISTS FOR (u:Unit) ON u.embedding "
    "OPTIONS {indexConfig: {`vector.dimensions`: $dim, `vector.similarity_function`: 'cosine'}}"
)


class Precomputed:
    """The embedder of the pipeline run: the vectors of the facts' texts are computed before
    the clock starts, as for the raw baseline; any other text is embedded (and timed)."""

    def __init__(self, inner, vectors: dict[str, list[float]]):
        self.inner, self.name, self.dimension, self.vectors = inner, inner.name, inner.dimension, vectors
        self.seconds, self.texts = 0.0, 0

    def embed(self, texts):
        missing = [t for t in texts if t not in self.vectors]
        if missing:
            started = time.perf_counter()
            self.vectors.update(zip(missing, self.inner.embed(missing)))
            self.seconds += time.perf_counter() - started
            self.texts += len(missing)
        return [self.vectors[t] for t in texts]


def read_facts(path: str, n: int, seed: int) -> list[Fact]:
    years: dict[tuple[str, str, str], dict[str, int]] = {}
    with open(path, encoding="utf-8") as file:
        for line in file:
            m = LINE.match(line)
            if m:
                key = (m.group(1).replace("_", " "), m.group(2), m.group(3).replace("_", " "))
                years.setdefault(key, {})
                if m.group(4):
                    years[key][m.group(4)] = int(m.group(5))
    rng = random.Random(seed)
    keys = list(years)
    preds = sorted({p for _, p, _ in keys})
    while len(keys) < n:  # generated facts of the same shape
        i = len(keys)
        keys.append((f"Person {i}", rng.choice(preds), f"Thing {rng.randrange(5000)}"))
        years[keys[-1]] = {"occursSince": rng.randrange(1950, 2015)} if rng.random() < 0.4 else {}
    facts = []
    for s, p, o in keys[:n]:
        span = years[(s, p, o)]
        since, until = span.get("occursSince"), span.get("occursUntil")
        valid = datetime(since, 1, 1, tzinfo=UTC) if since else None
        invalid = datetime(until + 1, 1, 1, tzinfo=UTC) if until and since and until >= since else None
        facts.append(Fact(subject=s, predicate=p, object=o, valid_at=valid, invalid_at=invalid))
    return facts


def episodes_of(facts: list[Fact], scope: Scope) -> list[Episode]:
    at = datetime(2024, 1, 1, tzinfo=UTC)
    return [
        Episode(
            scope=scope, occurred_at=at, raw=f"facts {i}..{i + 9}", channel="document", facts=tuple(facts[i : i + 10])
        )
        for i in range(0, len(facts), 10)
    ]


def raw_rows(episodes: list[Episode], vectors: dict[str, list[float]], packed: bool) -> list[dict]:
    """The raw write's rows, each vector as bytes when ``packed`` (the server speaks Bolt 6)."""
    now = utcnow()
    rows = []
    for ep in episodes:
        units = []
        for f in ep.facts:
            uid = new_id()
            units.append(
                {
                    "vector": Vector(vectors[f.text()], "f32") if packed else vectors[f.text()],
                    "props": {
                        "id": uid,
                        "scope": ep.scope.key,
                        "kind": "semantic",
                        "content": f.text(),
                        "content_hash": content_hash(f.text()),
                        "episode_id": ep.id,
                        "created_at": now,
                        "valid_at": f.valid_at,
                        "invalid_at": f.invalid_at,
                        "subject": f.subject,
                        "predicate": f.predicate,
                        "object": f.object,
                    },
                    "decision": {
                        "id": new_id(),
                        "op": "ADD",
                        "reason": "new information",
                        "decided_at": now,
                        "scope": ep.scope.key,
                    },
                    "entities": [
                        {"id": entity_id(ep.scope, name), "name": name, "scope": ep.scope.key, "role": role}
                        for role, name in (("subject", f.subject), ("object", f.object))
                    ],
                }
            )
        rows.append(
            {
                "episode": {"id": ep.id, "scope": ep.scope.key, "raw": ep.raw, "occurred_at": ep.occurred_at},
                "units": units,
            }
        )
    return rows


def raw_run(
    settings: Settings, facts: list[Fact], vectors: dict[str, list[float]], dimension: int, per_write: int
) -> float:
    """Seconds of the raw baseline's writes, in its own scope of an emptied database."""
    raw_eps = episodes_of(facts, Scope.parse("user:raw-baseline"))
    conn = Neo4jConnection(settings)
    try:
        packed = conn.driver.get_server_info().protocol_version >= (6, 0)
        with conn.driver.session(database=conn.database) as session:
            session.run(RAW_VECTOR_INDEX, dim=dimension).consume()
        started = time.perf_counter()
        for i in range(0, len(raw_eps), per_write):
            rows = raw_rows(raw_eps[i : i + per_write], vectors, packed)
            with conn.driver.session(database=conn.database) as session:
                session.execute_write(lambda tx: tx.run(RAW_CREATE, rows=rows).consume())
        return time.perf_counter() - started
    finally:
        conn.close()


def pipeline_run(settings: Settings, facts: list[Fact], embedder: Precomputed, per_write: int) -> tuple[float, int]:
    """(seconds, units written) of ``GraphMem.ingest`` into an emptied database."""
    from graphmem.adapters.neo4j.index import Neo4jIndex
    from graphmem.adapters.neo4j.store import Neo4jStore

    conn = Neo4jConnection(settings)
    try:
        index = Neo4jIndex(conn, embedder)
        index.ensure()
        mem = GraphMem(Neo4jStore(conn), index, settings=settings)
        episodes = episodes_of(facts, Scope.parse("user:ingest-bench"))
        started = time.perf_counter()
        units = len(mem.ingest(episodes, batch=per_write).unit_ids)
        return time.perf_counter() - started, units
    finally:
        conn.close()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("data", nargs="?", default="../shared/bench-data/yago15k/yago15k_valid.txt")
    ap.add_argument("--uri", default=default_uri())
    ap.add_argument("--facts", type=int, default=100_000)
    ap.add_argument("--batch", type=int, default=1_000, help="facts per write")
    ap.add_argument("--embedder", choices=["hashing", "minilm"], default="hashing")
    ap.add_argument("--rounds", type=int, default=3, help="raw and pipeline runs, alternating; medians reported")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--json", action="store_true", help="print one JSON object as the last line")
    args = ap.parse_args()

    facts = read_facts(args.data, args.facts, args.seed)
    per_write = max(1, args.batch // 10)
    settings = Settings.from_env(neo4j_uri=args.uri, embedder="hashing")
    inner = MiniLMEmbedder() if args.embedder == "minilm" else HashingEmbedder(384)
    texts = sorted({f.text() for f in facts})
    vectors = dict(zip(texts, inner.embed(texts)))

    # Each run starts from an emptied database; the two alternate, so a slow spell of a noisy
    # machine (or a server still warming up) falls on both.
    raw_s, pipeline_s, units, embedder = [], [], 0, None
    for n in range(1, args.rounds + 1):
        wipe(args.uri)
        raw_s.append(raw_run(settings, facts, vectors, inner.dimension, per_write))
        wipe(args.uri)
        embedder = Precomputed(inner, dict(vectors))
        seconds, units = pipeline_run(settings, facts, embedder, per_write)
        pipeline_s.append(seconds)
        print(
            f"  round {n}: raw {raw_s[-1]:.1f} s, pipeline {seconds:.1f} s (ratio {raw_s[-1] / seconds:.2f})",
            flush=True,
        )
    raw, total = median(raw_s), median(pipeline_s)

    episodes = len(episodes_of(facts, Scope.parse("user:ingest-bench")))
    print(
        f"facts {len(facts)}, episodes {episodes}, {args.batch} facts per write, embedder {embedder.name}, "
        f"medians of {args.rounds} rounds"
    )
    print(f"{'':28} {'seconds':>9} {'episodes/s':>11} {'units/s':>9}")
    print(f"{'raw UNWIND CREATE':28} {raw:9.1f} {episodes / raw:11.0f} {len(facts) / raw:9.0f}")
    print(f"{'pipeline':28} {total:9.1f} {episodes / total:11.0f} {units / total:9.0f}")
    print(f"texts embedded during the last run (not among the facts'): {embedder.texts} in {embedder.seconds:.1f} s")
    print(f"units written {units} of {len(facts)} facts (the rest NOOP as duplicates or superseded)")
    print(f"ratio raw time / pipeline time: {raw / total:.2f}")
    if args.json:
        print(
            json.dumps(
                {
                    "facts": len(facts),
                    "units": units,
                    "raw_s": raw,
                    "pipeline_s": total,
                    "ratio": raw / total,
                    "rounds": [{"raw_s": r, "pipeline_s": t} for r, t in zip(raw_s, pipeline_s)],
                }
            )
        )


if __name__ == "__main__":
    main()
