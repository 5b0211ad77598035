"""Relation questions (``graphmem.domain.relations``): a text that says who X's R is, in any
word of R's group and any of its wordings, is a bridge to the name it gives; the same said of
someone else, or a verb phrase read backwards, is none. A relation question's hits rank its
chain first (``graphmem.pipelines.recall.chained``)."""

from __future__ import annotations

from hypothesis import assume, given
from hypothesis import strategies as st

from graphmem.domain.models import Scope
from graphmem.domain.relations import SYNONYMS, Bridge, bridged, relation_of
from graphmem.domain.tokenise import normalise
from graphmem.pipelines.recall import RecallHit, chained
from tests.factories import unit

NAMES = st.sampled_from(["Tobiah", "Priya", "Jean-Luc", "Mary Jane", "Oda Lind"])
#: How each group's verb phrase is written of X, and by X herself.
VERBS = {
    "manager": (["{x} reports to", "{x} reported to", "{x} now reports to"], ["I report to", "I have reported to"]),
    "wife": (
        ["{x} is married to", "{x} got married to"],
        ["I am married to", "I'm married to", "I've been married to"],
    ),
}


@given(x=NAMES, b=NAMES, me=st.booleans(), data=st.data())
def test_a_relation_told_in_any_of_its_words_is_a_bridge_to_whom_it_names(x, b, me, data):
    assume(x != b)
    nouns, verb = data.draw(st.sampled_from(SYNONYMS))
    asked, noun = (data.draw(st.sampled_from(sorted(nouns))) for _ in range(2))
    owner = "my" if me else f"{x}'s"  # told by X herself, in the first person
    texts = [f"{owner[0].upper()}{owner[1:]} {noun} is {b}.", f"{b} is {owner} {noun}."]
    for group, (said_of, said_by_me) in VERBS.items():
        if verb and group in nouns:
            texts += [f"{v.format(x=x)} {b}." for v in (said_by_me if me else said_of)]
    text = data.draw(st.sampled_from(texts))
    selves = {normalise(x)} if me else {"someone"}
    if me and data.draw(st.booleans()):  # X speaks in another's subject
        text, selves = f"{x}: {text}", {"someone"}
    assert bridged(text, x, [asked, "live"], selves) == Bridge(b, 1), text


@given(x=NAMES, b=NAMES, other=NAMES, noun=st.sampled_from(sorted(SYNONYMS[0][0])))
def test_someone_elses_relation_or_the_reverse_one_is_no_bridge(x, b, other, noun):
    assume(len({x, b, other}) == 3)
    for text in (
        f"{other}'s {noun} is {b}.",
        f"{b} is {other}'s {noun}.",
        f"{b} reports to {x}.",
        f"{x} said {other} reports to {b}.",
    ):
        assert bridged(text, x, ["manager"], {normalise(x)}) is None, text
    assert bridged("My manager is Priya.", x, ["manager"], {"someone"}) is None  # X did not say it


def test_a_question_about_x_s_r_gives_x_and_the_words_after():
    assert relation_of("Where does Alice's manager live?") == ("Alice", 11, ["manager", "live"])
    assert relation_of("where does my manager live?") is None


SCOPE = Scope.parse("user:tester")
scores = st.floats(0.0, 10.0)


def hit(content: str, score: float) -> RecallHit:
    return RecallHit(unit=unit(SCOPE, content), score=score)


@given(
    st.lists(scores, max_size=4),
    st.lists(scores, max_size=6),
    scores,
    st.floats(0.1, 4.0),
    st.integers(1, 60),
    st.booleans(),
)
def test_a_chain_ranks_first_its_answer_then_the_rest_as_they_were(through, rest, bridge, weight, rrf_k, beyond):
    followed = [hit(f"follows {n}", s) for n, s in enumerate(through)]
    others = [hit(f"other {n}", s) for n, s in enumerate(sorted(rest, reverse=True))]
    out = chained(hit("bridge", bridge), followed, others, weight, rrf_k, beyond)
    names = [h.unit.content for h in followed]
    # the answer first: what follows the bridge when the question asks more than who B is
    chain = [*names[:1], "bridge", *names[1:]] if beyond else ["bridge", *names]
    assert [h.unit.content for h in out] == [*chain, *(h.unit.content for h in others)]
    assert all(a.score > b.score for a, b in zip(out[: len(chain)], out[1:]))  # each above the next and the rest
    assert [h.score for h in out[len(chain) :]] == [h.score for h in others]
