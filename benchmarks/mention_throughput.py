"""Mention extraction throughput (no embedding, no database) on real text, single process.

    python benchmarks/mention_throughput.py [--locomo PATH] [--musique DIR] [--repeat 3]
        [--min-texts 1] [--show N] [--json]

Corpora: LoCoMo turns as "<speaker>: <text>" (locomo10.json, 5,882 turns) and MuSiQue passages
as "<title>. <text>" (corpus.json, 1,890). Per corpus, a first pass finds the names of every
text with no known names (discovery); the names found in at least --min-texts texts fill one
NameMatcher; then every text is scanned with it, as the store will scan an episode of a scope
that knows its names. The best of --repeat passes is reported, as episodes/s of wall time and of
this process's CPU time (CPU shows the work when the machine is shared). Target: 2,000
episodes/s with the matcher.

Also printed, to judge quality: mentions per episode by kind, and the known matches written
with no capital letter: on well-capitalised text these are ordinary words matching a name that
was learnt from a capitalised ordinary word ("See you" -> "see"). --show N prints N LoCoMo turns
spread over the file with their mentions. --json prints one JSON object as the last line.
"""

from __future__ import annotations

import argparse
import json
import time
from collections import Counter
from pathlib import Path

from graphmem.domain.mentions import Mention, NameMatcher, mentions

TARGET = 2000


def locomo_turns(path: Path) -> list[str]:
    texts = []
    for conv in json.loads(path.read_text()):
        sessions = conv["conversation"]
        keys = sorted(
            (k for k in sessions if k.startswith("session_") and isinstance(sessions[k], list)),
            key=lambda k: int(k.split("_")[1]),
        )
        texts += [f"{turn['speaker']}: {turn['text']}" for key in keys for turn in sessions[key]]
    return texts


def musique_passages(data: Path) -> list[str]:
    return [f"{p['title']}. {p['text']}" for p in json.loads((data / "corpus.json").read_text())]


def best_pass(texts: list[str], known: NameMatcher | None, repeat: int) -> tuple[float, float, list[list[Mention]]]:
    """(best wall seconds, best CPU seconds, the mentions of each text) over repeat passes."""
    walls, cpus = [], []
    for _ in range(repeat):
        wall, cpu = time.perf_counter(), time.process_time()
        found = [mentions(text, known) for text in texts]
        walls.append(time.perf_counter() - wall)
        cpus.append(time.process_time() - cpu)
    return min(walls), min(cpus), found


def measure(texts: list[str], repeat: int, min_texts: int) -> tuple[dict, NameMatcher]:
    discovery_wall, _, discovered = best_pass(texts, None, repeat)
    texts_naming = Counter(m.norm for found in discovered for m in found)
    names = [m.name for found in discovered for m in found if texts_naming[m.norm] >= min_texts]
    started = time.perf_counter()
    known = NameMatcher(names)
    known.find("warm")  # builds the automaton, so the passes below time only the scans
    build_s = time.perf_counter() - started
    wall, cpu, found = best_pass(texts, known, repeat)
    kinds = Counter(m.kind for ms in found for m in ms)
    lower = Counter(m.norm for ms in found for m in ms if m.kind == "known" and m.name == m.name.lower())
    return {
        "episodes": len(texts),
        "mean_chars": round(sum(map(len, texts)) / len(texts), 1),
        "names_known": len(known),
        "matcher_build_ms": round(build_s * 1000, 1),
        "episodes_per_s": round(len(texts) / wall),
        "episodes_per_cpu_s": round(len(texts) / cpu),
        "discovery_episodes_per_s": round(len(texts) / discovery_wall),
        "mentions_per_episode": round(sum(kinds.values()) / len(texts), 2),
        "by_kind": dict(sorted(kinds.items())),
        "lowercase_known": sum(lower.values()),
        "lowercase_known_top": lower.most_common(8),
    }, known


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--locomo", default="../shared/bench-data/locomo/locomo10.json", type=Path)
    ap.add_argument("--musique", default="../shared/bench-data/musique", type=Path, help="folder holding corpus.json")
    ap.add_argument("--repeat", type=int, default=3, help="passes per measurement; the best is kept")
    ap.add_argument("--min-texts", type=int, default=1, help="a name is known when found in this many texts")
    ap.add_argument("--show", type=int, default=0, metavar="N", help="print N LoCoMo turns with their mentions")
    ap.add_argument("--json", action="store_true", help="one JSON object as the last stdout line")
    args = ap.parse_args()

    corpora = {"locomo": locomo_turns(args.locomo), "musique": musique_passages(args.musique)}
    results, matchers = {}, {}
    for label, texts in corpora.items():
        results[label], matchers[label] = measure(texts, args.repeat, args.min_texts)

    print(
        f"{'corpus':<9}{'episodes':>9}{'chars':>7}{'names':>7}{'build ms':>9}{'ep/s':>8}{'ep/cpu-s':>9}"
        f"{'discovery ep/s':>15}{'mentions/ep':>12}  target {TARGET} ep/s"
    )
    for label, r in results.items():
        print(
            f"{label:<9}{r['episodes']:>9}{r['mean_chars']:>7.0f}{r['names_known']:>7}{r['matcher_build_ms']:>9.1f}"
            f"{r['episodes_per_s']:>8}{r['episodes_per_cpu_s']:>9}{r['discovery_episodes_per_s']:>15}"
            f"{r['mentions_per_episode']:>12.2f}  {'met' if r['episodes_per_s'] >= TARGET else 'NOT met'}"
        )
    for label, r in results.items():
        top = ", ".join(f"{norm} {n}" for norm, n in r["lowercase_known_top"])
        print(f"{label}: by kind {r['by_kind']}; known matches in lower case {r['lowercase_known']} ({top})")

    if args.show:
        texts = corpora["locomo"]
        for text in texts[:: max(1, len(texts) // args.show)][: args.show]:
            found = mentions(text, matchers["locomo"])
            print(f"\n{text}\n  -> " + "; ".join(f"{m.name} [{m.kind}]" for m in found))

    if args.json:
        print(json.dumps({"target_episodes_per_s": TARGET, "min_texts": args.min_texts, **results}))


if __name__ == "__main__":
    main()
