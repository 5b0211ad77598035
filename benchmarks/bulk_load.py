"""Bulk loads (`ingest --bulk`, `import --bulk`) against a raw UNWIND CREATE of the same nodes,
in the same run on the same server (docs/benchmarks.md, "Bulk loads").

Facts are generated: --facts facts about people (a tenth as many people), each a predicate
(where they live and work, single-valued; what they like, many-valued) with a value over the
years 1990-2024. They arrive ten to an episode in random order of their valid times, and one
in ten restates an earlier one (its slot and value, a valid time of its own).

Figures, each beside its baseline:

- ``bulk``: ``GraphMem.ingest(bulk=True)``, vectors computed before the clock starts (as for
  the raw baseline of benchmarks/ingest_throughput.py, whose writes it reuses).
- ``--file``: the same facts as an export with a vector on every unit (generated before the
  clock starts), read and loaded as `graphmem import --bulk` does, until the vector
  and fulltext indexes are ONLINE and every unit has its search entries.
- ``--minilm``: ``ingest(bulk=True)`` embedding with MiniLM as it goes (no vectors given),
  beside MiniLM's own throughput on the same texts.

    flock /tmp/graphmem-bench.lock python benchmarks/bulk_load.py --uri bolt://127.0.0.1:7860 \\
        --facts 100000 [--file [--export PATH] [--footprint]] [--minilm] [--json]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import resource
import shutil
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from urllib.parse import urlsplit

from _common import wipe
from graphiti._footprint import MeasuredNeo4j, footprint
from ingest_throughput import Precomputed, pipeline_run, raw_run

from graphmem import GraphMem, Settings
from graphmem.adapters.memory import InMemoryIndex, InMemoryStore
from graphmem.adapters.neo4j.driver import Neo4jConnection
from graphmem.adapters.neo4j.index import Neo4jIndex
from graphmem.adapters.neo4j.store import Neo4jStore
from graphmem.domain.models import RECORD_KINDS, Episode, Fact, Scope
from graphmem.embed import HashingEmbedder, MiniLMEmbedder
from graphmem.faces.episode_lines import ExportFile
from graphmem.pipelines import bulk, exchange, shapes

PREDICATES = {"lives_in": True, "works_at": True, "likes": False}
VALUES = {
    "lives_in": [f"City {i}" for i in range(500)],
    "works_at": [f"Company {i}" for i in range(2000)],
    "likes": [f"Hobby {i}" for i in range(300)],
}
FILE_SCOPE = Scope.parse("user:file-bench")
#: Facts decided at once when an export is generated (``write_export``).
CHUNK = 100_000
#: BENCHMARK-ONLY RAW CYPHER: units without a live search entry (0 once every one is searchable).
RAW_UNSEARCHABLE = (
    "MATCH (u:Unit) WHERE u.scope = $scope AND NOT EXISTS { MATCH (e:Entry {unit_id: u.id}) } RETURN count(u) AS n"
)
#: BENCHMARK-ONLY RAW CYPHER: indexes not ONLINE yet.
RAW_POPULATING = "SHOW INDEXES YIELD state WHERE state <> 'ONLINE' RETURN count(*) AS n"


def generate(n: int, seed: int, first: int = 0) -> list[Fact]:
    """N facts about n/10 people, numbered from ``first``."""
    rng = random.Random(seed)
    people = [f"Person {i}" for i in range(first, first + max(1, n // 10))]
    facts: list[Fact] = []
    while len(facts) < n:
        if facts and rng.random() < 0.1:  # a restatement: the same slot and value, told again
            told = rng.choice(facts)
            facts.append(told.model_copy(update={"valid_at": datetime(rng.randrange(1990, 2025), 1, 1, tzinfo=UTC)}))
            continue
        predicate = rng.choice(sorted(PREDICATES))
        facts.append(
            Fact(
                subject=rng.choice(people),
                predicate=predicate,
                object=rng.choice(VALUES[predicate]),
                single_valued=PREDICATES[predicate],
                valid_at=datetime(rng.randrange(1990, 2025), rng.randrange(1, 13), 1, tzinfo=UTC),
            )
        )
    return facts


def episodes_of(facts: list[Fact], scope: Scope, first: int = 0) -> list[Episode]:
    at = datetime(2025, 1, 1, tzinfo=UTC)
    return [
        Episode(
            id=f"ep{first + i}",
            scope=scope,
            occurred_at=at,
            raw=f"facts {i}..{i + 9}",
            channel="document",
            facts=tuple(facts[i : i + 10]),
        )
        for i in range(0, len(facts), 10)
    ]


def connect(settings: Settings, embedder) -> GraphMem:
    conn = Neo4jConnection(settings)
    index = Neo4jIndex(conn, embedder)
    index.ensure()
    return GraphMem(Neo4jStore(conn), index, settings=settings)


def bulk_run(settings: Settings, facts: list[Fact], embedder, per_write: int) -> tuple[float, int]:
    """(seconds, units) of ``ingest(bulk=True)`` into an emptied database."""
    mem = connect(settings, embedder)
    try:
        started = time.perf_counter()
        units = len(mem.ingest(episodes_of(facts, Scope.parse("user:bulk-bench")), batch=per_write, bulk=True).unit_ids)
        return time.perf_counter() - started, units
    finally:
        mem.close()


def write_export(n: int, seed: int, embedder, per_write: int, path: Path) -> int:
    """N generated facts decided in memory, written as an export with every unit's vector;
    units. Decided ``CHUNK`` facts at a time, each chunk about people of its own (so what one
    chunk decides does not depend on another), which bounds the memory at a million."""
    scope = FILE_SCOPE
    units, entities = 0, set()
    with tempfile.TemporaryDirectory() as folder, contextlib.ExitStack() as files:
        kinds = {kind: files.enter_context(open(Path(folder) / kind, "w")) for kind in RECORD_KINDS}
        for first in range(0, n, CHUNK):
            facts = generate(min(CHUNK, n - first), seed + first, first // 10)
            store = InMemoryStore()
            GraphMem(store, InMemoryIndex(store, embedder)).ingest(episodes_of(facts, scope, first), batch=per_write)
            plan = bulk.plan_of(store, scope, store.tables.vectors, embedder.name)
            for kind, records in plan.records.items():
                for _, r in records:
                    if kind == "entity" and r.id in entities:  # a value named in an earlier chunk
                        continue
                    entities.update([r.id] if kind == "entity" else [])
                    line = {"type": kind, **shapes.SHAPES[kind](r)}
                    if kind == "unit":
                        line["vector"] = plan.vectors[r.id]
                        units += 1
                    kinds[kind].write(json.dumps(line) + "\n")
        header = shapes.header(scope, datetime.now(UTC), exchange.FORMAT, exchange.VERSION)
        with path.open("w") as out:
            out.write(json.dumps({**header, "vector_model": embedder.name}) + "\n")
            for part in kinds.values():
                part.close()
                with open(part.name) as records:
                    shutil.copyfileobj(records, out)
    return units


def file_run(settings: Settings, embedder, path: Path) -> dict:
    """Seconds of checking the export (its first pass), of loading it (the second), as `graphmem
    import --bulk FILE` runs them, then until every index is ONLINE and every unit of the
    subject has its search entries; and this process's peak memory."""
    started = time.perf_counter()
    mem = connect(settings, embedder)
    marks: dict[str, float] = {}
    try:
        with path.open("rb") as stream:
            source = ExportFile(stream, str(path))
            result = mem.import_(
                source, bulk=True, progress=lambda n: marks.setdefault("checked", time.perf_counter() - started)
            )
        imported = time.perf_counter() - started
        with mem.store.conn.driver.session(database=mem.store.conn.database) as session:
            while (
                session.run(RAW_POPULATING).single()["n"]
                or session.run(RAW_UNSEARCHABLE, scope=Scope.parse(result["scope"], result["project"]).key).single()[
                    "n"
                ]
            ):
                time.sleep(0.5)
    finally:
        mem.close()
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return {
        "units": result["imported"]["unit"],
        "read_s": marks["checked"],
        "import_s": imported,
        "loaded_s": time.perf_counter() - started,
        "peak_mb": peak,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--uri", default=os.environ.get("NEO4J_URI", "bolt://127.0.0.1:7860"))
    ap.add_argument("--facts", type=int, default=100_000)
    ap.add_argument("--batch", type=int, default=1_000, help="facts per write")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--skip-raw", action="store_true", help="only the --file and --minilm figures")
    ap.add_argument("--file", action="store_true", help="also load an export with vectors, until searchable")
    ap.add_argument("--export", type=Path, help="the --file export: generated here once, then reused")
    ap.add_argument(
        "--footprint",
        action="store_true",
        help="--file on a fresh server at --uri's port, started here without preallocated files; then its "
        "store bytes a unit after a checkpoint (it stops the server)",
    )
    ap.add_argument("--heap", default="4g", help="the --footprint server's heap")
    ap.add_argument("--pagecache", default="8g", help="the --footprint server's page cache")
    ap.add_argument("--minilm", action="store_true", help="also bulk ingest embedding with MiniLM")
    ap.add_argument("--json", action="store_true", help="print one JSON object as the last line")
    args = ap.parse_args()

    # Held only for the runs that write them (--file generates its export a chunk at a time).
    facts = generate(args.facts, args.seed) if not args.skip_raw or args.minilm else []
    per_write = max(1, args.batch // 10)
    settings = Settings.from_env(neo4j_uri=args.uri, embedder="hashing")
    hashing = HashingEmbedder(384)
    texts = sorted({f.text() for f in facts})
    result: dict = {"facts": args.facts, "episodes": -(-args.facts // 10), "facts_per_write": args.batch}

    if not args.skip_raw:
        vectors = dict(zip(texts, hashing.embed(texts)))
        wipe(args.uri)
        raw = raw_run(settings, facts, vectors, hashing.dimension, per_write)
        wipe(args.uri)
        seconds, units = bulk_run(settings, facts, Precomputed(hashing, dict(vectors)), per_write)
        wipe(args.uri)
        ordinary, _ = pipeline_run(settings, facts, Precomputed(hashing, dict(vectors)), per_write)
        result.update(raw_s=raw, bulk_s=seconds, ingest_s=ordinary, units=units, ratio=raw / seconds)
        result["ingest_ratio"] = raw / ordinary
        print(f"raw UNWIND CREATE {raw:8.1f} s  {len(facts) / raw:8.0f} facts/s")
        print(f"ingest --bulk     {seconds:8.1f} s  {len(facts) / seconds:8.0f} facts/s ({units} units)")
        print(f"ingest            {ordinary:8.1f} s  {len(facts) / ordinary:8.0f} facts/s (record by record)")
        print(f"ratio raw time / bulk time: {raw / seconds:.2f}; raw time / ingest time: {raw / ordinary:.2f}")

    if args.file:
        with tempfile.TemporaryDirectory() as folder:
            path = args.export or Path(folder) / "export.jsonl"
            started = time.perf_counter()
            if not path.exists():
                write_export(args.facts, args.seed, hashing, per_write, path)
            made, size = time.perf_counter() - started, path.stat().st_size
            server = None
            if args.footprint:  # a server of its own, whose store files hold what it wrote
                server = MeasuredNeo4j(port=urlsplit(args.uri).port, heap=args.heap, pagecache=args.pagecache)
                server.stop()
                shutil.rmtree(server.instance_dir / "data", ignore_errors=True)
                server.start()
            wipe(args.uri)
            loaded = file_run(settings, hashing, path)
        units = loaded.pop("units")
        result["file"] = {"units": units, "generate_s": made, "bytes": size, **loaded}
        if server is not None:
            measured = footprint(server, units)
            result["file"]["footprint"] = measured
            print(
                f"store after a checkpoint: {measured['store_bytes']['total'] / units:,.0f} bytes a unit "
                f"(heap {args.heap}, page cache {args.pagecache}; Neo4j RSS {measured['rss_mb']:.0f} MB, "
                f"peak {measured['peak_rss_mb']:.0f} MB); the server is left stopped"
            )
        print(
            f"export with vectors ({units} units, {size / 1e9:.2f} GB, made in {made:.0f} s): checked in "
            f"{loaded['read_s']:.1f} s, import --bulk {loaded['import_s']:.1f} s, loaded and searchable "
            f"{loaded['loaded_s']:.1f} s ({units / loaded['loaded_s']:.0f} units/s); peak {loaded['peak_mb']:.0f} MB"
        )

    if args.minilm:
        floor_embedder = MiniLMEmbedder()
        floor_embedder.embed(["a warm-up text"])  # loaded before the clock starts
        started = time.perf_counter()
        for start in range(0, len(texts), args.batch):  # in calls the size of a write's, as the run embeds
            floor_embedder.embed(texts[start : start + args.batch])
        floor = time.perf_counter() - started
        # Another instance: each keeps a cache of what it embedded, which would serve the run.
        minilm = MiniLMEmbedder()
        minilm.embed(["a warm-up text"])
        wipe(args.uri)  # its vector index is made again for MiniLM's model
        seconds, units = bulk_run(settings, facts, minilm, per_write)
        result["minilm"] = {"bulk_s": seconds, "embed_s": floor, "texts": len(texts), "ratio": floor / seconds}
        print(
            f"ingest --bulk with MiniLM {seconds:.1f} s ({len(facts) / seconds:.0f} facts/s); MiniLM alone on the "
            f"{len(texts)} texts {floor:.1f} s ({len(texts) / floor:.0f} texts/s): {floor / seconds:.2f} of its floor"
        )
    if args.json:
        print(json.dumps(result))


if __name__ == "__main__":
    main()
