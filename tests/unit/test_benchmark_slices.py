"""Small slices of the issue-40 benchmarks, so CI holds their targets: the diary at 250
episodes in memory with the hashing embedder (the full runs, MiniLM and 3,000 episodes, are
`python benchmarks/diary_recall.py`); the first 12 questions of 4 LoCoMo conversations asked of
their own and of another (hashing embedder and the constants fitted for it; the full runs are
`python benchmarks/nothing_relevant.py [--embedder hashing]`)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchmarks.diary_recall import TARGETS, run_size
from benchmarks.locomo_recall import episodes_of
from benchmarks.nothing_relevant import collect, measure, open_mem, renamed


def test_the_diary_slice_puts_the_events_of_the_asked_time_first():
    figures = run_size(250, "hashing", None, seed=7)
    for key in ("day_hit1", "day_hit5", "relative_hit1", "relative_hit5", "week_p10", "month_p10"):
        assert figures[key] >= TARGETS[key], (key, figures)


LOCOMO = Path(__file__).resolve().parents[3] / "shared" / "bench-data" / "locomo" / "locomo10.json"


@pytest.mark.skipif(not LOCOMO.exists(), reason="the LoCoMo data set is not beside the repository")
def test_the_nothing_relevant_slice_tells_own_from_other_conversations():
    convs = renamed(json.loads(LOCOMO.read_text())[:4])
    mem = open_mem("hashing")
    for conv in convs:
        mem.ingest(episodes_of(conv, "stored"), extractor="none")
    figures = measure(collect(mem, convs, questions=12), "hashing")
    for half in ("A", "B"):
        shipped = figures["shipped"][half]
        assert shipped["auroc"][0] >= 0.7 and shipped["ece"] <= 0.1, (half, shipped)  # 0.81 and 0.80, 0.04 and 0.02
    assert [(d["fitted_on"], d["reported_on"]) for d in figures["directions"]] == [("A", "B"), ("B", "A")]
