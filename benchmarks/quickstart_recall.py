"""The quickstart's question through the graph, with the offline MiniLM embedder and the default
settings: "Where does Alice's manager live?" must put "Bob lives in Lisbon." first.

    python benchmarks/quickstart_recall.py --uri bolt://127.0.0.1:7751 [--embedder minilm|hashing] [--json]

WIPES THE TARGET DATABASE: the quickstart's episodes as they are (subject user:alice, whose "I"
is Alice) into an empty database, as scripts/quickstart stores them; then asks as
scripts/quickstart asks (k 3, hops 1, and hops 0 beside it), prints the hits; exit 1 when the
manager's city is not first. The last stdout line is JSON.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import default_uri, wipe

from graphmem import GraphMem
from graphmem.faces.episode_lines import parse_episode
from graphmem.settings.config import Settings

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "quickstart.jsonl"
QUESTION = "Where does Alice's manager live?"
ANSWER = "Bob lives in Lisbon."


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--uri", default=default_uri())
    ap.add_argument("--embedder", choices=("minilm", "hashing"), default="minilm")
    ap.add_argument("--json", action="store_true", help="print one JSON object as the last line")
    args = ap.parse_args()

    episodes = [parse_episode(line) for line in EXAMPLE.read_text().splitlines() if line.strip()]
    subject = episodes[0].scope
    wipe(args.uri)
    with GraphMem.connect(Settings.from_env(neo4j_uri=args.uri, embedder=args.embedder)) as mem:
        mem.ingest(episodes)
        answers = {}
        for hops in (0, 1):
            hits = mem.recall(QUESTION, subject, k=3, hops=hops)
            answers[hops] = [h.unit.content for h in hits]
            print(f"hops {hops}: " + " | ".join(f"{h.score:.3f} {h.unit.content}" for h in hits))
        settings = {"rrf_k": mem.recaller.rrf_k, "weights": mem.recaller.weights}
    first = answers[1][:1] == [ANSWER]
    print(f"{QUESTION!r} with hops 1: {ANSWER!r} {'first' if first else 'NOT first'} ({args.embedder}, {settings})")
    if args.json:
        print(
            json.dumps(
                {
                    "benchmark": "quickstart_recall",
                    "embedder": args.embedder,
                    "settings": settings,
                    "hits": answers,
                    "first": first,
                }
            )
        )
    sys.exit(0 if first else 1)


if __name__ == "__main__":
    main()
