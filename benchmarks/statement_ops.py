"""How well the rule extractor tells what a statement does to a fact: asserts it, ends it (it
was true until then) or retracts it (it never was), and when.

    python benchmarks/statement_ops.py [--split dev|heldout|all] [--each] [--json]

Data: benchmarks/data/endings/{dev,heldout}.jsonl, one labelled statement a line: {id, text,
occurred_at, op (assert | end | retract | none), subject ("I" for the speaker), predicate,
object, time (YYYY-MM-DD: when an assertion began or an ending ended; null for retractions)}.
The held-out fifth was written apart from the rules and is never used to write them; the
figures that count are its own. Both sets were committed before the rules they measure.

Scored per split, over the statements that do something (op other than none):
  precision  of the statements given an operation, the share given the labelled one (op,
             subject, predicate and object all right)
  recall     of the statements labelled with an operation, the share given it
  time       of those given the right operation with a labelled time, the share right to the day
Targets (issue 40): precision >= 0.95, recall >= 0.85, time >= 0.9 on the held-out split.
No database: the benchmark needs only graphmem itself.
"""

from __future__ import annotations

import argparse
import json
from collections import Counter
from datetime import datetime
from pathlib import Path

from graphmem.domain.models import Episode, Scope, normalise
from graphmem.extract.rule import RuleExtractor

DATA = Path(__file__).resolve().parent / "data" / "endings"
SPLITS = ("dev", "heldout")
TARGETS = {"precision": 0.95, "recall": 0.85, "time": 0.9}
SPEAKER = Scope(subject_type="user", subject_id="speaker")


def load(split: str) -> list[dict]:
    lines = (DATA / f"{split}.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def predict(row: dict, extractor: RuleExtractor) -> dict:
    """The labelled fields as the extractor reads the statement (op "none": no fact)."""
    episode = Episode(scope=SPEAKER, occurred_at=datetime.fromisoformat(row["occurred_at"]), raw=row["text"])
    found = next((c for c in extractor.extract(episode) if c.triple is not None), None)
    if found is None:
        return {"op": "none", "subject": None, "predicate": None, "object": None, "time": None}
    t = found.triple
    when = {"assert": found.valid_at, "end": found.invalid_at}.get(found.op)
    return {
        "op": found.op,
        "subject": "I" if t.subject == SPEAKER.subject_id else t.subject,
        "predicate": t.predicate,
        "object": t.object,
        "time": when.date().isoformat() if when else None,
    }


def same_fact(got: dict, want: dict) -> bool:
    return (
        got["op"] == want["op"]
        and got["predicate"] == want["predicate"]
        and all(normalise(got[k] or "") == normalise(want[k] or "") for k in ("subject", "object"))
    )


def score(rows: list[dict], each: bool = False) -> dict:
    extractor = RuleExtractor()
    given = labelled = right = timed = right_time = 0
    confusion: Counter = Counter()
    for row in rows:
        got = predict(row, extractor)
        confusion[f"{row['op']}->{got['op']}"] += 1
        given += got["op"] != "none"
        labelled += row["op"] != "none"
        hit = row["op"] != "none" and same_fact(got, row)
        right += hit
        if hit and row["time"] is not None:
            timed += 1
            right_time += got["time"] == row["time"]
        wrong = (row["op"] != "none" or got["op"] != "none") and not (hit and got["time"] == row["time"])
        if wrong or each:
            print(
                f"{'ok  ' if not wrong else 'MISS'} {row['id']} {row['text']!r}\n"
                f"        got  {got}\n       want  { {k: row[k] for k in got} }"
            )
    return {
        "statements": len(rows),
        "precision": round(right / given, 4) if given else None,
        "recall": round(right / labelled, 4) if labelled else None,
        "time": round(right_time / timed, 4) if timed else None,
        "confusion": dict(sorted(confusion.items())),
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--split", choices=[*SPLITS, "all"], default="all")
    ap.add_argument("--each", action="store_true", help="list every statement, not only the misses")
    ap.add_argument("--json", action="store_true", help="print the figures as one JSON object last")
    args = ap.parse_args(argv)
    splits = SPLITS if args.split == "all" else (args.split,)
    figures = {split: score(load(split), args.each) for split in splits}
    for split, f in figures.items():
        print(
            f"{split}: {f['statements']} statements: precision {f['precision']}, recall {f['recall']}, "
            f"time to the day {f['time']}  (targets on heldout: {TARGETS})"
        )
    if "heldout" in figures:
        held = figures["heldout"]
        figures["targets_met"] = all((held[k] or 0) >= v for k, v in TARGETS.items())
    if args.json:
        print(json.dumps(figures))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
