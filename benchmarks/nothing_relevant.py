"""An honest "nothing known": does recall's confidence tell an answer from noise?

    python benchmarks/nothing_relevant.py [DATA] [--conversations N] [--questions N] [--embedder minilm|hashing]
        [--json]

LoCoMo (DATA, default ../shared/bench-data/locomo/locomo10.json) as benchmarks/locomo_recall.py
loads it (one subject per conversation, each turn one episode "<speaker>: <text>", extractor
"none", occurred_at = its session date), in memory (graphmem.adapters.memory), with both
speakers of every conversation renamed to one shared pair, "Alex" and "Sam" (in the turns, the
captions and the questions, the name and a short form of it: "Mel" for "Melanie"), so the
signal cannot be whether a name is known. Each question is asked (k 10, at the world time just
after its conversation's last session) of its own conversation's subject, where what it asks
exists, and of the next conversation of its half, where nothing relevant does.

Halves: conversations 1-5 are A, 6-10 B (with --conversations N, the first ceil(N/2) are A;
--questions N asks only the first N questions of each conversation).
For a fit on one half reported on the other, both directions:
  fit       the logistic model of graphmem.pipelines.confidence over the fitting half's hits of both
            askings (label 1: a hit of its own conversation that is evidence; 0: every other
            hit), and the threshold there (best balanced accuracy of "relevant" between the
            own and the other askings of categories 1-4)
  AUROC     of the recall-level score (the top hit's confidence) separating own from other
            (categories 1-4) on the reporting half, with a 95% bootstrap interval (2,000
            resamples of its questions, fixed seed)
  ECE       expected calibration error of per-hit confidence against "this hit is evidence"
            over the reporting half's own-conversation hits, 10 equal-width bins, and the
            reliability table
  answered  share of the askings with relevant true: own (categories 1-4), other, and
            category 5 (adversarial: its evidence exists, the asked detail does not) as the
            share answered "nothing relevant"
Also reported: the constants shipped in graphmem/confidence.py for the embedder on both halves (FITTED). They are the
ones the A -> B direction fits (half A chose them; half B only reports). Targets (issue 40):
AUROC >= 0.9 on each half, ECE <= 0.1.
The last stdout line is one JSON object with --json.
"""

from __future__ import annotations

import argparse
import json
import math
import re
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _recall import RESAMPLES, SEED, DiskVectors
from locomo_recall import asked_at, doc_of, episodes_of, normalise_evidence, subject_of

from graphmem import GraphMem
from graphmem.adapters.memory import InMemoryIndex, InMemoryStore
from graphmem.api.wiring import make_embedder
from graphmem.domain.models import AsOf, Scope, utcnow
from graphmem.pipelines import confidence
from graphmem.settings.config import Settings

NAMES = ("Alex", "Sam")
ANSWERABLE = (1, 2, 3, 4)
ADVERSARIAL = 5
TARGETS = {"auroc": 0.9, "ece": 0.1}
K = 10
BINS = 10
#: L2 penalty of the logistic fit, per row: only to keep it finite should a signal separate a
#: half outright (a larger one shrinks the similarity's weight, whose spread is small).
PENALTY = 1e-6


@dataclass(frozen=True)
class Asked:
    """One question asked of one subject: each hit's signals and whether it is evidence."""

    qid: str
    half: str
    category: int
    own: bool
    signals: list[tuple[float, ...]]
    evidence: list[bool]


def renamed(convs: list[dict]) -> list[dict]:
    """The conversations with speaker_a called "Alex" and speaker_b "Sam" everywhere."""
    out = []
    for conv in convs:
        c = conv["conversation"]
        swap = _renamer({c["speaker_a"]: NAMES[0], c["speaker_b"]: NAMES[1]})
        turns = {
            k: [
                {
                    **t,
                    "speaker": swap(t["speaker"]),
                    "text": swap(t["text"]),
                    **({"blip_caption": swap(t["blip_caption"])} if t.get("blip_caption") else {}),
                }
                for t in v
            ]
            for k, v in c.items()
            if isinstance(v, list)
        }
        out.append(
            {
                **conv,
                "conversation": {**c, **turns, "speaker_a": NAMES[0], "speaker_b": NAMES[1]},
                "qa": [{**qa, "question": swap(qa["question"])} for qa in conv["qa"]],
            }
        )
    return out


def _renamer(names: dict[str, str]):
    """Whole-word replacement of each name, and of its first three letters when it is longer
    (LoCoMo's speakers call each other so: "Mel")."""
    forms = {}
    for old, new in names.items():
        forms[old] = new
        if len(old) > 4:
            forms.setdefault(old[:3], new)
    pattern = re.compile(r"\b(" + "|".join(sorted(map(re.escape, forms), key=len, reverse=True)) + r")\b")
    return lambda text: pattern.sub(lambda m: forms[m.group(1)], text)


def open_mem(embedder: str) -> GraphMem:
    settings = Settings.from_env(embedder=embedder)
    store = InMemoryStore()
    return GraphMem(store, InMemoryIndex(store, DiskVectors(make_embedder(settings))), settings=settings)


def collect(mem: GraphMem, convs: list[dict], questions: int | None = None) -> list[Asked]:
    """Every question of categories 1-5 (the first ``questions`` of each conversation) asked of
    its own subject, and of 1-4 of the next conversation's of its half."""
    first = math.ceil(len(convs) / 2)
    halves = [list(range(first)), list(range(first, len(convs)))]
    now, out = utcnow(), []
    for i, conv in enumerate(convs):
        members = halves[i >= first]
        other = convs[members[(members.index(i) + 1) % len(members)]]
        half = "A" if i < first else "B"
        for j, qa in enumerate(conv["qa"][:questions]):
            category = qa.get("category")
            gold = {f"{conv['sample_id']}:{g}" for g in normalise_evidence(qa.get("evidence", []))}
            if category not in (*ANSWERABLE, ADVERSARIAL) or not gold:
                continue
            askings = [(conv, True)] + ([(other, False)] if category in ANSWERABLE and other is not conv else [])
            for target, own in askings:
                hits = mem.recaller.recall(
                    qa["question"],
                    [Scope.parse(subject_of(target, "stored"))],
                    K,
                    at=AsOf(valid=asked_at(target), known=now),
                )
                rows = confidence.signals(hits, confidence.asked(qa["question"], hits.window))
                out.append(
                    Asked(
                        f"{conv['sample_id']}:q{j}",
                        half,
                        category,
                        own,
                        rows,
                        [own and doc_of(h.unit.source.episode_id) in gold for h in hits],
                    )
                )
        print(f"  asked {conv['sample_id']} ({len(out)} askings)", file=sys.stderr, flush=True)
    return out


def fit(rows: np.ndarray, labels: np.ndarray) -> tuple[float, tuple[float, ...]]:
    """(bias, weights) of a logistic regression (Newton's method, ``PENALTY`` on the weights)."""
    x = np.hstack([np.ones((len(rows), 1)), rows])
    beta = np.zeros(x.shape[1])
    ridge = PENALTY * len(rows) * np.diag([0.0] + [1.0] * rows.shape[1])
    for _ in range(100):
        p = 1 / (1 + np.exp(-x @ beta))
        step = np.linalg.solve(x.T @ (x * (p * (1 - p))[:, None]) + ridge, x.T @ (labels - p) - ridge @ beta)
        beta += step
        if np.abs(step).max() < 1e-10:
            break
    return float(beta[0]), tuple(float(b) for b in beta[1:])


def rated(asked: list[Asked], model: tuple[float, tuple[float, ...]]) -> list[list[float]]:
    """Each asking's hits' confidences under ``model``."""
    return [[confidence.logistic(row, *model) for row in a.signals] for a in asked]


def top(conf: list[float]) -> float:
    return max(conf, default=0.0)


def threshold(asked: list[Asked], conf: list[list[float]]) -> float:
    """The cut on the top confidence with the best balanced accuracy between own and other
    askings of categories 1-4 (the midpoint between neighbouring scores)."""
    own = np.array([top(c) for a, c in zip(asked, conf) if a.own and a.category in ANSWERABLE])
    other = np.array([top(c) for a, c in zip(asked, conf) if not a.own])
    scores = np.unique(np.concatenate([own, other]))
    cuts = (scores[:-1] + scores[1:]) / 2 if len(scores) > 1 else scores
    balanced = [((own >= t).mean() + (other < t).mean()) / 2 for t in cuts]
    return float(cuts[int(np.argmax(balanced))])


def auroc(positive: np.ndarray, negative: np.ndarray) -> float:
    """The chance a positive scores above a negative (ties count half): Mann-Whitney U over
    ranks that ties share on average."""
    values, counts = np.unique(np.concatenate([positive, negative]), return_inverse=True, return_counts=True)[1:]
    ends = np.cumsum(counts)
    ranks = ((ends - counts + 1 + ends) / 2)[values]
    return float(
        (ranks[: len(positive)].sum() - len(positive) * (len(positive) + 1) / 2) / (len(positive) * len(negative))
    )


def auroc_interval(asked: list[Asked], conf: list[list[float]]) -> list[float]:
    """[AUROC, low, high] of the top confidence, own against other askings of categories 1-4,
    the 95% interval by resampling questions (each with both its askings)."""
    pairs: dict[str, dict[bool, float]] = {}
    for a, c in zip(asked, conf):
        if a.category in ANSWERABLE:
            pairs.setdefault(a.qid, {})[a.own] = top(c)
    both = [p for p in pairs.values() if len(p) == 2]
    own, other = np.array([p[True] for p in both]), np.array([p[False] for p in both])
    rng = np.random.default_rng(SEED)
    draws = rng.integers(0, len(both), (RESAMPLES, len(both)))
    spread = [auroc(own[d], other[d]) for d in draws]
    lo, hi = np.percentile(spread, [2.5, 97.5])
    return [auroc(own, other), float(lo), float(hi)]


def reliability(asked: list[Asked], conf: list[list[float]]) -> tuple[float, list[dict]]:
    """(ECE, table) of per-hit confidence against evidence over own-conversation hits of
    categories 1-4: ``BINS`` equal-width bins, each with its hits, mean confidence and the
    share that are evidence."""
    pairs = [(p, e) for a, c in zip(asked, conf) if a.own and a.category in ANSWERABLE for p, e in zip(c, a.evidence)]
    p, e = np.array([x for x, _ in pairs]), np.array([y for _, y in pairs], dtype=float)
    which = np.minimum((p * BINS).astype(int), BINS - 1)
    table, ece = [], 0.0
    for b in range(BINS):
        inside = which == b
        if inside.any():
            table.append(
                {
                    "bin": [b / BINS, (b + 1) / BINS],
                    "hits": int(inside.sum()),
                    "confidence": float(p[inside].mean()),
                    "evidence": float(e[inside].mean()),
                }
            )
            ece += inside.mean() * abs(p[inside].mean() - e[inside].mean())
    return float(ece), table


def answered(asked: list[Asked], conf: list[list[float]], cut: float) -> dict[str, float]:
    """Share of askings with relevant true: own (1-4), other; category 5's "nothing relevant"."""

    def share(keep) -> float:
        tops = [top(c) >= cut for a, c in zip(asked, conf) if keep(a)]
        return float(np.mean(tops)) if tops else float("nan")

    return {
        "own_relevant": share(lambda a: a.own and a.category in ANSWERABLE),
        "other_relevant": share(lambda a: not a.own),
        "adversarial_nothing_relevant": 1 - share(lambda a: a.category == ADVERSARIAL),
    }


def report(asked: list[Asked], model: tuple[float, tuple[float, ...]], cut: float) -> dict:
    conf = rated(asked, model)
    ece, table = reliability(asked, conf)
    return {"auroc": auroc_interval(asked, conf), "ece": ece, "reliability": table, **answered(asked, conf, cut)}


def direction(asked: list[Asked], fitting: str, reporting: str) -> dict:
    """Fit on one half (model and threshold), report on the other."""
    tuning = [a for a in asked if a.half == fitting]
    rows = np.array([row for a in tuning if a.category in ANSWERABLE for row in a.signals])
    labels = np.array([e for a in tuning if a.category in ANSWERABLE for e in a.evidence], dtype=float)
    model = fit(rows, labels)
    cut = threshold(tuning, rated(tuning, model))
    return {
        "fitted_on": fitting,
        "reported_on": reporting,
        "bias": model[0],
        "weights": dict(zip(confidence.SIGNALS, model[1])),
        "threshold": cut,
        "fitting": report(tuning, model, cut),
        "reporting": report([a for a in asked if a.half == reporting], model, cut),
    }


def measure(asked: list[Asked], embedder: str) -> dict:
    """Both directions, and the constants shipped for ``embedder`` on each half."""
    model = confidence.FITTED[embedder]
    shipped = (model.bias, model.weights)
    return {
        "targets": TARGETS,
        "directions": [direction(asked, "A", "B"), direction(asked, "B", "A")],
        "shipped": {
            "bias": model.bias,
            "weights": dict(zip(confidence.SIGNALS, model.weights)),
            "threshold": model.threshold,
            **{half: report([a for a in asked if a.half == half], shipped, model.threshold) for half in ("A", "B")},
        },
    }


def print_report(title: str, r: dict) -> None:
    a = r["auroc"]
    met = a[0] >= TARGETS["auroc"] and r["ece"] <= TARGETS["ece"]
    print(
        f"  {title}: AUROC {a[0]:.3f} [{a[1]:.3f}, {a[2]:.3f}]  ECE {r['ece']:.3f}  relevant: own "
        f"{r['own_relevant']:.3f}, other {r['other_relevant']:.3f}; category 5 nothing relevant "
        f"{r['adversarial_nothing_relevant']:.3f}  {'targets met' if met else 'targets NOT met'}"
    )
    print(f"    {'confidence bin':<16}{'hits':>7}{'mean conf':>11}{'evidence':>10}")
    for row in r["reliability"]:
        print(
            f"    {row['bin'][0]:.1f}-{row['bin'][1]:.1f}{'':<9}{row['hits']:>7}{row['confidence']:>11.3f}"
            f"{row['evidence']:>10.3f}"
        )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("data", nargs="?", default="../shared/bench-data/locomo/locomo10.json", type=Path)
    ap.add_argument("--conversations", type=int, default=None, help="only the first N conversations (N >= 4)")
    ap.add_argument("--questions", type=int, default=None, help="only the first N questions of each conversation")
    ap.add_argument("--embedder", choices=("minilm", "hashing"), default="minilm")
    ap.add_argument("--json", action="store_true", help="last stdout line: the figures as one JSON object")
    args = ap.parse_args(argv)

    convs = renamed(json.loads(args.data.read_text())[: args.conversations])
    mem = open_mem(args.embedder)
    for conv in convs:
        mem.ingest(episodes_of(conv, "stored"), extractor="none")
    asked = collect(mem, convs, args.questions)
    mem.index.embedder.save()
    mem.close()
    result = {
        "benchmark": "nothing_relevant",
        "embedder": args.embedder,
        "conversations": len(convs),
        **measure(asked, args.embedder),
    }
    print(f"{len(asked)} askings of {len(convs)} conversations (embedder {args.embedder})")
    for d in result["directions"]:
        weights = ", ".join(f"{k} {v:.4f}" for k, v in d["weights"].items())
        print(f"\nfit on {d['fitted_on']}: bias {d['bias']:.4f}, {weights}; threshold {d['threshold']:.4f}")
        print_report(f"on {d['fitted_on']} (fitting half)", d["fitting"])
        print_report(f"on {d['reported_on']} (reporting half)", d["reporting"])
    print(
        f"\nshipped constants (graphmem/confidence.py FITTED[{args.embedder!r}], threshold "
        f"{result['shipped']['threshold']})"
    )
    for half in ("A", "B"):
        print_report(f"on {half}", result["shipped"][half])
    if args.json:
        print(json.dumps(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
