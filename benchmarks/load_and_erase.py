"""Load and erasure figures (issue 6).

1. 8 concurrent writers x 1,000 facts into overlapping scopes: two writers per scope, each
   writing a shuffled copy of the same scope's fact pool (so every fact is written twice, and
   single-valued slots are contended). Prints writes/s, retries (guard conflicts re-planned),
   errors surfaced to writers, and duplicates found (visible units sharing a content hash, or
   more than one current value in a single-valued slot) — which must be 0.
2. Erasure time for one subject holding --erase-units units (default 100k), among others.

    python benchmarks/load_and_erase.py --uri bolt://127.0.0.1:7697
"""

from __future__ import annotations

import argparse
import json
import random
import threading
import time
from collections import Counter
from datetime import UTC, datetime

from _common import default_uri, wipe

from graphmem import GraphMem, Settings
from graphmem.domain.models import (
    Episode,
    Fact,
    MemoryKind,
    MemoryUnit,
    Page,
    Scope,
    SourceRef,
    TemporalMeta,
    Triple,
    UnitFilter,
    WriteBatch,
    content_hash,
    utcnow,
)

WRITERS, FACTS, SCOPES = 8, 1_000, 4


def pool(scope_no: int) -> list[Fact]:
    rng = random.Random(scope_no)
    facts = []
    for i in range(FACTS):
        if i % 4 == 0:  # contended single-valued slots: 25 people move between cities
            person = f"Person {i % 100}"
            facts.append(
                Fact(
                    subject=person,
                    predicate="lives_in",
                    object=f"City {rng.randrange(30)}",
                    single_valued=True,
                    valid_at=datetime(2000 + i % 20, 1, 1, tzinfo=UTC),
                )
            )
        else:
            facts.append(Fact(subject=f"Person {i}", predicate="likes", object=f"Thing {rng.randrange(500)}"))
    return facts


def duplicates(mem: GraphMem, scope: Scope) -> int:
    units, page = [], Page(limit=5_000)
    while chunk := mem.store.list_units(scope, UnitFilter(), page):
        units += chunk
        page = Page(offset=page.offset + page.limit, limit=page.limit)
    by_hash = Counter((u.kind, u.content_hash) for u in units)
    by_slot = Counter(u.triple.slot(scope) for u in units if u.triple and u.triple.single_valued)
    return sum(n - 1 for n in by_hash.values() if n > 1) + sum(n - 1 for n in by_slot.values() if n > 1)


def load(settings: Settings) -> dict:
    scopes = [Scope.parse(f"user:load-{i}") for i in range(SCOPES)]
    pools = [pool(i) for i in range(SCOPES)]
    stats = Counter()
    errors: list[str] = []
    lock = threading.Lock()

    def writer(n: int) -> None:
        scope_no = n % SCOPES
        facts = pools[scope_no][:]
        random.Random(100 + n).shuffle(facts)
        with GraphMem.connect(settings) as mem:
            for i in range(0, len(facts), 50):
                batch = [
                    Episode(
                        scope=scopes[scope_no],
                        occurred_at=datetime(2024, 1, 1, tzinfo=UTC),
                        raw=f"writer {n} batch {i}",
                        facts=(f,),
                    )
                    for f in facts[i : i + 50]
                ]
                try:
                    report = mem.ingest(batch)
                except Exception as exc:  # counted: the target is none surfaced
                    with lock:
                        errors.append(f"{type(exc).__name__}: {exc}")
                    continue
                with lock:
                    stats["facts"] += len(batch)
                    stats["retries"] += report.conflicts
                    stats.update(report.decisions)

    started = time.perf_counter()
    threads = [threading.Thread(target=writer, args=(n,)) for n in range(WRITERS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    elapsed = time.perf_counter() - started
    with GraphMem.connect(settings) as mem:
        dups = sum(duplicates(mem, s) for s in scopes)
    print(f"load: {WRITERS} writers x {FACTS} facts into {SCOPES} scopes (2 writers per scope, same facts)")
    print(f"  {stats['facts']} facts in {elapsed:.1f} s = {stats['facts'] / elapsed:.0f} writes/s")
    print(f"  decisions: {dict((k, stats[k]) for k in ('ADD', 'UPDATE', 'DELETE', 'NOOP'))}")
    print(f"  retries (guard conflicts re-planned): {stats['retries']}")
    print(f"  errors surfaced to writers: {len(errors)}" + (f" (first: {errors[0]})" if errors else ""))
    print(f"  duplicates found: {dups}")
    return {
        "writers": WRITERS,
        "facts": stats["facts"],
        "seconds": elapsed,
        "writes_per_s": stats["facts"] / elapsed,
        "decisions": {k: stats[k] for k in ("ADD", "UPDATE", "DELETE", "NOOP")},
        "retries": stats["retries"],
        "errors": len(errors),
        "duplicates": dups,
    }


def erase(settings: Settings, n: int) -> dict:
    victim, bystander = Scope.parse("user:erase-victim"), Scope.parse("user:erase-bystander")
    now = utcnow()
    with GraphMem.connect(settings) as mem:
        for scope, count in ((victim, n), (bystander, 1_000)):
            for start in range(0, count, 5_000):
                units = tuple(
                    MemoryUnit(
                        kind=MemoryKind.semantic,
                        scope=scope,
                        content=f"fact {i} of {scope.subject_id}",
                        content_hash=content_hash(f"fact {i} of {scope.subject_id}"),
                        source=SourceRef(episode_id="bulk", channel="document", extractor_version="bench"),
                        time=TemporalMeta(created_at=now),
                        triple=Triple(subject=f"Entity {i % 1000}", predicate="rel", object=f"Other {i % 777}"),
                    )
                    for i in range(start, min(count, start + 5_000))
                )
                mem.store.commit(WriteBatch(units=units), scope)
        started = time.perf_counter()
        counts = mem.forget(victim, batch=5_000)
        elapsed = time.perf_counter() - started
        left = len(mem.store.list_units(bystander, UnitFilter(include_expired=True), Page(limit=10_000)))
    print(
        f"erasure: subject with {n} units ({counts['entities']} entities) erased in {elapsed:.1f} s "
        f"({n / elapsed:.0f} units/s); counts {counts}; bystander units left {left} of 1000"
    )
    return {"units": n, "seconds": elapsed, "units_per_s": n / elapsed, "counts": counts, "bystander_left": left}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--uri", default=default_uri())
    ap.add_argument("--erase-units", type=int, default=100_000)
    ap.add_argument("--json", action="store_true", help="print one JSON object as the last line")
    args = ap.parse_args()
    wipe(args.uri)
    settings = Settings.from_env(neo4j_uri=args.uri, embedder="hashing")
    figures = {"load": load(settings), "erasure": erase(settings, args.erase_units)}
    if args.json:
        print(json.dumps(figures, default=str))


if __name__ == "__main__":
    main()
