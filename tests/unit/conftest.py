"""Fixtures of the faces' tests: one in-memory GraphMem, and the CLI invoked over it."""

from __future__ import annotations

import pytest

from graphmem import GraphMem
from graphmem.cli.common import CliState
from tests.cli import invoker


@pytest.fixture
def mem(memory_mem: GraphMem) -> GraphMem:
    return memory_mem


@pytest.fixture
def run(mem: GraphMem):
    """Invoke the CLI; every command opens the same in-memory GraphMem."""
    return invoker(CliState(factory=lambda settings, **options: mem))
