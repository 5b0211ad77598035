"""The HTTP API's contract (docs/http.md), in process over every adapter family:
each endpoint's status and JSON shape, the key and subject checks made before anything is
read, the error body, limits, and what a request leaves in the access log."""

from __future__ import annotations

import hashlib
import json
import logging
import re
from typing import Any

import pytest

pytest.importorskip("fastapi")

from starlette.testclient import TestClient

from graphmem.api import MAX_OFFSET
from graphmem.errors import Unavailable
from graphmem.http import HttpConfig, create_app
from graphmem.http import app as http_app
from graphmem.settings.config import Settings
from tests.conftest import fresh_scope

#: Every /v1 route of the contract that names a subject: (method, path after the subject, body).
SUBJECT_ROUTES = [
    ("POST", "/episodes", {"episodes": []}),
    ("GET", "/episodes", None),
    ("GET", "/episodes/e1", None),
    ("DELETE", "/episodes/e1", None),
    ("POST", "/recall", {"query": "tea"}),
    ("POST", "/assemble", {"query": "tea"}),
    ("GET", "/history?entity=Alice", None),
    ("GET", "/units/u1", None),
    ("POST", "/units/u1/retract", {"reason": "wrong"}),
    ("POST", "/units/u1/end", {"reason": "moved"}),
    ("GET", "/traces/t1", None),
    ("GET", "/decisions", None),
    ("GET", "/blocks", None),
    ("GET", "/blocks/persona", None),
    ("PUT", "/blocks/persona", {"value": "x", "token_budget": 5}),
    ("DELETE", "/blocks/persona", None),
    ("DELETE", "?confirm=true", None),
    ("GET", "/export", None),
    ("GET", "/units", None),
    ("GET", "/entities", None),
    ("GET", "/entities/Alice", None),
]


def name(scope) -> str:
    return f"{scope.subject_type.value}:{scope.subject_id}"


def path(scope, suffix: str = "") -> str:
    return "/v1/subjects/" + name(scope).replace(":", "%3A") + suffix


def fact(city: str, when: str) -> dict:
    return {
        "subject": "Alice",
        "predicate": "lives_in",
        "object": city,
        "content": f"Alice lives in {city}",
        "valid_at": when,
        "single_valued": True,
    }


def episode(eid: str, city: str, when: str) -> dict:
    return {"id": eid, "occurred_at": when, "raw": f"I live in {city}.", "facts": [fact(city, when)]}


#: The Content-Type an import is sent as.
NDJSON = {"Content-Type": "application/x-ndjson"}


class Api:
    """A client of one app, with keys made through the facade."""

    def __init__(self, client: TestClient, mem):
        self.client, self.mem = client, mem

    def key(self, *subjects, admin: bool = False) -> dict[str, str]:
        _, token = self.mem.create_key([name(s) for s in subjects], admin=admin)
        return {"Authorization": f"Bearer {token}"}

    def __call__(
        self, method: str, url: str, headers: dict | None = None, body: Any = None, status: int = 200, **kwargs
    ) -> Any:
        response = self.client.request(method, url, headers=headers, json=body, **kwargs)
        assert response.status_code == status, (method, url, response.status_code, response.text)
        if response.headers.get("content-type", "").startswith("application/json"):
            return response.json()
        return response


def error(api: Api, method: str, url: str, status: int, code: str, **kwargs) -> str:
    """The one-line message of a refusal with this status and code."""
    doc = api(method, url, status=status, **kwargs)
    assert set(doc) >= {"error"} and set(doc["error"]) == {"code", "message"}, doc
    assert doc["error"]["code"] == code, doc
    message = doc["error"]["message"]
    assert "\n" not in message and "Traceback" not in message
    return message


@pytest.fixture
def api(mem):
    with TestClient(create_app(lambda: mem, HttpConfig(max_body=64 * 1024)), raise_server_exceptions=False) as client:
        yield Api(client, mem)


def test_write_read_and_audit_round_trip(api):
    alice = fresh_scope()
    key = api.key(alice)
    ids = [f"{alice.subject_id}:{n}" for n in range(2)]
    written = api(
        "POST",
        path(alice, "/episodes"),
        key,
        {
            "episodes": [
                episode(ids[0], "Paris", "2020-01-01"),
                "not an object",
                {**episode(ids[1], "Berlin", "2022-01-01"), "subject": name(alice)},
                {"occurred_at": "2022-02-01", "raw": "x", "subject": "user:someone-else"},
                {"occurred_at": "2022-02-01"},
            ]
        },
    )
    assert written["episodes"] == 2 and written["new_episodes"] == 2
    assert written["decisions"] == {"ADD": 1, "UPDATE": 1, "DELETE": 0, "NOOP": 0}
    assert [f["index"] for f in written["failed"]] == [1, 3, 4]
    assert written["failed"][0]["error"] == "an episode line is a JSON object"
    assert "leave it out" in written["failed"][1]["error"] and written["failed"][2]["error"] == "raw: required"
    again = api("POST", path(alice, "/episodes"), key, {"episodes": [episode(ids[0], "Paris", "2020-01-01")]})
    assert again["new_episodes"] == 0 and sum(again["decisions"].values()) == 0  # idempotent by id

    found = api("POST", path(alice, "/recall"), key, {"query": "where does Alice live?", "k": 5})
    now = found["hits"]
    assert [h["content"] for h in now] == ["Alice lives in Berlin"]
    assert set(now[0]) >= {
        "id",
        "content",
        "kind",
        "score",
        "confidence",
        "episode_id",
        "valid_at",
        "invalid_at",
        "created_at",
        "expired_at",
        "path",
    }
    assert found["relevant"] is True and 0 < now[0]["confidence"] <= 1  # the CLI's --json shape
    dated = api("POST", path(alice, "/recall"), key, {"query": "where did Alice live in March 2021?"})
    assert dated["window"]["from"].startswith("2021-03-01")  # the time the question named
    then = api("POST", path(alice, "/recall"), key, {"query": "where does Alice live?", "as_of": "2021-01-01"})
    assert [h["content"] for h in then["hits"]] == ["Alice lives in Paris"]
    before = api("POST", path(alice, "/recall"), key, {"query": "Alice", "known_at": "2000-01-01"})
    assert before["hits"] == []

    context = api("POST", path(alice, "/assemble"), key, {"query": "where does Alice live?", "budget": 100})
    assert "Alice lives in Berlin" in context["text"] and set(context["trace"]) >= {
        "id",
        "resident_ids",
        "recalled_ids",
        "tokens",
    }
    stored = api("GET", path(alice, f"/traces/{context['trace']['id']}"), key)
    assert [u["content"] for u in stored["recalled"]] == ["Alice lives in Berlin"]
    blocks_only = api("POST", path(alice, "/assemble"), key, {"query": "where does Alice live?", "budget": 0})
    assert blocks_only["trace"]["recalled_ids"] == []  # budget 0: the blocks alone, as on the CLI

    entries = api("GET", path(alice, "/history?entity=Alice"), key)["entries"]
    assert [(e["slot"], e["content"]) for e in entries] == [
        ("Alice lives_in", "Alice lives in Paris"),
        ("Alice lives_in", "Alice lives in Berlin"),
    ]
    assert entries[0]["invalid_at"] == "2022-01-01T00:00:00+00:00"
    why = api("GET", path(alice, f"/units/{now[0]['id']}"), key)
    key_id = key["Authorization"].split("_")[1]
    assert why["episode"]["id"] == ids[1] and why["decisions"][0]["actor"] == key_id
    assert api("GET", path(alice, f"/history?unit_id={now[0]['id']}"), key)["entries"][-1]["id"] == now[0]["id"]

    log = api("GET", path(alice, "/decisions?limit=1"), key)
    assert len(log["decisions"]) == 1 and log["next_cursor"] == "1"
    rest = api("GET", path(alice, f"/decisions?limit=5&cursor={log['next_cursor']}"), key)
    assert rest["next_cursor"] is None
    assert {d["op"] for d in log["decisions"] + rest["decisions"]} == {"ADD", "UPDATE"}
    assert {d["actor"] for d in log["decisions"] + rest["decisions"]} == {key_id}
    assert [d["op"] for d in api("GET", path(alice, "/decisions?op=UPDATE"), key)["decisions"]] == ["UPDATE"]
    assert api("GET", path(alice, f"/decisions?episode={ids[0]}"), key)["decisions"][0]["episode_id"] == ids[0]

    first = api("GET", path(alice, "/episodes?limit=1"), key)
    second = api("GET", path(alice, f"/episodes?limit=1&cursor={first['next_cursor']}"), key)
    assert {e["id"] for e in first["episodes"] + second["episodes"]} == set(ids) and second["next_cursor"] is None
    assert api("GET", path(alice, f"/episodes/{ids[1]}"), key)["raw"] == "I live in Berlin."
    removed = api("DELETE", path(alice, f"/episodes/{ids[1]}"), key)
    assert removed["units"] >= 1 and removed["actor"] == key_id and removed["restored"]
    back = api("POST", path(alice, "/recall"), key, {"query": "where does Alice live?"})["hits"]
    assert [h["content"] for h in back] == ["Alice lives in Paris"]


def test_every_v1_route_checks_the_key_and_its_subject_before_reading(mem):
    """A spy memory: refused requests must not reach anything but ``authenticate``."""
    alice, bob = fresh_scope(), fresh_scope()
    _, alice_token = mem.create_key([name(alice)])
    _, revoked = mem.create_key([name(bob)])
    mem.revoke_key(revoked.split("_")[1])
    touched: list[str] = []

    class Spy:
        def __getattr__(self, attr):
            touched.append(attr)
            return getattr(mem, attr)

    with TestClient(create_app(Spy, HttpConfig())) as client:
        api = Api(client, mem)
        touched.clear()
        for method, suffix, body in SUBJECT_ROUTES:
            url = path(bob, suffix)
            for headers, message in [
                (None, "missing API key"),
                ({"Authorization": "Basic x"}, "missing API key"),
                ({"Authorization": "Bearer gm_000000000000_nope"}, "unknown or revoked"),
                ({"Authorization": f"Bearer {revoked}"}, "unknown or revoked"),
            ]:
                response = client.request(method, url, headers=headers, json=body)
                assert response.status_code == 401 and response.headers["www-authenticate"] == "Bearer"
                assert response.json()["error"]["message"].startswith(message), (method, url)
            # another subject's key: 403, even with a body that would not validate
            assert (
                error(
                    api,
                    method,
                    url,
                    403,
                    "forbidden",
                    headers={"Authorization": f"Bearer {alice_token}"},
                    body={"bogus": True},
                )
                == f"key {alice_token.split('_')[1]} does not hold subject {name(bob)}"
            )
        assert error(api, "POST", "/v1/import", 403, "forbidden", headers={"Authorization": f"Bearer {alice_token}"})
        assert set(touched) == {"authenticate"}


def test_errors_have_one_shape_and_their_status(api, mem, monkeypatch):
    alice = fresh_scope()
    key = api.key(alice)
    url = path(alice)
    assert (
        error(api, "GET", url + "/units/nope", 404, "not_found", headers=key) == f"no unit nope in scope {name(alice)}"
    )
    assert error(api, "GET", url + "/blocks/nope", 404, "not_found", headers=key)
    assert error(api, "GET", "/v1/no-such-route", 404, "not_found", headers=key)
    assert error(api, "GET", url + "/recall", 405, "method_not_allowed", headers=key)
    eid = f"{alice.subject_id}:c"
    api("POST", url + "/episodes", key, {"episodes": [episode(eid, "Paris", "2020-01-01")]})
    reused = api(
        "POST",
        url + "/episodes",
        key,
        {"episodes": [episode(f"{eid}2", "Oslo", "2020-01-01"), episode(eid, "Rome", "2020-01-01")]},
    )
    assert reused["episodes"] == 1 and [f["index"] for f in reused["failed"]] == [1]  # the other item is stored
    assert "already exists with different content" in reused["failed"][0]["error"]
    for field, value in (("single_valued", "yes"), ("single_valued", 1), ("confidence", "0.5")):  # a fact's too
        item = episode(f"{eid}3", "Kyiv", "2020-01-01")
        item["facts"][0][field] = value
        sent = api("POST", url + "/episodes", key, {"episodes": [item]})
        assert sent["episodes"] == 0 and f"facts.0.{field}: Input should be a valid" in sent["failed"][0]["error"]
    assert error(
        api,
        "POST",
        url + "/recall",
        400,
        "bad_request",
        headers={**key, "Content-Type": "application/json"},
        content=b"{not json",
    ).startswith("the body is not valid JSON")
    assert error(api, "POST", url + "/recall", 400, "bad_request", headers=key).startswith("the body must be")
    assert (
        error(api, "POST", url + "/recall", 422, "invalid_input", headers=key, body={"query": "x", "k": 0})
        == "k: Input should be greater than or equal to 1"
    )
    for field, value in (("k", "5"), ("hops", "1"), ("include_shared", "yes"), ("k", True)):  # named, not guessed at
        assert error(
            api, "POST", url + "/recall", 422, "invalid_input", headers=key, body={"query": "x", field: value}
        ).startswith(f"{field}: Input should be a valid")
    assert error(api, "POST", url + "/recall", 422, "invalid_input", headers=key, body={"query": ""}).startswith(
        "query: "
    )  # a field named like a location is named
    assert error(api, "GET", url + "/episodes?limit=0", 422, "invalid_input", headers=key).startswith("limit: ")
    assert error(
        api, "POST", url + "/recall", 422, "invalid_input", headers=key, body={"query": "x", "as_of": "last year"}
    ).startswith("as_of: 'last year' is not an ISO 8601 time")
    assert error(
        api, "POST", url + "/recall", 422, "invalid_input", headers=key, body={"query": "x", "surprise": 1}
    ).startswith("surprise: Extra inputs")
    assert error(
        api, "POST", url + "/episodes", 422, "invalid_input", headers=key, body={"episodes": [], "extractor": "magic"}
    ).startswith("extractor: Input should be 'facts'")
    assert (
        error(api, "GET", url + "/history", 422, "invalid_input", headers=key)
        == "give exactly one of entity or unit_id"
    )
    assert error(api, "GET", url + "/decisions?cursor=abc", 422, "invalid_input", headers=key)
    assert error(api, "GET", "/v1/subjects/alice/blocks", 422, "invalid_input", headers=api.key(alice, admin=True))
    assert (
        error(api, "DELETE", url, 400, "bad_request", headers=key)
        == f"erasing {name(alice)} is for good: add ?confirm=true"
    )
    assert (
        error(
            api,
            "POST",
            url + "/episodes",
            413,
            "payload_too_large",
            headers=key,
            body={"episodes": [{"raw": "x" * 70_000}]},
        )
        == "the request body is over 65536 bytes"
    )

    monkeypatch.setattr(mem, "list_blocks", lambda *a, **k: (_ for _ in ()).throw(Unavailable("Neo4j is down")))
    assert error(api, "GET", url + "/blocks", 503, "unavailable", headers=key) == "Neo4j is down"
    # the key check itself reaches the database first: down, it is the same 503, not a 500
    with monkeypatch.context() as down:
        down.setattr(mem, "authenticate", lambda *a, **k: (_ for _ in ()).throw(Unavailable("Neo4j is down")))
        assert error(api, "GET", url + "/blocks", 503, "unavailable", headers=key) == "Neo4j is down"
    monkeypatch.setattr(mem, "list_blocks", lambda *a, **k: 1 / 0)
    assert (
        error(api, "GET", url + "/blocks", 500, "internal", headers=key)
        == "internal error: the server log has the details"
    )


def test_subjects_retract_export_and_import(api):
    alice, bob = fresh_scope(), fresh_scope()
    key, admin = api.key(alice), api.key(admin=True)
    for n, (city, when) in enumerate([("Paris", "2020-01-01"), ("Berlin", "2022-01-01")]):
        api("POST", path(alice, "/episodes"), key, {"episodes": [episode(f"{alice.subject_id}:{n}", city, when)]})
    api("POST", path(bob, "/episodes"), admin, {"episodes": [episode(f"{bob.subject_id}:0", "Rome", "2021-01-01")]})
    mine = api("GET", "/v1/subjects", key)["subjects"]
    assert mine == [{"scope": name(alice), "project": None, "episodes": 2, "units": 2, "decisions": 2}]
    assert {name(alice), name(bob)} <= {s["scope"] for s in api("GET", "/v1/subjects", admin)["subjects"]}

    def where(headers: dict) -> list[str]:
        hits = api("POST", path(alice, "/recall"), headers, {"query": "where does Alice live?"})["hits"]
        return [h["content"] for h in hits]

    [berlin] = api("POST", path(alice, "/recall"), key, {"query": "where does Alice live?"})["hits"]
    done = api("POST", path(alice, f"/units/{berlin['id']}/retract"), key, {"reason": "a typo"})
    assert (
        done["unit_id"] == berlin["id"] and done["decisions"]["DELETE"] == 1 and where(key) == ["Alice lives in Paris"]
    )
    [retraction] = api("GET", path(alice, "/decisions?op=DELETE"), key)["decisions"]
    assert retraction["reason"].startswith("a typo") and retraction["actor"] == key["Authorization"].split("_")[1]
    assert error(api, "POST", path(alice, "/units/nope/retract"), 404, "not_found", headers=key, body={"reason": "x"})

    exported = api("GET", path(alice, "/export"), key)
    assert exported.headers["content-type"].startswith("application/x-ndjson")
    records = [json.loads(line) for line in exported.text.splitlines()]
    assert records[0]["type"] == "header" and records[0]["scope"] == name(alice)
    api("DELETE", path(alice, "?confirm=true"), admin)
    assert "was erased" in error(
        api, "POST", "/v1/import", 409, "conflict", headers={**admin, **NDJSON}, content=exported.text
    )
    imported = api("POST", "/v1/import?force=true", {**admin, **NDJSON}, content=exported.text)
    assert imported["imported"]["unit"] == sum(r["type"] == "unit" for r in records)
    assert where(admin) == ["Alice lives in Paris"]  # erasing revoked the key that held only alice
    assert (
        error(
            api, "POST", "/v1/import", 422, "invalid_input", headers={**admin, **NDJSON}, content='{"type": "unit"}\n'
        )
        == "body:1: scope: must be a string TYPE:ID"
    )
    [paris] = api("POST", path(alice, "/recall"), admin, {"query": "where does Alice live?"})["hits"]
    ended = api("POST", path(alice, f"/units/{paris['id']}/end"), admin, {"reason": "moved", "at": "2021-01-01"})
    assert ended["decisions"]["UPDATE"] == 1 and where(admin) == []  # true until 2021, nothing after
    assert error(
        api,
        "POST",
        path(alice, f"/units/{paris['id']}/end"),
        422,
        "invalid_input",
        headers=admin,
        body={"reason": "x", "at": "soon"},
    )


def test_blocks(api):
    alice = fresh_scope()
    key, admin = api.key(alice), api.key(admin=True)
    url = path(alice, "/blocks/persona")
    made = api("PUT", url, key, {"value": "Be brief.", "token_budget": 10, "description": "tone"})
    assert (made["label"], made["tokens"], made["writable"], made["scope"]) == ("persona", 3, True, name(alice))
    assert api("GET", url, key)["value"] == "Be brief."
    assert [b["label"] for b in api("GET", path(alice, "/blocks"), key)["blocks"]] == ["persona"]
    assert "over its budget" in error(api, "PUT", url, 422, "invalid_input", headers=key, body={"value": "word " * 40})
    assert error(api, "PUT", url, 403, "forbidden", headers=key, body={"value": "x", "writable": False})
    api("PUT", url, admin, {"value": "Be brief.", "writable": False})
    assert "read-only" in error(api, "PUT", url, 422, "invalid_input", headers=key, body={"value": "Be loud."})
    assert api("PUT", url, admin, {"value": "Be loud.", "admin": True})["value"] == "Be loud."
    slashed = path(alice, "/blocks/a%2Fb")  # a label holding "/" is one path segment
    assert api("PUT", slashed, key, {"value": "x", "token_budget": 5})["label"] == "a/b"
    assert api("DELETE", slashed, key) == {"deleted": True, "label": "a/b"}
    # A read-only block is not deleted (then made anew, writable) by a key that may not replace it.
    assert "read-only" in error(api, "DELETE", url, 422, "invalid_input", headers=key)
    assert error(api, "DELETE", url + "?admin=true", 403, "forbidden", headers=key)
    assert api("GET", url, key)["value"] == "Be loud."
    assert api("DELETE", url + "?admin=true", admin) == {"deleted": True, "label": "persona"}
    error(api, "GET", url, 404, "not_found", headers=key)


def test_erasure_receipt_and_keys_of_the_subject(api):
    alice, bob = fresh_scope(), fresh_scope()
    only, both, admin = api.key(alice), api.key(alice, bob), api.key(admin=True)
    api("POST", path(alice, "/episodes"), only, {"episodes": [episode(f"{alice.subject_id}:1", "Paris", "2020-01-01")]})
    receipt = api("DELETE", path(alice, "?confirm=true"), both)
    both_id = both["Authorization"].split("_")[1]
    assert receipt["actor"] == both_id and receipt["erasure_id"] and receipt["units"] == 1 and receipt["episodes"] == 1
    assert receipt["revoked_keys"] == [only["Authorization"].split("_")[1]]
    assert error(api, "GET", path(alice, "/blocks"), 401, "unauthorized", headers=only)
    assert error(api, "GET", path(alice, "/blocks"), 403, "forbidden", headers=both)
    assert api("GET", path(bob, "/blocks"), both) == {"blocks": []}
    assert api("GET", "/v1/me", both)["key"]["subjects"] == [name(bob)]
    assert api("POST", path(alice, "/recall"), admin, {"query": "Paris"})["hits"] == []


def test_me_probes_docs_and_page(api, mem, monkeypatch):
    alice = fresh_scope()
    key = api.key(alice)
    me = api("GET", "/v1/me", key)["key"]
    assert (me["subjects"], me["admin"]) == ([name(alice)], False) and "digest" not in me and "key" not in me
    assert api("GET", "/healthz") == {"status": "ok"}
    monkeypatch.setattr(http_app, "READY_FOR", 0)  # every probe checks again
    ready = api("GET", "/readyz")
    assert ready["ok"] is True and {c["check"] for c in ready["checks"]} >= {"embedder", "tokenizer"}
    monkeypatch.setattr(
        mem,
        "doctor",
        lambda: {"ok": False, "checks": [{"check": "indexes", "ok": False, "detail": "entry_text=POPULATING"}]},
    )
    assert error(api, "GET", "/readyz", 503, "not_ready") == "indexes: entry_text=POPULATING"

    paths = api("GET", "/openapi.json")["paths"]
    for route in (
        "/v1/subjects/{subject}/episodes",
        "/v1/subjects/{subject}/episodes/{episode_id}",
        "/v1/subjects/{subject}/recall",
        "/v1/subjects/{subject}/assemble",
        "/v1/subjects/{subject}/history",
        "/v1/subjects/{subject}/units/{unit_id}",
        "/v1/subjects/{subject}/decisions",
        "/v1/subjects/{subject}/blocks",
        "/v1/subjects/{subject}/blocks/{label}",
        "/v1/subjects/{subject}",
        "/v1/subjects/{subject}/export",
        "/v1/import",
        "/healthz",
        "/readyz",
    ):
        assert route in paths, route
    page = api("GET", "/")
    csp = page.headers["content-security-policy"]
    assert "default-src 'self'" in csp and "unsafe-inline" not in csp and page.headers["x-frame-options"] == "DENY"
    # /docs works offline and runs no one else's script: Swagger UI comes from this server, under
    # the same CSP (its browser test is in tests/neo4j/test_http.py).
    docs = api("GET", "/docs")
    assert docs.headers["content-security-policy"] == csp
    sources = [s for s in re.findall(r'(?:src|href)="([^"]+)"', docs.text) if s != "data:,"]  # no favicon
    assert sources and all(s.startswith("/") and not s.startswith("//") for s in sources), sources
    assert "<script>" not in docs.text and "<style" not in docs.text
    for source in sources:
        api("GET", source)  # 200
    assert api.client.get("/redoc").status_code == 404  # Redoc's inline styles would break under the CSP
    script = api("GET", "/static/app.js").text
    assert "textContent" in script and "localStorage" not in script
    assert not re.search(r"\.(inner|outer)HTML|insertAdjacentHTML|document\.write", script)
    assert api.client.get(path(alice, "/blocks"), headers=key).headers["cache-control"] == "no-store"


def test_access_log_names_routes_not_memory(api, caplog):
    alice = fresh_scope()
    key = api.key(alice)
    with caplog.at_level(logging.INFO, logger="graphmem.http.access"):
        api("POST", path(alice, "/recall"), key, {"query": "the secret recipe"})
        api("GET", path(alice, "/units/missing-unit"), key, status=404)
        api("GET", path(alice, "/blocks"), status=401)
        api("GET", path(fresh_scope(), "/blocks"), key, status=403)
    lines = [r.getMessage() for r in caplog.records if r.name == "graphmem.http.access"]
    key_id = key["Authorization"].split("_")[1]
    assert lines[0].startswith("POST /v1/subjects/{subject}/recall 200 ") and lines[0].endswith(f"key={key_id}")
    assert lines[1].startswith("GET /v1/subjects/{subject}/units/{unit_id} 404 ")
    assert lines[2].startswith("GET - 401 ") and lines[2].endswith("key=-")  # refused before routing
    assert lines[3].startswith("GET - 403 ") and lines[3].endswith(f"key={key_id}")  # who tried another subject
    text = "\n".join(lines)
    assert alice.subject_id not in text and "secret" not in text and "missing-unit" not in text


def test_cors_is_off_unless_configured(mem):
    preflight = {
        "Origin": "http://agent.test",
        "Access-Control-Request-Method": "POST",
        "Access-Control-Request-Headers": "authorization",
    }
    with TestClient(create_app(lambda: mem)) as client:
        assert "access-control-allow-origin" not in client.options("/v1/me", headers=preflight).headers
    with TestClient(create_app(lambda: mem, HttpConfig(cors_origins=("http://agent.test",)))) as client:
        allowed = client.options("/v1/me", headers=preflight)
        assert allowed.status_code == 200 and allowed.headers["access-control-allow-origin"] == "http://agent.test"
        other = client.options("/v1/me", headers={**preflight, "Origin": "http://evil.test"})
        assert "access-control-allow-origin" not in other.headers


def test_without_keys_every_subject_is_open_and_writes_say_http(mem):
    alice = fresh_scope()
    with TestClient(create_app(lambda: mem, HttpConfig(auth=False))) as client:
        api = Api(client, mem)
        assert api("GET", "/v1/me") == {"key": None}
        api(
            "POST",
            path(alice, "/episodes"),
            body={"episodes": [episode(f"{alice.subject_id}:o", "Oslo", "2021-01-01")]},
        )
        assert {d["actor"] for d in api("GET", path(alice, "/decisions"))["decisions"]} == {"http"}


def test_subject_and_ids_may_hold_any_character(api):
    odd = fresh_scope()
    odd = odd.model_copy(update={"subject_id": odd.subject_id + "/x y%"})
    key = api.key(odd)
    quoted = "/v1/subjects/" + "user%3A" + odd.subject_id.replace("%", "%25").replace("/", "%2F").replace(" ", "%20")
    eid = "doc/1 ?#"
    api("POST", quoted + "/episodes", key, {"episodes": [{"id": eid, "occurred_at": "2021-01-01", "raw": "Hi."}]})
    assert api("GET", quoted + "/episodes/doc%2F1%20%3F%23", key)["id"] == eid
    assert api("DELETE", quoted + "/episodes/doc%2F1%20%3F%23", key)["units"] == 1


def test_a_key_is_stored_only_as_its_digest(mem):
    _, token = mem.create_key([name(fresh_scope())])
    key_id, secret = token.split("_", 2)[1:]
    stored = mem.store.get_key(key_id)
    assert stored.digest == hashlib.sha256(secret.encode()).hexdigest()
    assert secret not in json.dumps(stored.model_dump(mode="json"))


def test_include_shared_reads_the_shared_subject_only_with_a_key_holding_it(api, mem, monkeypatch):
    alice, shared = fresh_scope(), fresh_scope("shared")
    monkeypatch.setattr(mem, "shared", shared)  # a shared subject of this test's own
    api(
        "POST",
        path(alice, "/episodes"),
        api.key(alice),
        {"episodes": [episode(f"{alice.subject_id}:1", "Paris", "2020-01-01")]},
    )
    mem.remember("The office code is 4711.", shared)
    key, both, admin = api.key(alice), api.key(alice, shared), api.key(admin=True)
    key_id = key["Authorization"].split("_")[1]
    for route, body in (
        ("/recall", {"query": "office code", "include_shared": True}),
        ("/assemble", {"query": "office code", "include_shared": True}),
    ):
        assert (
            error(api, "POST", path(alice, route), 403, "forbidden", headers=key, body=body)
            == f"key {key_id} does not hold subject {name(shared)}: include_shared reads it"
        )
        error(api, "GET", path(shared, "/episodes"), 403, "forbidden", headers=key)  # as reading it directly is
    for allowed in (both, admin):
        hits = api("POST", path(alice, "/recall"), allowed, {"query": "office code", "include_shared": True})["hits"]
        assert "The office code is 4711." in [h["content"] for h in hits]
        assembled = api("POST", path(alice, "/assemble"), allowed, {"query": "office code", "include_shared": True})
        assert "4711" in assembled["text"]
    assert api("POST", path(alice, "/recall"), key, {"query": "where do I live"})["hits"]  # without it: as before


def test_counts_past_their_bounds_are_422(api):
    alice = fresh_scope()
    key = api.key(alice)
    for cursor in ("99999999999999999999999", "9223372036854775807", str(MAX_OFFSET + 1), "\u00b2", "9" * 5000):
        for route in ("/episodes", "/decisions"):
            assert (
                error(api, "GET", path(alice, f"{route}?cursor={cursor}"), 422, "invalid_input", headers=key)
                == "cursor: not a cursor this API returned"
            )
    assert api("GET", path(alice, f"/episodes?cursor={MAX_OFFSET}"), key) == {"episodes": [], "next_cursor": None}
    assert error(
        api, "POST", path(alice, "/assemble"), 422, "invalid_input", headers=key, body={"query": "x", "budget": 10**30}
    ).startswith("budget: ")


def test_a_project_that_reads_as_no_project_is_422_on_every_subject_route(api):
    alice = fresh_scope()
    key = api.key(alice)
    for sent, project in (
        ("null", "null"),
        ("None", "None"),
        ("NULL", "NULL"),
        ("undefined", "undefined"),
        ("", ""),
        ("%20", " "),
        ("%09none", "\tnone"),
    ):
        for method, suffix, body in SUBJECT_ROUTES:
            url = path(alice, suffix) + ("&" if "?" in suffix else "?") + f"project={sent}"
            assert (
                error(api, method, url, 422, "invalid_input", headers=key, body=body)
                == f"project {project!r} reads as no project: leave the project out for none"
            ), (method, url)
    assert not [s for s in api.mem.subjects() if s["scope"].subject_id == alice.subject_id]  # nothing written
    assert api("GET", path(alice, "/blocks?project=nullable"), key) == {"blocks": []}  # a name that holds one is one


def test_episodes_past_the_per_request_cap_are_413_and_none_stored(api, mem):
    alice = fresh_scope()
    key = api.key(alice)
    # The default cap, far below what the body cap lets through: 1,001 items are 5 KB.
    assert (
        error(
            api,
            "POST",
            path(alice, "/episodes"),
            413,
            "payload_too_large",
            headers=key,
            body={"episodes": ["x"] * 1_001},
        )
        == "1001 episodes in one request, over the 1000 a request may carry: send them in several requests"
    )
    capped_config = HttpConfig.from_settings(Settings(http_max_episodes=2))  # GRAPHMEM_HTTP_MAX_EPISODES=2
    with TestClient(create_app(lambda: mem, capped_config), raise_server_exceptions=False) as client:
        capped = Api(client, mem)
        three = [episode(f"{alice.subject_id}:{n}", "Paris", "2020-01-01") for n in range(3)]
        assert error(
            capped, "POST", path(alice, "/episodes"), 413, "payload_too_large", headers=key, body={"episodes": three}
        ).startswith("3 episodes in one request, over the 2 ")
        assert mem.episodes(alice) == []  # refused whole
        assert capped("POST", path(alice, "/episodes"), key, {"episodes": three[:2]})["new_episodes"] == 2


def test_import_is_json_lines_a_page_elsewhere_cannot_post(api):
    """text/plain, a form or no type at all is what a page may send anywhere without asking
    first (a CORS-simple request): an import needs a type that asks (preflight)."""
    alice = fresh_scope()
    admin = api.key(admin=True)
    api(
        "POST", path(alice, "/episodes"), admin, {"episodes": [episode(f"{alice.subject_id}:1", "Paris", "2020-01-01")]}
    )
    exported = api("GET", path(alice, "/export"), admin).text
    for media in (
        "text/plain",
        "text/plain;charset=UTF-8",
        "application/x-www-form-urlencoded",
        "multipart/form-data; boundary=x",
        None,
    ):
        headers = {**admin, **({"Content-Type": media} if media else {})}
        assert (
            error(api, "POST", "/v1/import", 415, "unsupported_media_type", headers=headers, content=exported)
            == "send the export as Content-Type: application/x-ndjson or application/jsonl or application/json"
        )
    for media in ("application/x-ndjson", "application/jsonl; charset=utf-8", "application/json"):
        done = api("POST", "/v1/import", {**admin, "Content-Type": media}, content=exported)
        assert sum(done["imported"].values()) == 0 and done["skipped"]["episode"] == 1  # stored already


def test_an_import_line_nested_past_the_decoder_is_400(api):
    deep = '{"type": "header", "x": ' + "[" * 20_000 + "]" * 20_000 + "}\n"  # within the body limit
    headers = {**api.key(admin=True), **NDJSON}
    assert (
        error(api, "POST", "/v1/import", 400, "bad_request", headers=headers, content=deep)
        == "body:1: JSON nested deeper than 16 levels"
    )
    assert (
        error(api, "POST", "/v1/import", 400, "bad_request", headers=headers, content="\n{nope\n")
        == "body:2: not JSON: Expecting property name enclosed in double quotes (column 2)"
    )


@pytest.mark.parametrize("auth", [True, False])
def test_on_a_loopback_address_only_requests_for_this_machine_are_answered(mem, auth):
    """DNS rebinding: a page at rebind.evil.example, its name made to resolve to 127.0.0.1,
    sends its own name as Host; a server on a loopback address answers none of its requests."""
    alice = fresh_scope()
    config = HttpConfig(auth=auth, loopback=True)
    with TestClient(create_app(lambda: mem, config), base_url="http://127.0.0.1:8080") as client:
        api = Api(client, mem)
        key = api.key(admin=True) if auth else {}
        api(
            "POST",
            path(alice, "/episodes"),
            key,
            {"episodes": [episode(f"{alice.subject_id}:1", "Paris", "2020-01-01")]},
        )
        for host in (
            "rebind.evil.example:8080",
            "evil.example",
            "127.0.0.1.evil.example:8080",
            "0.0.0.0:8080",
            "user@127.0.0.1:8080",
            "",
        ):
            for method, url in (
                ("GET", path(alice, "/export")),
                ("GET", "/healthz"),
                ("GET", "/readyz"),
                ("GET", "/"),
                ("GET", "/docs"),
                ("GET", "/openapi.json"),
                ("GET", "/v1/me"),
            ):
                headers = {**key, "Host": host, "Origin": "http://evil.example"}
                message = error(api, method, url, 421, "misdirected_request", headers=headers)
                assert message.endswith("this server answers requests for localhost, 127.0.0.1 or [::1] only")
        for host in ("127.0.0.1:8080", "localhost:8080", "LOCALHOST", "[::1]:8080", "127.0.0.2"):
            assert api("GET", path(alice, "/export"), {**key, "Host": host}).text.count("\n") > 1
    # Not on a loopback address (a name of its own, behind a proxy): any Host is answered.
    with TestClient(create_app(lambda: mem, HttpConfig(auth=auth))) as client:
        assert client.get("/healthz", headers={"Host": "memory.example.org"}).status_code == 200
