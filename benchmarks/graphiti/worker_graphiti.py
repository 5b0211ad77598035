"""Graphiti side of benchmarks/graphiti/run.py (runs in the bench venv). Not meant to be run by hand.

No LLM: nodes and edges are built directly and saved with graphiti_core's bulk API, as its own
add_episode_bulk saves them: each fact's episode (the text graphmem is given), its MENTIONS edges to
both entities and the fact's edge naming its episode. The LLM and cross-encoder clients Graphiti
insists on are stubs that count and raise if ever called.
"""

from __future__ import annotations

import asyncio
import os
import sys
import time
import uuid
from datetime import UTC, datetime
from pathlib import Path

os.environ.setdefault("GRAPHITI_TELEMETRY_ENABLED", "false")
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _proto import (
    OCCURRED,
    VectorTable,
    current_rss_mb,
    episode_text,
    peak_rss_mb,
    read_facts,
    serve,
    years,
)
from graphiti_core import Graphiti
from graphiti_core.cross_encoder.client import CrossEncoderClient
from graphiti_core.driver.neo4j_driver import Neo4jDriver
from graphiti_core.edges import EntityEdge, EpisodicEdge
from graphiti_core.embedder.client import EmbedderClient
from graphiti_core.llm_client.client import LLMClient
from graphiti_core.llm_client.config import LLMConfig
from graphiti_core.nodes import EntityNode, EpisodeType, EpisodicNode
from graphiti_core.search.search_config_recipes import EDGE_HYBRID_SEARCH_RRF
from graphiti_core.search.search_filters import ComparisonOperator, DateFilter, SearchFilters
from graphiti_core.utils.bulk_utils import add_nodes_and_edges_bulk

GROUP = "bench"
NS = uuid.UUID("6f1c1b1e-8d3a-4a53-9d0e-5b1f3a2c7e10")
STATE: dict = {"llm_calls": 0, "rerank_calls": 0}
LOOP = asyncio.new_event_loop()


class NoLLM(LLMClient):
    """Graphiti requires an LLM client; none of the paths used here may call it."""

    def __init__(self):
        super().__init__(LLMConfig(api_key="unused", model="none", small_model="none"))

    async def generate_response(self, *args, **kwargs):
        STATE["llm_calls"] += 1
        raise RuntimeError("benchmark: the LLM must not be called")

    async def _generate_response(self, *args, **kwargs):
        STATE["llm_calls"] += 1
        raise RuntimeError("benchmark: the LLM must not be called")


class NoCrossEncoder(CrossEncoderClient):
    async def rank(self, query, passages):
        STATE["rerank_calls"] += 1
        raise RuntimeError("benchmark: the cross-encoder must not be called (RRF config)")


class TableEmbedder(EmbedderClient):
    """graphmem's vectors (precomputed, same as the graphmem worker's) as Graphiti's embedder."""

    def __init__(self, table: VectorTable):
        self.table = table

    async def create(self, input_data):
        texts = [input_data] if isinstance(input_data, str) else list(input_data)
        return self.table.embed(texts[:1])[0]

    async def create_batch(self, input_data_list):
        return self.table.embed(list(input_data_list))


class LazyFallback:
    def __init__(self, name: str):
        self.name, self._emb = name, None

    def embed(self, texts):
        if self._emb is None:  # graphmem is installed --no-deps in this venv for exactly this
            from graphmem.embed import HashingEmbedder, MiniLMEmbedder

            self._emb = HashingEmbedder() if self.name.startswith("hashing") else MiniLMEmbedder()
        return self._emb.embed(texts)


def node_uuid(name: str) -> str:
    return str(uuid.uuid5(NS, name))


def setup(msg: dict) -> dict:
    table = VectorTable(msg["texts"], msg["vectors"], msg["embedder_name"], LazyFallback(msg["embedder_name"]))
    driver = Neo4jDriver(msg["uri"], "neo4j", msg["password"])  # created outside a running loop: no implicit index task
    g = Graphiti(graph_driver=driver, llm_client=NoLLM(), embedder=TableEmbedder(table), cross_encoder=NoCrossEncoder())
    LOOP.run_until_complete(g.build_indices_and_constraints())
    config = EDGE_HYBRID_SEARCH_RRF.model_copy(deep=True)
    config.limit = msg["k"]
    facts = read_facts(msg["facts"])
    names = list(dict.fromkeys(n for f in facts for n in (f["s"], f["o"])))
    STATE.update(
        table=table,
        g=g,
        config=config,
        facts=facts,
        names=names,
        batch=msg["batch"],
        name_of={node_uuid(n): n for n in names},
    )  # answers' node uuids back to names
    return {"rss_mb": current_rss_mb()}


async def _ingest() -> int:
    g, table, facts, names, batch = STATE["g"], STATE["table"], STATE["facts"], STATE["names"], STATE["batch"]
    now = datetime.now(UTC)
    for start in range(0, len(names), batch):
        chunk = names[start : start + batch]
        nodes = [
            EntityNode(uuid=node_uuid(n), name=n, group_id=GROUP, labels=["Entity"], created_at=now, name_embedding=v)
            for n, v in zip(chunk, table.embed(chunk))
        ]
        await add_nodes_and_edges_bulk(g.driver, [], [], nodes, [], g.embedder)
    for start in range(0, len(facts), batch):
        chunk = facts[start : start + batch]
        episodes, mentions, edges = [], [], []
        for i, (f, v) in enumerate(zip(chunk, table.embed([f["content"] for f in chunk])), start):
            valid, invalid = years(f)
            episode, edge = str(uuid.uuid5(NS, f"episode:{i}")), str(uuid.uuid5(NS, f"edge:{i}"))
            episodes.append(
                EpisodicNode(
                    uuid=episode,
                    name=f"bench:{i}",
                    group_id=GROUP,
                    labels=[],
                    created_at=now,
                    source=EpisodeType.text,
                    source_description="benchmark",
                    content=episode_text(f),
                    valid_at=OCCURRED,
                    entity_edges=[edge],
                )
            )
            mentions += [
                EpisodicEdge(source_node_uuid=episode, target_node_uuid=node_uuid(n), group_id=GROUP, created_at=now)
                for n in (f["s"], f["o"])
            ]
            edges.append(
                EntityEdge(
                    uuid=edge,
                    group_id=GROUP,
                    episodes=[episode],
                    source_node_uuid=node_uuid(f["s"]),
                    target_node_uuid=node_uuid(f["o"]),
                    created_at=now,
                    name="PLAYS_FOR",
                    fact=f["content"],
                    fact_embedding=v,
                    valid_at=valid,
                    invalid_at=invalid,
                )
            )
        await add_nodes_and_edges_bulk(g.driver, episodes, mentions, [], edges, g.embedder)
    return len(names)


def ingest(msg: dict) -> dict:
    started = time.perf_counter()
    nodes = LOOP.run_until_complete(_ingest())
    return {"ingest_s": time.perf_counter() - started, "facts": len(STATE["facts"]), "nodes": nodes}


def as_of_filter(t: datetime) -> SearchFilters:
    """Graphiti's documented temporal filter: valid_at <= T AND (invalid_at > T OR invalid_at IS NULL).
    Outer lists are OR-ed, inner lists AND-ed."""
    return SearchFilters(
        valid_at=[[DateFilter(date=t, comparison_operator=ComparisonOperator.less_than_equal)]],
        invalid_at=[
            [DateFilter(date=t, comparison_operator=ComparisonOperator.greater_than)],
            [DateFilter(comparison_operator=ComparisonOperator.is_null)],
        ],
    )


def ask(msg: dict) -> dict:
    # No date in the question ("current"): Graphiti has no implicit "now", so the same filter at now.
    t = datetime.fromisoformat(msg["as_of"]) if msg.get("as_of") else datetime.now(UTC)
    g = STATE["g"]
    t0 = time.perf_counter()
    res = LOOP.run_until_complete(
        g.search_(msg["q"], config=STATE["config"], group_ids=[GROUP], search_filter=as_of_filter(t))
    )
    ms = 1000 * (time.perf_counter() - t0)
    names = STATE["name_of"]
    return {"ms": ms, "hits": [[names.get(e.source_node_uuid), names.get(e.target_node_uuid)] for e in res.edges]}


def stats(msg: dict) -> dict:
    t = STATE.get("table")
    return {
        "peak_rss_mb": peak_rss_mb(),
        "rss_mb": current_rss_mb(),
        "embed_misses": t.misses if t else 0,
        "llm_calls": STATE["llm_calls"],
        "rerank_calls": STATE["rerank_calls"],
    }


def quit_(msg: dict) -> dict:
    if "g" in STATE:
        LOOP.run_until_complete(STATE["g"].close())
    return {}


if __name__ == "__main__":
    serve({"setup": setup, "ingest": ingest, "ask": ask, "stats": stats, "quit": quit_})
