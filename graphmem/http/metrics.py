"""``GET /metrics``: the server's figures in Prometheus's text format (prometheus-client).

Requests by route template and status, with their latency; recall latency by hops; episodes,
units and decisions written; Neo4j retries and unreachable periods (counted by the driver,
``graphmem.adapters.neo4j.driver``); the search indexes' population, read at scrape time.
Who may read it is ``GRAPHMEM_HTTP_METRICS``: ``off``, ``loopback`` (requests from this
machine only, the default) or ``admin`` (an admin key). With several worker processes
(``PROMETHEUS_MULTIPROC_DIR`` set) every worker's figures are summed from that folder.
"""

from __future__ import annotations

import ipaddress
import os
import time
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from fastapi import Request
from fastapi.responses import Response
from prometheus_client import CONTENT_TYPE_LATEST, REGISTRY, CollectorRegistry, Counter, Histogram, generate_latest
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.multiprocess import MultiProcessCollector
from prometheus_client.registry import Collector

from graphmem.http.errors import ApiError

#: Request latency buckets, seconds: recall is tens of milliseconds, a large write a minute.
BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0)
#: Seconds an index reading stands: a scrape every few seconds must not load Neo4j.
INDEX_FOR = 15.0

REQUESTS = Counter("graphmem_http_requests", "HTTP requests answered", ["method", "route", "status"])
LATENCY = Histogram(
    "graphmem_http_request_seconds", "HTTP request latency", ["method", "route", "status"], buckets=BUCKETS
)
RECALL = Histogram("graphmem_recall_seconds", "Recall latency (the work, without waiting in line)", ["hops"])
EPISODES = Counter("graphmem_episodes_written", "Episodes newly stored through the API")
UNITS = Counter("graphmem_units_written", "Units written through the API")
DECISIONS = Counter("graphmem_decisions", "Decisions written through the API, by operation", ["op"])


def local_address(address: str) -> bool:
    """``address`` (the peer's IP) is this machine's."""
    try:
        return ipaddress.ip_address(address).is_loopback
    except ValueError:
        return False


def observe_request(method: str, route: str, status: int, seconds: float) -> None:
    REQUESTS.labels(method, route, str(status)).inc()
    LATENCY.labels(method, route, str(status)).observe(seconds)


def written(report: Mapping[str, Any]) -> Mapping[str, Any]:
    """Count what a write report (``views.write_report``'s shape) says was written; returns it."""
    EPISODES.inc(report.get("new_episodes", 0))
    UNITS.inc(len(report.get("unit_ids", ())))
    for op, n in report.get("decisions", {}).items():
        if n:
            DECISIONS.labels(op).inc(n)
    return report


def timed_recall(hops: int, fn: Callable[[], Any]) -> Any:
    began = time.perf_counter()
    try:
        return fn()
    finally:
        RECALL.labels(str(hops)).observe(time.perf_counter() - began)


class IndexCollector(Collector):
    """The search indexes as last read (``GraphMem.index_status``), at most every ``INDEX_FOR`` s."""

    def __init__(self, status: Callable[[], dict[str, Any]]):
        self.status, self.since = status, -INDEX_FOR
        self.last: dict[str, Any] | None = None

    def collect(self) -> Iterator[GaugeMetricFamily]:
        if time.monotonic() - self.since >= INDEX_FOR:
            try:
                self.last = self.status()
            except Exception:  # no database (in-memory), or Neo4j down: nothing to show
                self.last = None
            self.since = time.monotonic()
        if not self.last:
            return
        units = GaugeMetricFamily("graphmem_index_units", "Units, and those searchable now", labels=["searchable"])
        units.add_metric(["false"], self.last.get("units", 0) - self.last.get("searchable_units", 0))
        units.add_metric(["true"], self.last.get("searchable_units", 0))
        yield units
        pending = GaugeMetricFamily(
            "graphmem_index_population_pending_percent",
            "Share of each search index Neo4j has still to populate (0: online and complete)",
            labels=["index", "state"],
        )
        for index in self.last.get("indexes", ()):
            pending.add_metric([index["name"], index["state"]], 100.0 - (index.get("populationPercent") or 100.0))
        yield pending


def exposition(index: IndexCollector) -> bytes:
    """Every figure as Prometheus text: this process's, or all workers' in multiprocess mode."""
    folder = os.environ.get("PROMETHEUS_MULTIPROC_DIR")
    registry = CollectorRegistry() if folder else REGISTRY
    if folder:
        MultiProcessCollector(registry, path=folder)
    extra = CollectorRegistry()
    extra.register(index)
    return generate_latest(registry) + generate_latest(extra)


async def metrics(request: Request) -> Response:
    """The figures, to whom ``GRAPHMEM_HTTP_METRICS`` allows: else 404 (off) or 403."""
    who = request.app.state.config.metrics
    if who == "off":
        raise ApiError(404, "not_found", "metrics are off (GRAPHMEM_HTTP_METRICS)")
    if who == "loopback" and not local_address(request.client.host if request.client else ""):
        raise ApiError(403, "forbidden", "metrics are served to this machine only (GRAPHMEM_HTTP_METRICS=loopback)")
    if who == "admin":
        key = await request.app.state.admin_key(request.headers.get("authorization", ""))
        if key is None or not key.admin:
            raise ApiError(403, "forbidden", "metrics need an admin key (GRAPHMEM_HTTP_METRICS=admin)")
    state = request.app.state
    body = await state.keys.run(exposition, state.index_metrics)
    return Response(body, media_type=CONTENT_TYPE_LATEST)
