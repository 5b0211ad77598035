"""How sure recall is: a calibrated confidence per hit, and whether anything relevant was found
(docs/recall.md, "Confidence").

- A hit's confidence is the chance that it is what the question asks about: a logistic ``Model``
  over two ``signals``, the question's similarity with the hit ((1 + cos) / 2) and the share of
  the question's words it has (``coverage``). Not a share of the best hit: a recall about
  something absent has a best hit too.
- A recall is ``relevant`` when a hit reaches its model's ``threshold``.
- A hit a walk reached is as confident as the hit its path starts from, one a relation chain
  reached as an answer to the question asked of its bridge's name
  (``graphmem.pipelines.recall.rated``; not fitted).
- Each embedder's model (``FITTED``) was chosen and fitted on half A of LoCoMo by
  ``benchmarks/nothing_relevant.py``, which reports it on half B.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from graphmem.domain.mentions import speakers
from graphmem.domain.models import search_terms, terms

if TYPE_CHECKING:
    from graphmem.domain.timewords import TimeWindow
    from graphmem.pipelines.recall import RecallHit

#: How many first letters of a word ``coverage`` compares: a crude stem.
STEM = 5
#: A hit with no similarity (a walk reached it, or a lexical recall): as a question unlike it.
NO_SIMILARITY = 0.5
SIGNALS = ("similarity", "coverage")


@dataclass(frozen=True)
class Model:
    """The logistic model (``bias``, then a weight per signal in ``SIGNALS`` order) and the
    confidence from which a hit is relevant (``threshold``: the best balanced accuracy on the
    fitting half between questions asked of their own conversation and of another)."""

    bias: float
    weights: tuple[float, ...]
    threshold: float


#: Fitted per embedder (its similarities differ), each on half A: ``python
#: benchmarks/nothing_relevant.py --embedder NAME --json``. A rerun of a fit moves the constants
#: in the third or fourth digit (unit ids are random, so ties among hits fall differently), the
#: figures not at all at three decimals.
FITTED = {
    "minilm": Model(bias=-10.5846, weights=(9.4550, 3.5453), threshold=0.0674),
    "hashing": Model(bias=-7.2810, weights=(3.1521, 5.6344), threshold=0.0732),
}
#: The embedders a model was fitted with: MiniLM by its name, the hashing one by its prefix.
#: Any other (an OpenAI-compatible model) gets MiniLM's, uncalibrated there: docs/recall.md says so.
DEFAULT = "minilm"


def fitted(embedder: str) -> Model:
    """The model fitted with the embedder named ``embedder`` (``Embedder.name``)."""
    family = "hashing" if embedder.startswith("hashing-") else DEFAULT
    return FITTED[family]


def asked(query: str, window: TimeWindow | None = None) -> frozenset[str]:
    """The stems ``coverage`` looks for: the question's search terms, without the time it
    names (as recall searches it). The names it writes stay: taken out, the top hit told own
    from other conversations worse (MiniLM, fitted on A: on B AUROC 0.883 against 0.900; fitted
    on B: on A 0.899 against 0.903), as "What did Alex ..." is then met by what Sam said too."""
    text = window.outside(query) if window is not None else query
    return frozenset(t[:STEM] for t in search_terms(text))


def coverage(content: str, stems: frozenset[str]) -> float:
    """The share of ``stems`` that begin a word of ``content`` ("like" begins "likes"), of those
    that are not the name of someone speaking in it ("Alex: ..." has Alex in every turn: what is
    asked of Alex is the rest); 0 for a question with none."""
    speaking = {m.norm[:STEM] for m in speakers(content)}
    looked = stems - speaking
    has = {t[:n] for t in terms(content) for n in range(1, STEM + 1)}
    return len(looked & has) / len(looked) if looked else 0.0


def signals(hits: Sequence[RecallHit], stems: frozenset[str]) -> list[tuple[float, ...]]:
    """Each hit's signals (``SIGNALS``), hits best first, ``stems`` the question's ``asked``."""
    return [
        (NO_SIMILARITY if hit.similarity is None else hit.similarity, coverage(hit.unit.searched, stems))
        for hit in hits
    ]


def logistic(row: Sequence[float], bias: float, weights: Sequence[float]) -> float:
    z = bias + sum(w * x for w, x in zip(weights, row, strict=True))
    return 1 / (1 + math.exp(-z)) if z >= 0 else math.exp(z) / (1 + math.exp(z))


def confidences(hits: Sequence[RecallHit], stems: frozenset[str], model: Model) -> list[float]:
    """Each hit's confidence in [0, 1], hits best first, ``stems`` the question's ``asked``."""
    return [logistic(row, model.bias, model.weights) for row in signals(hits, stems)]
