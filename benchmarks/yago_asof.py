"""YAGO15k as-of exact match: every closed `playsFor` interval becomes a structured fact
(valid from the first day of its start year to the end of its last year); for sampled
(player, year) pairs we ask "which club did X play for in YEAR?" as of mid-year and score set
exact match of the clubs recalled against the clubs whose interval contains that year.

    python benchmarks/yago_asof.py ../shared/bench-data/yago15k/yago15k_valid.txt --uri bolt://127.0.0.1:7691 [--json]

WIPES THE TARGET DATABASE, as the other benchmarks do: an index another run left with another
embedder's dimension would refuse this one's vectors.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import time
import uuid
from collections import defaultdict
from datetime import UTC, datetime

from _common import default_uri, wipe

from graphmem import GraphMem, Settings
from graphmem.domain.models import Episode, Fact, Scope

LINE = re.compile(r'^<([^>]+)>\t<playsFor>\t<([^>]+)>\t<(occursSince|occursUntil)>\t"(\d{4})-')


def read_intervals(path: str) -> list[tuple[str, str, int, int]]:
    since: dict[tuple[str, str], int] = {}
    until: dict[tuple[str, str], int] = {}
    with open(path, encoding="utf-8") as file:
        for line in file:
            m = LINE.match(line)
            if m:
                (since if m.group(3) == "occursSince" else until)[(m.group(1), m.group(2))] = int(m.group(4))
    return [
        (p, c, since[(p, c)], until[(p, c)]) for p, c in since if (p, c) in until and since[(p, c)] <= until[(p, c)]
    ]


def name(token: str) -> str:
    return token.replace("_", " ")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("data", nargs="?", default="../shared/bench-data/yago15k/yago15k_valid.txt")
    ap.add_argument("--uri", default=default_uri())
    ap.add_argument("--embedder", default="hashing", choices=["hashing", "minilm"])
    ap.add_argument("--questions", type=int, default=500)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--json", action="store_true", help="print one JSON object as the last line")
    args = ap.parse_args()

    intervals = read_intervals(args.data)
    scope = Scope.parse(f"user:yago-{uuid.uuid4().hex[:8]}")
    episodes = [
        Episode(
            id=f"{scope.subject_id}:{i}",
            scope=scope,
            occurred_at=datetime(2024, 1, 1, tzinfo=UTC),
            raw=f"{name(p)} played for {name(c)} from {a} to {b}",
            channel="document",
            facts=(
                Fact(
                    subject=name(p),
                    predicate="plays_for_club",
                    object=name(c),
                    content=f"{name(p)} plays for {name(c)}",
                    valid_at=datetime(a, 1, 1, tzinfo=UTC),
                    invalid_at=datetime(b + 1, 1, 1, tzinfo=UTC),
                ),
            ),
        )
        for i, (p, c, a, b) in enumerate(intervals)
    ]
    truth: dict[tuple[str, int], set[str]] = defaultdict(set)
    for p, c, a, b in intervals:
        for year in range(a, b + 1):
            truth[(name(p), year)].add(name(c))
    rng = random.Random(args.seed)
    asks = rng.sample(sorted(truth), min(args.questions, len(truth)))

    wipe(args.uri)
    with GraphMem.connect(Settings.from_env(neo4j_uri=args.uri, embedder=args.embedder)) as mem:
        started = time.perf_counter()
        for start in range(0, len(episodes), 1000):
            mem.ingest(episodes[start : start + 1000])
        ingest_s = time.perf_counter() - started
        exact = top1 = 0
        latencies = []
        for player, year in asks:
            t0 = time.perf_counter()
            hits = mem.recall(
                f"which club did {player} play for in {year}?",
                scope,
                k=5,
                as_of=datetime(year, 7, 1, tzinfo=UTC),
            )
            latencies.append(time.perf_counter() - t0)
            clubs = {h.unit.triple.object for h in hits if h.unit.triple and h.unit.triple.subject == player}
            exact += clubs == truth[(player, year)]
            top1 += (
                bool(hits)
                and hits[0].unit.triple.object in truth[(player, year)]
                and hits[0].unit.triple.subject == player
            )
    latencies.sort()
    print(f"facts: {len(intervals)} closed playsFor intervals; questions: {len(asks)}; embedder: {args.embedder}")
    print(f"ingest: {ingest_s:.1f} s ({len(intervals) / ingest_s:.0f} facts/s)")
    print(f"as-of set exact match (top 5): {exact / len(asks):.3f}")
    print(f"as-of top-1 correct club:      {top1 / len(asks):.3f}")
    p50, p95 = 1000 * latencies[len(latencies) // 2], 1000 * latencies[int(len(latencies) * 0.95)]
    print(f"recall latency p50 {p50:.1f} ms, p95 {p95:.1f} ms")
    if args.json:
        print(
            json.dumps(
                {
                    "facts": len(intervals),
                    "questions": len(asks),
                    "embedder": args.embedder,
                    "ingest_s": ingest_s,
                    "set_exact_match": exact / len(asks),
                    "top1": top1 / len(asks),
                    "p50_ms": p50,
                    "p95_ms": p95,
                }
            )
        )


if __name__ == "__main__":
    main()
