"""Small slices of the issue-40 benchmarks, so CI holds their targets: the diary at 250
episodes in memory with the hashing embedder (the full runs, MiniLM and 3,000 episodes, are
`python benchmarks/diary_recall.py`)."""

from __future__ import annotations

from benchmarks.diary_recall import TARGETS, run_size


def test_the_diary_slice_puts_the_events_of_the_asked_time_first():
    figures = run_size(250, "hashing", None, seed=7)
    for key in ("day_hit1", "day_hit5", "relative_hit1", "relative_hit5", "week_p10", "month_p10"):
        assert figures[key] >= TARGETS[key], (key, figures)
