"""The listing routes of the HTTP API (docs/http.md, "Listing"): units and entities page by page
with the facade's cursors, one entity with its timeline, and the refusals (another key's subject,
a forged or foreign cursor, bad filters)."""

from __future__ import annotations

import pytest

pytest.importorskip("fastapi")

from tests.conftest import fresh_scope
from tests.contract import test_http
from tests.contract.test_http import episode, error, path

api = test_http.api  # the fixture: an in-process client over each adapter family


def write(api, scope, key) -> None:
    for n, (city, when) in enumerate([("Paris", "2020-01-01"), ("Berlin", "2022-01-01")]):
        api("POST", path(scope, "/episodes"), key, {"episodes": [episode(f"{scope.subject_id}:{n}", city, when)]})


def test_units_and_entities_page_to_the_end(api):
    alice = fresh_scope()
    key = api.key(alice)
    write(api, alice, key)
    current = api("GET", path(alice, "/units"), key)
    assert [u["content"] for u in current["units"]] == ["Alice lives in Berlin"] and current["next_cursor"] is None
    ended = api("GET", path(alice, "/units?status=ended"), key)
    assert [u["content"] for u in ended["units"]] == ["Alice lives in Paris"]
    past = api("GET", path(alice, "/units?as_of=2021-01-01&entity=alice"), key)
    assert [u["content"] for u in past["units"]] == ["Alice lives in Paris"]
    seen, cursor = [], None
    while True:
        page = api(
            "GET",
            path(alice, "/units"),
            key,
            params={"status": "all", "limit": 1, **({"cursor": cursor} if cursor else {})},
        )
        seen += [u["content"] for u in page["units"]]
        cursor = page["next_cursor"]
        if cursor is None:
            break
    assert seen == ["Alice lives in Berlin", "Alice lives in Paris"]

    entities = api("GET", path(alice, "/entities"), key)
    assert [(e["name"], e["facts"]) for e in entities["entities"]] == [("Alice", 1), ("Berlin", 1), ("Paris", 0)]
    assert [e["name"] for e in api("GET", path(alice, "/entities?prefix=pa"), key)["entities"]] == ["Paris"]
    shown = api("GET", path(alice, "/entities/alice"), key)
    assert shown["entity"]["name"] == "Alice"
    assert [u["content"] for u in shown["facts"]] == ["Alice lives in Berlin"]
    assert [e["content"] for e in shown["history"]] == ["Alice lives in Paris", "Alice lives in Berlin"]


def test_listing_refusals(api):
    alice, bob = fresh_scope(), fresh_scope()
    key = api.key(alice)
    write(api, alice, key)
    error(api, "GET", path(bob, "/units"), 403, "forbidden", headers=key)
    error(api, "GET", path(bob, "/entities/Alice"), 403, "forbidden", headers=key)
    first = api("GET", path(alice, "/units?status=all&limit=1"), key)
    bob_key = api.key(bob)
    # Bob cannot read Alice's rows with her cursor: it was made for another subject.
    message = error(
        api,
        "GET",
        path(bob, "/units"),
        422,
        "invalid_input",
        headers=bob_key,
        params={"status": "all", "limit": 1, "cursor": first["next_cursor"]},
    )
    assert "cursor" in message
    error(api, "GET", path(alice, "/units?status=gone"), 422, "invalid_input", headers=key)
    error(api, "GET", path(alice, "/units?cursor=AAAA"), 422, "invalid_input", headers=key)
    error(api, "GET", path(alice, "/units?cursor=a%20b"), 422, "invalid_input", headers=key)
    error(api, "GET", path(alice, "/units?as_of=yesterday-ish"), 422, "invalid_input", headers=key)
    error(api, "GET", path(alice, "/units?limit=0"), 422, "invalid_input", headers=key)
    error(api, "GET", path(alice, "/entities/Nobody"), 404, "not_found", headers=key)
    error(api, "GET", path(alice, "/entities"), 401, "unauthorized")
