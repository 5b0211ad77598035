"""How well graphmem.domain.timewords.find_window finds the time window a question names, and how fast.

    python benchmarks/time_expressions.py [DATA] [--repeat N] [--each] [--json]

DATA defaults to benchmarks/data/time_expressions.jsonl: one JSON object a line,
{question, anchor (ISO 8601, aware), expected: {start, end} | null, style}. The set mixes
diary, chat and encyclopedic phrasing, and holds questions that name no time (expected null).

Scored (a window counts as found when find_window returns one):
  precision  of the questions given a window, the share that name a time
  recall     of the questions that name a time, the share given a window
  exact      of the questions that name a time, the share given exactly the expected window
  accuracy   of all questions, the share given the expected window or rightly none
Timed: one warm-up pass, then every question parsed --repeat times; the mean per call is
reported for questions given a window and for questions given none (p50 / p99 / max of the
per-question means beside it). Wrong answers are listed; --each lists every question's time.
No database: the benchmark needs only graphmem itself.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from datetime import datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import median, pct

from graphmem.domain.timewords import find_window

DEFAULT_DATA = Path(__file__).resolve().parent / "data" / "time_expressions.jsonl"


def load(path: Path) -> list[dict]:
    rows = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            row = json.loads(line)
            row["anchor"] = datetime.fromisoformat(row["anchor"])
            if row["expected"] is not None:
                row["expected"] = tuple(datetime.fromisoformat(row["expected"][k]) for k in ("start", "end"))
            rows.append(row)
    return rows


def mean_ms(question: str, anchor: datetime, repeat: int) -> float:
    start = time.perf_counter()
    for _ in range(repeat):
        find_window(question, anchor)
    return (time.perf_counter() - start) * 1000 / repeat


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("data", nargs="?", type=Path, default=DEFAULT_DATA)
    ap.add_argument("--repeat", type=int, default=200, help="timed calls per question")
    ap.add_argument("--each", action="store_true", help="list every question with its time")
    ap.add_argument("--json", action="store_true", help="print the figures as one JSON object last")
    args = ap.parse_args(argv)

    rows = load(args.data)
    for row in rows:  # warm-up: compiled patterns, caches
        find_window(row["question"], row["anchor"])
    tp = fp = fn = exact = right = 0
    times_hit: list[float] = []
    times_none: list[float] = []
    for row in rows:
        window = find_window(row["question"], row["anchor"])
        got = None if window is None else (window.start, window.end)
        ms = mean_ms(row["question"], row["anchor"], args.repeat)
        (times_none if window is None else times_hit).append(ms)
        named = row["expected"] is not None
        tp += named and got is not None
        fp += not named and got is not None
        fn += named and got is None
        exact += named and got == row["expected"]
        right += got == row["expected"]
        if got != row["expected"] or args.each:
            mark = "ok  " if got == row["expected"] else "MISS"
            shown = "none" if window is None else f"{window.text!r} {got[0].isoformat()} .. {got[1].isoformat()}"
            want = "none" if not named else f"{row['expected'][0].isoformat()} .. {row['expected'][1].isoformat()}"
            print(f"{mark} {ms * 1000:7.1f} us  {row['question']!r}\n        got {shown}\n       want {want}")

    named = tp + fn
    figures = {
        "questions": len(rows),
        "naming_a_time": named,
        "precision": round(tp / (tp + fp), 4) if tp + fp else None,
        "recall": round(tp / named, 4) if named else None,
        "exact": round(exact / named, 4) if named else None,
        "accuracy": round(right / len(rows), 4),
        "false_positives": fp,
        "ms_mean_with_window": round(sum(times_hit) / len(times_hit), 4) if times_hit else None,
        "ms_mean_without_window": round(sum(times_none) / len(times_none), 4) if times_none else None,
        "ms_p50": round(median(times_hit + times_none), 4),
        "ms_p99": round(pct(times_hit + times_none, 99), 4),
        "ms_max": round(max(times_hit + times_none), 4),
    }
    print(
        f"\n{len(rows)} questions, {named} naming a time: precision {figures['precision']}, "
        f"recall {figures['recall']}, exact window {figures['exact']}, accuracy {figures['accuracy']} "
        f"({fp} false positives)"
    )
    print(
        f"time per question: {figures['ms_mean_with_window']} ms with a window, "
        f"{figures['ms_mean_without_window']} ms without; p50 {figures['ms_p50']} ms, "
        f"p99 {figures['ms_p99']} ms, max {figures['ms_max']} ms (mean of {args.repeat} calls each)"
    )
    if args.json:
        print(json.dumps(figures))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
