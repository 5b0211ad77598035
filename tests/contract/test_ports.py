"""The ports and their adapters cannot drift: every method ``MemoryStore`` and ``MemoryIndex``
declare exists on each adapter with the same parameters (names, kinds, defaults) and the same
types, and the store adapters offer nothing public the port does not declare. Inspects
classes; needs no server."""

from __future__ import annotations

import inspect
import typing

import pytest

from graphmem import ports
from graphmem.adapters.memory import InMemoryIndex, InMemoryStore
from graphmem.adapters.neo4j.index import Neo4jIndex
from graphmem.adapters.neo4j.store import Neo4jStore
from graphmem.ports import MemoryIndex, MemoryStore

ADAPTERS = [
    (MemoryStore, InMemoryStore),
    (MemoryStore, Neo4jStore),
    (MemoryIndex, InMemoryIndex),
    (MemoryIndex, Neo4jIndex),
]

#: What the adapters have beyond the port, and why.
EXTRAS = {
    InMemoryStore: set(),
    Neo4jStore: set(),
}


def port_methods(port: type = MemoryStore) -> dict[str, typing.Callable]:
    return {name: member for name, member in inspect.getmembers(port, inspect.isfunction) if not name.startswith("_")}


def shape(function: typing.Callable) -> list[tuple]:
    """Each parameter's name, kind, default and resolved type, and the return type."""
    hints = typing.get_type_hints(function)
    params = [(p.name, p.kind, p.default, hints.get(p.name)) for p in inspect.signature(function).parameters.values()]
    return params + [("return", hints.get("return"))]


def test_the_store_is_every_port_of_the_store() -> None:
    parts = {
        ports.EpisodeStore,
        ports.UnitStore,
        ports.TimelineStore,
        ports.AuditStore,
        ports.ReviewStore,
        ports.ErasureStore,
        ports.BlockStore,
        ports.ExchangeStore,
        ports.KeyStore,
        ports.JobStore,
    }
    assert parts <= set(MemoryStore.__mro__)
    declared = {
        name for part in parts for name, _ in inspect.getmembers(part, inspect.isfunction) if not name.startswith("_")
    }
    assert declared == set(port_methods())  # the composite adds no method of its own


@pytest.mark.parametrize("port, adapter", ADAPTERS, ids=lambda a: a.__name__)
def test_adapter_implements_every_method_with_its_signature(port: type, adapter: type) -> None:
    for name, declared in port_methods(port).items():
        implemented = getattr(adapter, name, None)
        assert callable(implemented), f"{adapter.__name__} lacks {name}"
        assert shape(implemented) == shape(declared), f"{adapter.__name__}.{name} differs from {port.__name__}.{name}"


@pytest.mark.parametrize("adapter", [InMemoryStore, Neo4jStore], ids=lambda a: a.__name__)
def test_adapter_has_nothing_public_beyond_the_port(adapter: type) -> None:
    # Inherited too: an adapter may be composed of one part per port.
    public = {name for part in adapter.__mro__[:-1] for name in vars(part) if not name.startswith("_")}
    assert public - set(port_methods()) - EXTRAS[adapter] == set()
