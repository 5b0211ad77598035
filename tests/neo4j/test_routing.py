"""The scenarios over a `neo4j://` URI: the routing driver, as a cluster with read routing is
reached. Reads may go to another member than the write before them; the connection's sessions
share one bookmark manager, so each recall sees what was just written (a single server routes
everything to itself, which still runs the routing driver and the bookmark path)."""

from __future__ import annotations

import inspect
from urllib.parse import urlsplit

import pytest

from graphmem import GraphMem
from tests.contract import test_scenarios

pytestmark = pytest.mark.neo4j

SCENARIOS = [
    f
    for name, f in inspect.getmembers(test_scenarios, inspect.isfunction)
    if name.startswith("test_") and list(inspect.signature(f).parameters) == ["mem"]
]


@pytest.fixture(scope="module")
def routed(settings):
    parts = urlsplit(settings.neo4j_uri)
    uri = parts._replace(scheme="neo4j").geturl()
    with GraphMem.connect(settings.model_copy(update={"neo4j_uri": uri})) as mem:
        yield mem


def test_the_driver_routes(routed):
    assert routed.database.server()  # answered through the routing table


@pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda f: f.__name__)
def test_scenario_over_a_routing_uri(routed, scenario):
    scenario(routed)
