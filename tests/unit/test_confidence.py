"""The confidence of a recall hit (``graphmem.confidence``): a probability, higher for a unit
more like the question or with more of its words, lower further down; a recall is relevant when
any hit reaches the threshold."""

from __future__ import annotations

import math
from datetime import datetime, timezone

from hypothesis import given, strategies as st

from graphmem import confidence
from graphmem.models import Scope
from graphmem.pipelines.recall import RecallHit, rated
from graphmem.timewords import find_window
from tests.factories import unit

SCOPE = Scope.parse("user:tester")
AT = datetime(2026, 1, 1, tzinfo=timezone.utc)
unit_interval = st.floats(0.0, 1.0)
ranks = st.integers(1, 1000)


def hit(content: str, similarity: float | None) -> RecallHit:
    return RecallHit(unit=unit(SCOPE, content), score=1.0, similarity=similarity)


@given(unit_interval, unit_interval, ranks)
def test_a_confidence_is_a_probability(similarity, coverage, rank):
    assert 0.0 <= confidence.logistic((similarity, coverage, math.log(rank))) <= 1.0


@given(unit_interval, unit_interval, unit_interval, ranks)
def test_more_like_the_question_is_more_confident(low, high, coverage, rank):
    low, high = sorted((low, high))
    assert confidence.logistic((low, coverage, math.log(rank))) <= confidence.logistic((high, coverage, math.log(rank)))


@given(unit_interval, unit_interval, unit_interval, ranks, ranks)
def test_more_of_the_question_and_a_better_rank_are_more_confident(similarity, low, high, first, second):
    (low, high), (first, second) = sorted((low, high)), sorted((first, second))
    rated_at = lambda covered, rank: confidence.logistic((similarity, covered, math.log(rank)))  # noqa: E731
    assert rated_at(low, first) <= rated_at(high, first) and rated_at(low, second) <= rated_at(low, first)


def test_coverage_reads_stems_and_skips_who_is_speaking():
    stems = confidence.asked("What recipes did Alex share?")
    assert confidence.coverage("Sam: I shared my recipe for pie.", stems) == 2 / 3  # recip, share; not alex
    assert confidence.coverage("Alex: I shared my recipe for pie.", stems) == 1.0  # Alex speaks: the rest is asked
    assert confidence.coverage("Bob likes tea", confidence.asked("what does Bob like")) == 1.0  # "like" begins "likes"
    assert confidence.coverage("anything", frozenset()) == 0.0


def test_the_time_a_question_names_is_not_a_word_it_asks_for():
    question = "What did I cook on 19 March 2024?"
    assert confidence.asked(question, find_window(question, AT)) == {"cook"}


def test_a_recall_is_relevant_when_a_hit_reaches_the_threshold():
    stems = confidence.asked("where do I work")
    near, far = hit("I work at Siemens.", 0.9), hit("My cat is called Miso.", 0.55)
    both = rated([near, far], stems)
    assert both.relevant and both[0].confidence >= confidence.THRESHOLD > both[1].confidence
    alone = rated([far], stems)
    assert not alone.relevant and alone[0].confidence < confidence.THRESHOLD
    unread = rated([hit("I work at Siemens.", None)], stems)  # no similarity: as a question unlike it
    assert unread[0].confidence < both[0].confidence


def test_a_walked_hit_is_as_confident_as_the_hit_its_path_starts_from():
    seed = hit("My manager is Priya.", 0.9)
    walked = RecallHit(unit=unit(SCOPE, "Priya lives in Graz."), score=0.5, hop=1,
                       path=["My manager is Priya.", "Priya", "Priya lives in Graz."])
    found = rated([seed, walked], confidence.asked("where does my manager live"))
    assert found[1].confidence == found[0].confidence
    alone = rated([walked], confidence.asked("where does my manager live"))  # its start not among the hits
    assert alone[0].confidence == confidence.confidences([walked], confidence.asked("where does my manager live"))[0]
