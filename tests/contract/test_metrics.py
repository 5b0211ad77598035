"""``GET /metrics`` and the request log: figures that move with real traffic, on both adapter
families, shown only to whom ``GRAPHMEM_HTTP_METRICS`` allows, and a request id on every answer
and log line."""

from __future__ import annotations

import json
import logging

import pytest

pytest.importorskip("fastapi")

from fastapi.testclient import TestClient
from prometheus_client.parser import text_string_to_metric_families

from graphmem.http import HttpConfig, create_app
from tests.conftest import fresh_scope

LOOPBACK, ELSEWHERE = ("127.0.0.1", 40000), ("203.0.113.9", 40000)


def scrape(client: TestClient, **headers: str) -> dict[tuple[str, tuple], float]:
    """Every sample of /metrics by (name, sorted labels)."""
    answer = client.get("/metrics", headers=headers)
    assert answer.status_code == 200, answer.text
    assert answer.headers["content-type"].startswith("text/plain")
    return {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in text_string_to_metric_families(answer.text)
        for s in family.samples
    }


def moved(before: dict, after: dict, name: str, **labels: str) -> float:
    key = (name, tuple(sorted(labels.items())))
    return after.get(key, 0.0) - before.get(key, 0.0)


def test_the_counters_move_with_traffic(mem):
    alice = fresh_scope()
    _, token = mem.create_key([str(alice)])
    key = {"Authorization": f"Bearer {token}"}
    url = f"/v1/subjects/{str(alice).replace(':', '%3A')}"
    with TestClient(create_app(lambda: mem, HttpConfig()), client=LOOPBACK) as client:
        before = scrape(client)
        episodes = [
            {"id": "e1", "occurred_at": "2021-01-01", "raw": "I live in Paris."},
            {"id": "e2", "occurred_at": "2022-01-01", "raw": "I live in Berlin."},
        ]
        assert client.post(f"{url}/episodes", headers=key, json={"episodes": episodes}).status_code == 200
        for hops in (0, 0, 1):
            assert client.post(f"{url}/recall", headers=key, json={"query": "where", "hops": hops}).status_code == 200
        assert client.get(f"{url}/units/nothing", headers=key).status_code == 404
        after = scrape(client)
    recall = "/v1/subjects/{subject}/recall"
    assert moved(before, after, "graphmem_http_requests_total", method="POST", route=recall, status="200") == 3
    assert (
        moved(
            before,
            after,
            "graphmem_http_requests_total",
            method="GET",
            route="/v1/subjects/{subject}/units/{unit_id}",
            status="404",
        )
        == 1
    )
    assert moved(before, after, "graphmem_http_request_seconds_count", method="POST", route=recall, status="200") == 3
    assert moved(before, after, "graphmem_recall_seconds_count", hops="0") == 2
    assert moved(before, after, "graphmem_recall_seconds_count", hops="1") == 1
    assert moved(before, after, "graphmem_episodes_written_total") == 2
    assert moved(before, after, "graphmem_units_written_total") >= 2
    assert moved(before, after, "graphmem_decisions_total", op="ADD") >= 1
    assert moved(before, after, "graphmem_decisions_total", op="UPDATE") == 1  # Berlin ends Paris
    if mem.database is not None:  # the search indexes, read from Neo4j
        assert after[("graphmem_index_units", (("searchable", "true"),))] >= 1
        assert any(name == "graphmem_index_population_pending_percent" for name, _ in after)


@pytest.mark.parametrize("setting", ["off", "loopback", "admin"])
def test_who_may_read_the_metrics(memory_mem, setting):
    _, admin = memory_mem.create_key(admin=True)
    _, plain = memory_mem.create_key(["user:alice"])
    app = create_app(lambda: memory_mem, HttpConfig(metrics=setting))
    answers = {}
    for where in (LOOPBACK, ELSEWHERE):
        with TestClient(app, client=where) as client:
            for name, token in (("none", None), ("plain", plain), ("admin", admin)):
                headers = {"Authorization": f"Bearer {token}"} if token else {}
                answers[where[0], name] = client.get("/metrics", headers=headers).status_code
    expected = {
        "off": dict.fromkeys(answers, 404),
        "loopback": {k: 200 if k[0] == LOOPBACK[0] else 403 for k in answers},
        "admin": {k: 200 if k[1] == "admin" else 403 for k in answers},
    }[setting]
    assert answers == expected


def test_every_answer_and_log_line_carries_a_request_id(memory_mem, caplog):
    with (
        TestClient(create_app(lambda: memory_mem, HttpConfig())) as client,
        caplog.at_level(logging.INFO, logger="graphmem.http.access"),
    ):
        given = client.get("/healthz", headers={"X-Request-Id": "trace-42.a"})
        hostile = client.get("/healthz", headers={"X-Request-Id": 'x" injected\\n{"status": 200}'})
        made = client.get("/v1/me")  # refused (401) before any route: still an id
    logged = [json.loads(r.getMessage()) for r in caplog.records if r.name == "graphmem.http.access"]
    assert given.headers["x-request-id"] == "trace-42.a"
    assert hostile.headers["x-request-id"] != 'x" injected\\n{"status": 200}'  # replaced, never echoed
    assert made.status_code == 401 and len(made.headers["x-request-id"]) == 32
    assert [e["request_id"] for e in logged] == [r.headers["x-request-id"] for r in (given, hostile, made)]
    assert [e["status"] for e in logged] == [200, 200, 401]
