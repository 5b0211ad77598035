"""The confidence of a recall hit (``graphmem.pipelines.confidence``): a probability, higher for a unit
more like the question or with more of its words, under each embedder's own fit; a recall is
relevant when any hit reaches the threshold."""

from __future__ import annotations

from datetime import UTC, datetime

from hypothesis import given
from hypothesis import strategies as st

from graphmem.domain.models import Scope
from graphmem.domain.timewords import find_window
from graphmem.pipelines import confidence
from graphmem.pipelines.recall import RecallHit, rated
from tests.factories import unit

SCOPE = Scope.parse("user:tester")
AT = datetime(2026, 1, 1, tzinfo=UTC)
unit_interval = st.floats(0.0, 1.0)
MINILM = confidence.FITTED["minilm"]


def hit(content: str, similarity: float | None) -> RecallHit:
    return RecallHit(unit=unit(SCOPE, content), score=1.0, similarity=similarity)


models = st.sampled_from(sorted(confidence.FITTED.items()))


@given(models, unit_interval, unit_interval)
def test_a_confidence_is_a_probability(named, similarity, coverage):
    _, m = named
    assert 0.0 <= confidence.logistic((similarity, coverage), m.bias, m.weights) <= 1.0


@given(models, unit_interval, unit_interval, unit_interval, unit_interval)
def test_more_like_the_question_or_more_of_its_words_is_more_confident(named, low, high, lesser, more):
    _, m = named
    (low, high), (lesser, more) = sorted((low, high)), sorted((lesser, more))
    rate = lambda similarity, coverage: confidence.logistic((similarity, coverage), m.bias, m.weights)  # noqa: E731
    assert rate(low, lesser) <= rate(high, lesser) and rate(low, lesser) <= rate(low, more)


def test_each_embedder_has_its_own_model_and_any_other_minilms():
    assert confidence.fitted("hashing-384") is confidence.FITTED["hashing"]
    assert confidence.fitted("all-MiniLM-L6-v2") is confidence.FITTED["minilm"]
    assert confidence.fitted("text-embedding-3-small") is confidence.FITTED["minilm"]
    assert confidence.FITTED["hashing"] != confidence.FITTED["minilm"]


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
    both = rated([near, far], stems, MINILM)
    assert both.relevant and both[0].confidence >= MINILM.threshold > both[1].confidence
    assert both.threshold == MINILM.threshold
    alone = rated([far], stems, MINILM)
    assert not alone.relevant and alone[0].confidence < MINILM.threshold
    unread = rated([hit("I work at Siemens.", None)], stems, MINILM)  # no similarity: as a question unlike it
    assert unread[0].confidence < both[0].confidence


def test_a_walked_hit_is_as_confident_as_the_hit_its_path_starts_from():
    seed = hit("My manager is Priya.", 0.9)
    walked = RecallHit(
        unit=unit(SCOPE, "Priya lives in Graz."),
        score=0.5,
        hop=1,
        path=["My manager is Priya.", "Priya", "Priya lives in Graz."],
    )
    stems = confidence.asked("where does my manager live")
    found = rated([seed, walked], stems, MINILM)
    assert found[1].confidence == found[0].confidence
    alone = rated([walked], stems, MINILM)  # its start not among the hits
    assert alone[0].confidence == confidence.confidences([walked], stems, MINILM)[0]
