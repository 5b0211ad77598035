"""SituatedQA (temporal) as-of exact match of GraphMem.recall over structured, single-valued facts.

    python benchmarks/situatedqa_asof.py [DATA] --uri bolt://127.0.0.1:7695 [--embedder minilm|hashing] [--json]
        [--limit N] [--modes hybrid lexical [semantic]]

WIPES THE TARGET DATABASE. Point it at a dedicated benchmark server, never the test one.

DATA is temp.dev.jsonl (see ../shared/bench-data/README.md). Per question, its
context_answer_pairs with date_type "start" become facts, oldest first: subject = the question
(the pair's edited_question without its " as of ..." suffix), predicate "answer", object = the
pair's first answer, content "<question>: <answer>", single_valued true, valid_at = the pair's
date (year -> 1 January, "Month DD, YYYY" -> that day, "Month YYYY" -> the 1st; UTC),
invalid_at = the next later start date of the same question, if any. One episode per question
carries its facts; everything goes into one scope (user:situatedqa) through GraphMem.ingest,
200 questions per call (--write-per-fact: each fact its own episode and its own call).

Scored, per mode, on the top hit's triple object, normalised (lower-case, punctuation and the
articles a/an/the removed, whitespace collapsed) and compared with each of the pair's answers:
  as-of:   each start pair asked as of its date + 1 day (inside its interval);
  current: the question asked with no date, against the answers of its latest start pair.
Also printed: how often the top hit is a fact of the asked question at all (subject match), so
retrieval misses and temporal misses can be told apart.
"""

from __future__ import annotations

import argparse
import json
import re
import string
import sys
import time
from collections import defaultdict
from datetime import UTC, datetime, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import default_uri, median, pct, wipe

from graphmem import GraphMem
from graphmem.domain.models import Episode, Fact, Scope
from graphmem.settings.config import Settings

SUBJECT = "user:situatedqa"
_SUFFIX = re.compile(r"\s+as of\s+.*$", re.IGNORECASE)
_ARTICLES = re.compile(r"\b(a|an|the)\b")
_PUNCT = str.maketrans("", "", string.punctuation)


def parse_date(text: str) -> datetime:
    text = " ".join(text.replace(",", ", ").split()).replace(" ,", ",")
    for fmt in ("%Y", "%B %d, %Y", "%B %Y", "%b %d, %Y", "%b %Y", "%Y-%m-%d", "%Y-%m"):
        try:
            return datetime.strptime(text, fmt).replace(tzinfo=UTC)
        except ValueError:
            pass
    raise ValueError(f"unparsed date {text!r}")


def norm(text: str) -> str:
    text = text.lower().translate(_PUNCT)
    return " ".join(_ARTICLES.sub(" ", text).split())


def em(predicted: str | None, answers: list[str]) -> bool:
    return predicted is not None and any(norm(predicted) == norm(a) for a in answers)


def build(rows: list[dict]):
    """(episodes, asks, currents, counts): asks = [(question, as_of, answers, n_starts)],
    currents = [(question, answers, n_starts)]."""
    scope = Scope.parse(SUBJECT)
    episodes, asks, currents = [], [], []
    counts = defaultdict(int)
    for row in rows:
        pairs = [p for p in row["context_answer_pairs"] if p["date_type"] == "start" and p["answers"]]
        if not pairs:
            continue
        counts["questions"] += 1
        dated = sorted(((parse_date(p["date"]), p) for p in pairs), key=lambda dp: dp[0])
        facts = []
        for i, (start, p) in enumerate(dated):
            question = _SUFFIX.sub("", p["edited_question"]).strip()
            later = [d for d, _ in dated[i + 1 :] if d > start]
            if i + 1 < len(dated) and dated[i + 1][0] == start:
                counts["pairs sharing a start date with the next"] += 1
            end = later[0] if later else None
            answer = p["answers"][0]
            facts.append(
                Fact(
                    subject=question,
                    predicate="answer",
                    object=answer,
                    content=f"{question}: {answer}",
                    single_valued=True,
                    valid_at=start,
                    invalid_at=end,
                )
            )
            asks.append((question, start + timedelta(days=1), p["answers"], len(dated)))
            counts["facts"] += 1
        latest = dated[-1][1]
        currents.append((_SUFFIX.sub("", latest["edited_question"]).strip(), latest["answers"], len(dated)))
        raw = " | ".join(f.content for f in facts)
        episodes.append(
            Episode(
                id=f"situatedqa:{row['id']}",
                scope=scope,
                occurred_at=facts[-1].valid_at,
                raw=raw,
                channel="document",
                facts=tuple(facts),
            )
        )
    return episodes, asks, currents, counts


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("data", nargs="?", default="../shared/bench-data/situatedqa/temp.dev.jsonl", type=Path)
    ap.add_argument("--uri", default=default_uri())
    ap.add_argument("--embedder", choices=("minilm", "hashing"), default="minilm")
    ap.add_argument("--limit", type=int, default=None, help="only the first N questions that have start pairs")
    ap.add_argument("--modes", nargs="+", default=["hybrid", "lexical"], choices=["hybrid", "lexical", "semantic"])
    ap.add_argument(
        "--write-per-fact",
        action="store_true",
        help="write each fact as its own episode in its own ingest call (default: one episode "
        "per question, 200 per call)",
    )
    ap.add_argument("--json", action="store_true", help="print one JSON object as the last line")
    args = ap.parse_args()

    rows = [json.loads(line) for line in args.data.read_text().splitlines() if line.strip()]
    episodes, asks, currents, counts = build(rows)
    if args.limit is not None:
        keep = {e.facts[0].subject for e in episodes[: args.limit]}
        episodes = episodes[: args.limit]
        asks = [a for a in asks if a[0] in keep]
        currents = [c for c in currents if c[0] in keep]
    subjects = [f.subject for e in episodes for f in e.facts[:1]]
    dup_subjects = len(subjects) - len(set(subjects))

    wipe(args.uri)
    mem = GraphMem.connect(Settings.from_env(neo4j_uri=args.uri, embedder=args.embedder))
    if hasattr(mem.index.embedder, "load"):
        mem.index.embedder.load()
    t0 = time.perf_counter()
    decisions: dict[str, int] = defaultdict(int)
    failed = 0
    if args.write_per_fact:  # each fact its own episode and its own write (one batch each)
        writes = [
            [
                Episode(
                    id=f"{e.id}:{i}",
                    scope=e.scope,
                    occurred_at=f.valid_at,
                    raw=f.content,
                    channel="document",
                    facts=(f,),
                )
            ]
            for e in episodes
            for i, f in enumerate(e.facts)
        ]
    else:  # one episode per question, 200 questions per write
        writes = [episodes[start : start + 200] for start in range(0, len(episodes), 200)]
    for batch in writes:
        report = mem.ingest(batch)
        for op, n in report.decisions.items():
            decisions[op] += n
        failed += len(report.failed)
    ingest_s = time.perf_counter() - t0
    n_facts = sum(len(e.facts) for e in episodes)
    print(
        f"{len(rows)} records, {counts['questions']} with start pairs; used {len(episodes)} questions "
        f"(limit {args.limit}), {n_facts} facts; questions whose subject text repeats another's: {dup_subjects}; "
        f"pairs sharing a start date with the next: {counts['pairs sharing a start date with the next']}"
    )
    print(
        f"writes: {'one per fact' if args.write_per_fact else 'one episode per question, 200 per call'}; "
        f"ingest {ingest_s:.1f} s ({n_facts / ingest_s:.1f} facts/s); decisions {dict(decisions)}; failed {failed}",
        flush=True,
    )

    results = {}
    for mode in args.modes:
        r = defaultdict(lambda: [0, 0, 0])  # group -> [n, em, subject match]
        lat = []
        for question, as_of, answers, n_starts in asks:
            t = time.perf_counter()
            hits = mem.recall(question, SUBJECT, k=5, as_of=as_of, mode=mode)
            lat.append(1000 * (time.perf_counter() - t))
            top = hits[0].unit.triple if hits and hits[0].unit.triple else None
            for group in ("as-of all", "as-of 1 start" if n_starts == 1 else "as-of 2+ starts"):
                r[group][0] += 1
                r[group][1] += em(top.object if top else None, answers)
                r[group][2] += bool(top and top.subject == question)
        for question, answers, n_starts in currents:
            t = time.perf_counter()
            hits = mem.recall(question, SUBJECT, k=5, mode=mode)
            lat.append(1000 * (time.perf_counter() - t))
            top = hits[0].unit.triple if hits and hits[0].unit.triple else None
            for group in ("current all", "current 1 start" if n_starts == 1 else "current 2+ starts"):
                r[group][0] += 1
                r[group][1] += em(top.object if top else None, answers)
                r[group][2] += bool(top and top.subject == question)
        results[mode] = r
        print(f"[{mode}] done: recall latency p50 {median(lat):.0f} ms, p95 {pct(lat, 95):.0f} ms", flush=True)
    mem.close()

    print()
    print(f"embedder={args.embedder}  top hit of recall(k=5), normalised exact match")
    print(f"{'group':<20}{'n':>6}  " + "".join(f"{m + ' EM':>13}{'(subj ok)':>10}" for m in args.modes))
    for group in (
        "as-of all",
        "as-of 1 start",
        "as-of 2+ starts",
        "current all",
        "current 1 start",
        "current 2+ starts",
    ):
        n = results[args.modes[0]][group][0]
        if not n:
            continue
        cells = "".join(f"{results[m][group][1] / n:>13.3f}{results[m][group][2] / n:>10.3f}" for m in args.modes)
        print(f"{group:<20}{n:>6}  {cells}")
    if args.json:
        print(
            json.dumps(
                {
                    "embedder": args.embedder,
                    "facts": n_facts,
                    "ingest_s": ingest_s,
                    **{
                        mode: {
                            group: {"n": n, "em": em_n / n, "subject_ok": subj / n}
                            for group, (n, em_n, subj) in results[mode].items()
                            if n
                        }
                        for mode in args.modes
                    },
                }
            )
        )


if __name__ == "__main__":
    main()
