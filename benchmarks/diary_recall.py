"""Questions that name a time, over a diary: what happened in the asked time must come first.

    python benchmarks/diary_recall.py [--sizes 250 3000] [--embedder minilm|hashing] [--uri URI] [--json]

The diary is generated (seeded): one subject; from 2026-01-05 on, every day a few events told
that evening in near-identical words ("Went to the cinema with Maria.", "Had lunch with Tom at
the cafe."), so that only their time tells them apart, and 40 open-ended facts told years before
(jobs, homes, pets, tastes: "Maria works at Initech.", "My cat is called Miso."). At the first
size each day has 3 events; at larger sizes more days and more events a day. Questions, asked
now (no as-of point, as a user asks) unless relative (then as of a later day):

  day       "What did I do on 14 March 2026?"           hit@1, hit@5: an event of that day first,
                                                        among the first 5
  relative  "What did I do yesterday?" (as of the next day), "two days ago": as day questions
  week      "What did I do in the week of 9 March 2026?", "last week" (as of a day after it):
            precision@10, the share of the first 10 that are events of the week
  month     "What did I do in March 2026?"              precision@10
  state     "Where did I live in March 2021?"           the state true then first (and, without
            a target, "Where does Maria work?", which names no time)

Targets (issue 40): day and relative hit@1 >= 0.8 and hit@5 >= 0.95; week and month
precision@10 >= 0.8; every state question answered first. With --uri the subject is written to
that Neo4j database (WIPED first); else the in-memory adapters. The last stdout line is JSON
with --json.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from graphmem import GraphMem
from graphmem.api.wiring import make_embedder
from graphmem.domain.models import Episode, Scope
from graphmem.settings.config import Settings

SCOPE = Scope(subject_type="user", subject_id="diarist")
FIRST_DAY = datetime(2026, 1, 5, tzinfo=UTC)  # a Monday
TARGETS = {
    "day_hit1": 0.8,
    "day_hit5": 0.95,
    "relative_hit1": 0.8,
    "relative_hit5": 0.95,
    "week_p10": 0.8,
    "month_p10": 0.8,
    "state_first": 1.0,
}
PEOPLE = ["Maria", "Tom", "Priya", "Ken", "Lena", "Omar"]
PLACES = ["the cafe", "the park", "the market", "the library", "the office", "the gym"]
EVENTS = [
    "Went to the cinema with {p}.",
    "Had lunch with {p} at {l}.",
    "Went for a run in {l}.",
    "Called {p} about the weekend.",
    "Met {p} at {l} after work.",
    "Cooked dinner with {p}.",
    "Bought groceries at {l}.",
    "Went to a concert with {p}.",
    "Read a book at {l}.",
    "Played tennis with {p}.",
]
#: Open-ended facts, told long before the diary: (text, when told).
FACTS = [
    ("Maria works at Initech.", "2019-03-01"),
    ("Tom works at Globex.", "2020-06-01"),
    ("Priya works at Hooli.", "2018-01-15"),
    ("Ken works at Acme.", "2021-02-01"),
    ("Lena works at Umbrella Corp.", "2017-09-01"),
    ("Omar works at Siemens.", "2022-04-01"),
    ("I work at Nokia.", "2023-01-09"),
    ("My manager is Priya.", "2023-01-09"),
    ("I moved to Graz.", "2022-05-01"),
    ("I live in Paris.", "2020-01-01"),
    ("Maria lives in Vienna.", "2019-01-01"),
    ("Tom lives in Linz.", "2020-01-01"),
    ("Priya lives in Salzburg.", "2018-03-01"),
    ("Ken lives in Tokyo.", "2021-01-01"),
    ("Lena lives in Berlin.", "2017-01-01"),
    ("Omar lives in Cairo.", "2022-01-01"),
    ("My cat is called Miso.", "2019-05-01"),
    ("My dog is called Rex.", "2020-08-01"),
    ("Maria has a parrot called Kiwi.", "2019-07-01"),
    ("Tom has two kids.", "2020-02-01"),
    ("I like jazz.", "2019-01-01"),
    ("I love sushi.", "2019-02-01"),
    ("Maria likes tennis.", "2019-03-01"),
    ("Tom enjoys hiking.", "2020-03-01"),
    ("Priya loves chess.", "2018-04-01"),
    ("Ken likes karaoke.", "2021-03-01"),
    ("I am allergic to penicillin.", "2018-06-01"),
    ("Lena is allergic to cats.", "2017-03-01"),
    ("I am married to Alex.", "2016-06-01"),
    ("Maria is married to Ken.", "2019-09-01"),
    ("My car is a blue Volvo.", "2021-09-01"),
    ("My bike is red.", "2020-04-01"),
    ("My favourite film is Alien.", "2019-10-01"),
    ("My sister lives in Oslo.", "2018-11-01"),
    ("I speak German and French.", "2016-01-01"),
    ("I play the piano.", "2015-01-01"),
    ("Omar likes football.", "2022-02-01"),
    ("Lena enjoys painting.", "2017-05-01"),
    ("Ken has a cat called Tora.", "2021-04-01"),
    ("Priya has a garden.", "2018-05-01"),
]
STATES = [
    ("Where did I live in March 2021?", "I live in Paris."),
    ("Where did I live in June 2023?", "I moved to Graz."),
    ("Where did Maria work in 2020?", "Maria works at Initech."),
    ("Who was my manager in 2024?", "My manager is Priya."),
]
#: A state question naming no time, reported beside them (no target: no window is involved).
PLAIN = [("Where does Maria work?", "Maria works at Initech.")]


@dataclass(frozen=True)
class Question:
    kind: str
    text: str
    #: The as-of point the question is asked at (None: now, as a user asks).
    asked: datetime | None
    #: The window whose events count (day, relative, week, month), or the expected unit text.
    window: tuple[datetime, datetime] | None = None
    answer: str | None = None


def diary(days: int, per_day: int, seed: int = 7) -> list[Episode]:
    rng = random.Random(seed)
    episodes = [
        Episode(
            scope=SCOPE,
            occurred_at=datetime.fromisoformat(when).replace(tzinfo=UTC) + timedelta(hours=9),
            raw=text,
        )
        for text, when in FACTS
    ]
    for day in range(days):
        date = FIRST_DAY + timedelta(days=day)
        for i, template in enumerate(rng.sample(EVENTS, per_day)):
            text = template.format(p=rng.choice(PEOPLE), l=rng.choice(PLACES))
            episodes.append(Episode(scope=SCOPE, occurred_at=date + timedelta(hours=18, minutes=10 * i), raw=text))
    return episodes


def questions(days: int, rng: random.Random, per_kind: int = 20) -> list[Question]:
    last = FIRST_DAY + timedelta(days=days - 1)
    out: list[Question] = []
    for day in rng.sample(range(days), min(per_kind, days)):
        d = FIRST_DAY + timedelta(days=day)
        out.append(Question("day", f"What did I do on {d.day} {d:%B %Y}?", None, (d, d + timedelta(days=1))))
    for day in rng.sample(range(2, days), min(per_kind, days - 2)):
        d = FIRST_DAY + timedelta(days=day)
        back = rng.choice([(1, "yesterday"), (2, "two days ago"), (3, "three days ago")])
        asked = d + timedelta(days=back[0], hours=12)
        out.append(Question("relative", f"What did I do {back[1]}?", asked, (d, d + timedelta(days=1))))
    weeks = days // 7
    for week in rng.sample(range(weeks), min(per_kind, weeks)):
        monday = FIRST_DAY + timedelta(days=7 * week)
        span = (monday, monday + timedelta(days=7))
        if rng.random() < 0.5:
            out.append(Question("week", f"What did I do in the week of {monday.day} {monday:%B %Y}?", None, span))
        else:
            out.append(Question("week", "What did I do last week?", monday + timedelta(days=9, hours=12), span))
    months = sorted({(FIRST_DAY + timedelta(days=d)).replace(day=1, hour=0) for d in range(days)})
    for start in months:
        end = (start + timedelta(days=32)).replace(day=1)
        if end <= last + timedelta(days=1):  # whole months only
            out.append(Question("month", f"What did I do in {start:%B %Y}?", None, (start, end)))
    out += [Question("state", text, None, answer=answer) for text, answer in STATES]
    out += [Question("plain_state", text, None, answer=answer) for text, answer in PLAIN]
    return out


def score(mem: GraphMem, asked: list[Question], events: set[str]) -> dict[str, float]:
    hits: dict[str, list[float]] = {}
    for q in asked:
        found = [h.unit for h in mem.recall(q.text, SCOPE, k=10, as_of=q.asked)]
        if q.answer is not None:
            hits.setdefault(f"{q.kind}_first", []).append(float(bool(found) and found[0].content == q.answer))
            continue
        inside = [u.content in events and q.window[0] <= u.time.valid_at < q.window[1] for u in found]
        if q.kind in ("day", "relative"):
            hits.setdefault(f"{q.kind}_hit1", []).append(float(any(inside[:1])))
            hits.setdefault(f"{q.kind}_hit5", []).append(float(any(inside[:5])))
        else:
            hits.setdefault(f"{q.kind}_p10", []).append(sum(inside[:10]) / 10)
    return {k: round(sum(v) / len(v), 4) for k, v in sorted(hits.items())}


def open_mem(embedder: str, uri: str | None) -> GraphMem:
    """The default stack: on Neo4j at ``uri`` (wiped first), else the in-memory adapters."""
    settings = Settings.from_env(embedder=embedder, **({"neo4j_uri": uri} if uri else {}))
    if uri:
        from _common import wipe

        wipe(uri)
        return GraphMem.connect(settings)
    from graphmem.adapters.memory import InMemoryIndex, InMemoryStore

    store = InMemoryStore()
    return GraphMem(store, InMemoryIndex(store, make_embedder(settings)), settings=settings)


def run_size(size: int, embedder: str, uri: str | None, seed: int) -> dict:
    per_day = 3 if size <= 400 else 9
    days = max(60, (size - len(FACTS)) // per_day)
    episodes = diary(days, per_day, seed)
    mem = open_mem(embedder, uri)
    try:
        started = time.perf_counter()
        mem.ingest(episodes)
        loaded = time.perf_counter() - started
        events = {e.raw for e in episodes[len(FACTS) :]}
        figures = score(mem, questions(days, random.Random(seed)), events)
    finally:
        mem.close()
    return {"episodes": len(episodes), "days": days, "per_day": per_day, "load_s": round(loaded, 1), **figures}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[250, 3000], help="episodes in the subject")
    ap.add_argument("--embedder", choices=("minilm", "hashing"), default="minilm")
    ap.add_argument("--uri", default=None, help="a Neo4j database to use (WIPED); default: in memory")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--json", action="store_true", help="print the figures as one JSON object last")
    args = ap.parse_args(argv)
    results = []
    for size in args.sizes:
        r = run_size(size, args.embedder, args.uri, args.seed)
        r["targets_met"] = all(r.get(k, 0) >= v for k, v in TARGETS.items())
        results.append(r)
        print(" ".join(f"{k}={v}" for k, v in r.items()))
    if args.json:
        print(json.dumps({"benchmark": "diary_recall", "embedder": args.embedder, "targets": TARGETS, "runs": results}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
