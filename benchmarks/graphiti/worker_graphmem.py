"""graphmem side of benchmarks/graphiti/run.py (system Python). Not meant to be run by hand."""

from __future__ import annotations

import sys
import time
from datetime import datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _proto import OCCURRED, VectorTable, current_rss_mb, episode_text, peak_rss_mb, read_facts, serve, years

from graphmem import GraphMem, Settings
from graphmem.domain.models import Episode, Fact, Scope
from graphmem.embed import HashingEmbedder, MiniLMEmbedder

SCOPE = Scope.parse("user:bench")
STATE: dict = {}


class LazyFallback:
    """The real embedder, loaded only if a text was not precomputed (should not happen)."""

    def __init__(self, name: str):
        self.name, self._emb = name, None

    def embed(self, texts):
        if self._emb is None:
            self._emb = HashingEmbedder() if self.name.startswith("hashing") else MiniLMEmbedder()
        return self._emb.embed(texts)


def setup(msg: dict) -> dict:
    table = VectorTable(msg["texts"], msg["vectors"], msg["embedder_name"], LazyFallback(msg["embedder_name"]))
    # The lookup table stands in for the embedder (same name and dimension as the real one,
    # so the index's model check agrees).
    settings = Settings.from_env(
        neo4j_uri=msg["uri"],
        neo4j_password=msg["password"],
        embedder="hashing" if msg["embedder_name"].startswith("hashing") else "minilm",
    )
    STATE.update(
        table=table, mem=GraphMem.connect(settings, embedder=table), facts=read_facts(msg["facts"]), batch=msg["batch"]
    )
    return {"rss_mb": current_rss_mb()}


def ingest(msg: dict) -> dict:
    facts, batch = STATE["facts"], STATE["batch"]
    started = time.perf_counter()
    episodes = []
    for i, f in enumerate(facts):
        valid, invalid = years(f)
        episodes.append(
            Episode(
                id=f"bench:{i}",
                scope=SCOPE,
                occurred_at=OCCURRED,
                channel="document",
                raw=episode_text(f),
                facts=(
                    Fact(
                        subject=f["s"],
                        predicate="plays_for_club",
                        object=f["o"],
                        content=f["content"],
                        valid_at=valid,
                        invalid_at=invalid,
                    ),
                ),
            )
        )
    STATE["mem"].ingest(episodes, batch=batch)  # one write per batch, as `graphmem ingest --batch` writes
    return {"ingest_s": time.perf_counter() - started, "facts": len(facts)}


def ask(msg: dict) -> dict:
    as_of = datetime.fromisoformat(msg["as_of"]) if msg.get("as_of") else None
    t0 = time.perf_counter()
    hits = STATE["mem"].recall(msg["q"], SCOPE, k=msg["k"], as_of=as_of)
    ms = 1000 * (time.perf_counter() - t0)
    return {
        "ms": ms,
        "hits": [[h.unit.triple.subject, h.unit.triple.object] if h.unit.triple else [None, None] for h in hits],
    }


def stats(msg: dict) -> dict:
    t = STATE.get("table")
    return {
        "peak_rss_mb": peak_rss_mb(),
        "rss_mb": current_rss_mb(),
        "embed_misses": t.misses if t else 0,
        "llm_calls": 0,
    }


def quit_(msg: dict) -> dict:
    if "mem" in STATE:
        STATE["mem"].close()
    return {}


if __name__ == "__main__":
    serve({"setup": setup, "ingest": ingest, "ask": ask, "stats": stats, "quit": quit_})
