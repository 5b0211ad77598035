"""The MCP listing tools (units_list, entities_list, entity_show) in process over the in-memory
adapters: pages with cursors, filters, and the server's subject rule."""

from __future__ import annotations

import pytest

pytest.importorskip("mcp")

from tests.unit import test_mcp
from tests.unit.test_mcp import BOB, call, refused

serve = test_mcp.serve  # the fixture: a server over the in-memory GraphMem


def remember(server) -> None:
    fact = {"subject": "Maria", "predicate": "lives_in", "single_valued": True}
    for city, when in (("Lisbon", "2019-01-01"), ("Porto", "2022-01-01")):
        call(
            server,
            "remember",
            text=f"Maria moved to {city}.",
            at=when,
            facts=[{**fact, "object": city, "valid_at": when, "content": f"Maria lives in {city}"}],
        )


def test_units_and_entities_page_through_the_subject(serve):
    server = serve()
    remember(server)
    assert [u["content"] for u in call(server, "units_list")["units"]] == ["Maria lives in Porto"]
    assert [u["content"] for u in call(server, "units_list", status="ended")["units"]] == ["Maria lives in Lisbon"]
    assert [u["content"] for u in call(server, "units_list", as_of="2020-06-01")["units"]] == ["Maria lives in Lisbon"]
    first = call(server, "units_list", status="all", limit=1)
    rest = call(server, "units_list", status="all", limit=1, cursor=first["next_cursor"])
    assert [u["content"] for u in first["units"] + rest["units"]] == ["Maria lives in Porto", "Maria lives in Lisbon"]
    assert rest["next_cursor"] is None
    listed = call(server, "entities_list")
    assert [(e["name"], e["facts"]) for e in listed["entities"]] == [("Lisbon", 0), ("Maria", 1), ("Porto", 1)]
    assert [e["name"] for e in call(server, "entities_list", prefix="po")["entities"]] == ["Porto"]
    shown = call(server, "entity_show", entity="maria")
    assert [u["content"] for u in shown["facts"]] == ["Maria lives in Porto"]
    assert [e["content"] for e in shown["history"]] == ["Maria lives in Lisbon", "Maria lives in Porto"]


def test_listing_tools_keep_to_the_servers_subject(serve):
    server = serve()
    remember(server)
    for tool, extra in (("units_list", {}), ("entities_list", {}), ("entity_show", {"entity": "Maria"})):
        assert BOB in refused(server, tool, subject=BOB, **extra)
    assert "cursor" in refused(server, "units_list", cursor="forged")
    assert "no entity 'Nobody'" in refused(server, "entity_show", entity="Nobody")
    other = serve(allow_any_subject=True)
    first = call(other, "units_list", status="all", limit=1)
    assert "another subject" in refused(
        other, "units_list", status="all", limit=1, subject=BOB, cursor=first["next_cursor"]
    )
