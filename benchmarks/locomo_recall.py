"""LoCoMo evidence recall of GraphMem.recall in lexical, semantic, hybrid and hybrid+hops=2 modes.

    NEO4J_URI=bolt://127.0.0.1:7751 python benchmarks/locomo_recall.py [DATA] --embedder minilm|hashing
        [--form stored|dated|context1|context2|around1|context1text|context1vector]
        [--conversations N] [--keep] [--json] [--answers FILE] [--against FILE]

WIPES THE TARGET DATABASE (the embedder name is recorded in it, so each embedder needs a fresh
one) unless --keep. Point it at a dedicated benchmark server, never the test one.

One subject per conversation (user:locomo-<form>-<sample_id>); each turn is one episode (id
"<form>:<sample_id>:<dia_id>", occurred_at = its session date in UTC, channel chat), ingested
with extractor "none". The turn's text (--form):
  stored (default): what a user would store, "<speaker>: <text>" (plus " [image: <caption>]"
                    when the turn shares one), the session date only in occurred_at;
  dated:            "[<session date>] <speaker>: <text>" (plus the caption): the date written
                    into the text, as the BM25 reference of ../shared/bench-data/README.md has it.
Contextual forms (an experiment on what search reads of a turn): the episode is the stored
form's, and so is the unit (its content, its mentions, its speaker), but its search entry's text
and vector are those of the turn with its neighbours of the same session, as stored, one a line:
  context1:         the previous turn, then the turn;
  context2:         the two previous turns, then the turn;
  around1:          the previous turn, the turn, the next turn;
  context1text, context1vector: as context1 in the entry text only (the vector is the turn's), or
                    in the vector only.
The benchmark makes search read them so by replacing ``MemoryUnit.searched`` in its own process
(the product has no such setting), so a hit still maps to the turn itself.
For every question except category 5, asked at the world time just after the conversation's
last session (midnight after it; no as-of point, so a time the question names, "in June",
"last year", is read from then and decides what is visible, as for a user asking then):
recall top 10 and map hits to dia_ids through unit.source.episode_id; evidence recall@1/5/10
and all-covered@10 per category.

Halves: conversations 1-5 are half A, 6-10 half B (with --conversations N, the first
ceil(N/2) are A). Each half's figures, and those of both halves together ("A+B", the set the
reference was computed on), come with 95% bootstrap intervals over their questions (2,000
resamples, fixed seed), beside the BM25 reference (computed over all 10 conversations),
and a "bm25" row: the reference recomputed here per half with its exact settings (k1 1.2,
b 0.75, Lucene's idf, its tokens and stopwords, turns written as the dated form, one index per
conversation), so a half is compared with BM25 on the same questions.
--answers FILE writes each mode's top 10 per question; --against FILE (another run's answers,
such as the stored form's) prints, per half, category and mode, R@10 of both on the same
questions and the paired bootstrap of the gain ("*": its 95% interval is above 0, "-": below).
--keep asks the questions of what the database already holds (ingest skips stored episodes),
so a second form or a second run needs no new ingest. --json: the last stdout line is one JSON
object with the figures.
"""

from __future__ import annotations

import argparse
import json
import math
import re
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import default_uri, wipe
from _recall import (
    DEEP,
    HALVES,
    MODES,
    PUBLISHED,
    K,
    Question,
    ask,
    cache_vectors,
    figures,
    metrics,
    misses,
    paired,
    print_misses,
    print_published,
    print_table,
    recall_at,
    settings_of,
)

from graphmem import GraphMem
from graphmem.adapters.memory import bm25
from graphmem.adapters.neo4j import rows
from graphmem.domain.models import Episode, MemoryUnit, Scope
from graphmem.settings.config import Settings

CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}  # 5 adversarial: excluded
#: BM25 over turns, from bench-data/README.md: (R@5, R@10, all-covered@10).
BM25 = {
    "single-hop": (0.627, 0.700, 0.688),
    "temporal": (0.635, 0.696, 0.659),
    "multi-hop": (0.188, 0.277, 0.103),
    "open-domain": (0.248, 0.274, 0.191),
}
REFERENCE_TITLE = f"{'BM25 R@5':>10}{'R@10':>7}{'all@10':>8}"
#: Contextual forms: (previous, next) turns of the same session search reads with the turn, and
#: what reads them: "both" (entry text and vector), "text" (the vector is the turn's) or "vector".
CONTEXT = {
    "context1": (1, 0, "both"),
    "context2": (2, 0, "both"),
    "around1": (1, 1, "both"),
    "context1text": (1, 0, "text"),
    "context1vector": (1, 0, "vector"),
}
FORMS = ("stored", "dated", *CONTEXT)
#: What search reads of each turn of a contextual form, by episode id (see ``read_in_context``).
SEARCHED: dict[str, str] = {}
#: The turn of each such text (only the last line when no next turn is read).
TURN_OF: dict[str, str] = {}
#: The reference's stopwords (bench-data/README.md).
BM25_STOPWORDS = frozenset(
    [
        "a",
        "an",
        "the",
        "of",
        "to",
        "in",
        "on",
        "at",
        "for",
        "and",
        "or",
        "is",
        "are",
        "was",
        "were",
        "be",
        "been",
        "did",
        "do",
        "does",
        "what",
        "when",
        "where",
        "who",
        "whom",
        "which",
        "how",
        "why",
        "with",
        "from",
        "by",
        "as",
        "that",
        "this",
        "it",
        "its",
        "i",
        "you",
        "he",
        "she",
        "they",
        "we",
        "her",
        "his",
        "their",
        "our",
        "my",
        "me",
        "your",
    ]
)
BM25_K1, BM25_B = 1.2, 0.75
MEASURES = metrics((1, 5, 10))
_EVIDENCE = re.compile(r"D:?(\d+):(\d+)")


def parse_date(text: str) -> datetime:
    """'1:56 pm on 8 May, 2023' as UTC."""
    text = " ".join(text.split())
    for fmt in ("%I:%M %p on %d %B, %Y", "%I:%M %p on %d %b, %Y"):
        try:
            return datetime.strptime(text, fmt).replace(tzinfo=UTC)
        except ValueError:
            pass
    raise ValueError(f"unparsed session date {text!r}")


def normalise_evidence(ids: list[str]) -> set[str]:
    """ "D8:6; D9:17" -> two ids, "D:11:26" -> "D11:26", "D30:05" -> "D30:5"."""
    return {f"D{int(a)}:{int(b)}" for raw in ids for a, b in _EVIDENCE.findall(raw)}


def subject_of(conv: dict, form: str) -> str:
    return f"user:locomo-{form}-{conv['sample_id']}"


def doc_of(episode_id: str) -> str:
    """ "<form>:<sample_id>:<dia_id>" -> "<sample_id>:<dia_id>", what gold evidence is keyed by."""
    return episode_id.split(":", 1)[1]


def sessions_of(conv: dict) -> list[str]:
    c = conv["conversation"]
    return sorted(
        (k for k in c if re.fullmatch(r"session_\d+", k) and isinstance(c[k], list)), key=lambda k: int(k.split("_")[1])
    )


def asked_at(conv: dict) -> datetime:
    """When the conversation's questions are asked: midnight after its last session."""
    last = parse_date(conv["conversation"][f"{sessions_of(conv)[-1]}_date_time"])
    return last.replace(hour=0, minute=0) + timedelta(days=1)


def episodes_of(conv: dict, form: str) -> list[Episode]:
    sample = conv["sample_id"]
    c = conv["conversation"]
    scope = Scope.parse(subject_of(conv, form))
    out = []
    before, after, _ = CONTEXT.get(form, (0, 0, ""))
    for key in sessions_of(conv):
        date = c[f"{key}_date_time"]
        at = parse_date(date)
        raws = []
        for turn in c[key]:
            raw = f"{turn['speaker']}: {turn['text']}"
            if form == "dated":
                raw = f"[{date}] {raw}"
            if turn.get("blip_caption"):
                raw += f" [image: {turn['blip_caption']}]"
            raws.append(raw)
        for i, (turn, raw) in enumerate(zip(c[key], raws)):
            id_ = f"{form}:{sample}:{turn['dia_id']}"
            if form in CONTEXT:
                SEARCHED[id_] = "\n".join(raws[max(0, i - before) : i + 1 + after])
                TURN_OF[SEARCHED[id_]] = raw
            out.append(Episode(id=id_, scope=scope, occurred_at=at, raw=raw, channel="chat"))
    return out


def read_in_context(mem: GraphMem, reads: str) -> None:
    """Make search read a contextual form's turn with its neighbours (``SEARCHED``): its entry
    text and vector (recall's word match too), or only one of them (``reads``: the other is the
    turn's alone). Other units read as before."""
    plain = MemoryUnit.searched.fget
    MemoryUnit.searched = property(lambda unit: SEARCHED.get(unit.source.episode_id) or plain(unit))
    if reads == "vector":
        text = rows.unit_text
        rows.unit_text = lambda content, summary: text(TURN_OF.get(content, content), summary)
    if reads == "text":
        embed = mem.index.embedder.embed
        mem.index.embedder.embed = lambda texts: embed([TURN_OF.get(t, t) for t in texts])


def against(questions: list[Question], got: dict[str, dict[str, list[str]]], base: dict, form: str) -> dict:
    """{half: {group: {label: [n, base R@10, R@10, gain, low, high]}}} of ``got`` against the
    answers of another run (``base``) on the same questions, for the labels both have."""
    out: dict = {}
    for half in HALVES:
        out[half] = {}
        for group in (*CATEGORIES.values(), "all"):
            qs = [q for q in questions if q.half == half and group in ("all", q.group)]
            out[half][group] = {}
            for label in got:
                if label not in base or label == "bm25":
                    continue
                old = [recall_at(q.gold, base[label][q.id], K) for q in qs]
                new = [recall_at(q.gold, got[label][q.id], K) for q in qs]
                out[half][group][label] = [len(qs), float(np.mean(old)), float(np.mean(new)), *paired(old, new)]
    print(f"\nR@10 paired against {base.get('form', 'the base')}: base, {form}, gain [95% interval]")
    for half, by_group in out.items():
        for group, by_label in by_group.items():
            for label, (n, b, v, gain, lo, hi) in by_label.items():
                mark = "*" if lo > 0 else "-" if hi < 0 else ""
                print(
                    f"{half}  {group:<12}{n:>5}  {label:<13}{b:.3f}  {v:.3f}  {gain:+.3f} [{lo:+.3f}, {hi:+.3f}] {mark}"
                )
    return out


def bm25_tokens(text: str) -> list[str]:
    return [t for t in re.findall(r"[a-z0-9]+", text.lower()) if t not in BM25_STOPWORDS]


def bm25_answers(convs: list[dict], questions: list[Question], k: int = 10) -> dict[str, list[str]]:
    """The reference's BM25 over each conversation's turns (dated form): question id -> the
    document keys of its top k."""
    docs_by_subject: dict[str, list[tuple[str, list[str]]]] = {}
    for conv in convs:
        docs = [(doc_of(e.id), bm25_tokens(e.raw)) for e in episodes_of(conv, "dated")]
        docs_by_subject.update((subject_of(conv, form), docs) for form in FORMS)
    out = {}
    for q in questions:
        scores = bm25(bm25_tokens(q.text), docs_by_subject[q.subject], BM25_K1, BM25_B)
        out[q.id] = sorted(scores, key=lambda key: (-scores[key], key))[:k]
    return out


def questions_of(convs: list[dict], form: str) -> tuple[list[Question], dict[str, int]]:
    """The scored questions (category 5 left out, those without evidence skipped), half A for
    the first ceil(N/2) conversations; and how many were skipped or had evidence normalised."""
    out, counts = [], {"skipped": 0, "normalised": 0}
    first = math.ceil(len(convs) / 2)
    for i, conv in enumerate(convs):
        for j, qa in enumerate(conv["qa"]):
            cat = CATEGORIES.get(qa.get("category"))
            if cat is None:
                continue
            gold = normalise_evidence(qa.get("evidence", []))
            counts["normalised"] += set(qa.get("evidence", [])) != gold
            if not gold:
                counts["skipped"] += 1
                continue
            out.append(
                Question(
                    id=f"{conv['sample_id']}:q{j}",
                    text=qa["question"],
                    subject=subject_of(conv, form),
                    gold=frozenset(f"{conv['sample_id']}:{g}" for g in gold),
                    group=cat,
                    half="A" if i < first else "B",
                    asked_at=asked_at(conv),
                )
            )
    return out, counts


def ingest(mem: GraphMem, convs: list[dict], form: str) -> tuple[int, float]:
    """(turns, seconds)."""
    started, turns = time.perf_counter(), 0
    for conv in convs:
        eps = episodes_of(conv, form)
        mem.ingest(eps, extractor="none")
        turns += len(eps)
        print(
            f"  ingested {conv['sample_id']} ({len(eps)} turns, {time.perf_counter() - started:.0f} s)",
            file=sys.stderr,
            flush=True,
        )
    return turns, time.perf_counter() - started


def reference(group: str) -> str:
    ref = BM25.get(group)
    return f"{ref[0]:>9.3f}{ref[1]:>7.3f}{ref[2]:>8.3f}" if ref else ""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("data", nargs="?", default="../shared/bench-data/locomo/locomo10.json", type=Path)
    ap.add_argument("--uri", default=default_uri())
    ap.add_argument("--embedder", choices=("minilm", "hashing"), default="minilm")
    ap.add_argument("--form", choices=FORMS, default="stored", help="how a turn is written (see above)")
    ap.add_argument("--conversations", type=int, default=None, help="only the first N conversations")
    ap.add_argument("--modes", nargs="+", choices=list(MODES), default=list(MODES))
    ap.add_argument("--keep", action="store_true", help="do not wipe: ask over what the database holds")
    ap.add_argument("--misses", type=int, default=3, metavar="N", help="N missed questions shown per category")
    ap.add_argument("--json", action="store_true", help="last stdout line: the figures as one JSON object")
    ap.add_argument("--answers", type=Path, help="write each mode's top 10 per question here")
    ap.add_argument("--against", type=Path, help="another run's --answers: paired R@10 gains over it")
    args = ap.parse_args()

    convs = json.loads(args.data.read_text())[: args.conversations]
    questions, counts = questions_of(convs, args.form)
    if not args.keep:
        wipe(args.uri)
    mem = GraphMem.connect(Settings.from_env(neo4j_uri=args.uri, embedder=args.embedder))
    vectors = cache_vectors(mem)
    if args.form in CONTEXT:
        read_in_context(mem, CONTEXT[args.form][2])
    turns, ingest_s = ingest(mem, convs, args.form)
    print(
        f"ingested {turns} turns of {len(convs)} conversations ({args.form} form) in {ingest_s:.1f} s; "
        f"embedding: {vectors.summary()}",
        flush=True,
    )

    started = time.perf_counter()
    got, seconds = ask(mem, questions, args.modes, doc_of=doc_of, progress="locomo")
    got["bm25"] = bm25_answers(convs, questions)
    deep, _ = ask(mem, questions, ["hybrid"], doc_of=doc_of, k=DEEP)
    texts = {doc_of(e.id): e.raw for conv in convs for e in episodes_of(conv, args.form)}
    missed = misses(questions, deep["hybrid"], lambda key: texts.get(key, f"(no turn {key})"), examples=args.misses)
    vectors.save()
    result = figures(questions, got, MEASURES, list(CATEGORIES.values()))
    print(
        f"{len(questions)} questions (category 5 excluded; half A {sum(q.half == 'A' for q in questions)}, "
        f"half B {sum(q.half == 'B' for q in questions)}); {counts['skipped']} skipped for no evidence; "
        f"{counts['normalised']} with malformed evidence normalised; query phase {time.perf_counter() - started:.1f} s"
    )
    print("mean recall latency ms: " + ", ".join(f"{m} {1000 * s:.0f}" for m, s in seconds.items()))
    settings = settings_of(mem.recaller)
    print(f"\nembedder={args.embedder}  form={args.form}  conversations={len(convs)}  settings={settings}")
    print_table(result, list(MEASURES), "category", reference, REFERENCE_TITLE)
    print_misses(missed)
    print_published("locomo")
    mem.close()
    if args.answers:
        args.answers.write_text(json.dumps({"form": args.form, **got}))
    gains = against(questions, got, json.loads(args.against.read_text()), args.form) if args.against else None
    if args.json:
        print(
            json.dumps(
                {
                    "benchmark": "locomo",
                    "form": args.form,
                    "embedder": args.embedder,
                    "conversations": len(convs),
                    "settings": settings,
                    "skipped": counts["skipped"],
                    "figures": result,
                    "against": gains,
                    "bm25": {g: dict(zip(("R@5", "R@10", "all@10"), v)) for g, v in BM25.items()},
                    "misses": missed,
                    "published": PUBLISHED["locomo"],
                }
            )
        )


if __name__ == "__main__":
    main()
