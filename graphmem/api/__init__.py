"""``GraphMem``: the one entry point an agent developer needs.

    from graphmem import GraphMem

    with GraphMem.connect() as mem:                       # local Neo4j, offline embedder
        mem.remember("I moved to Berlin last month.", subject="user:alice")
        for hit in mem.recall("where does alice live?", subject="user:alice"):
            print(hit.unit.content, hit.score)
        context = mem.assemble("plan my weekend", subject="user:alice").text

It is synchronous: every call is a handful of Neo4j round trips and the CLI, benchmarks and
MCP tools are synchronous too; an async facade would add a second code path to keep correct.

The faces (CLI, HTTP, MCP) go through it only, importing from here the facade and the result
types its methods return, and render results with ``graphmem.faces.views``. Its modules:
``arguments`` (what the methods take), ``writing``, ``reading``, ``listing``, ``operating`` (the
groups of methods over ``parts``), ``facade`` (the class) and ``wiring`` (its parts on Neo4j).
"""

from graphmem.api.arguments import MAX_BATCH, MAX_BUDGET, MAX_OFFSET, SubjectLike, as_scope
from graphmem.api.facade import GraphMem
from graphmem.domain.models import EntityPage, EntitySummary, UnitPage, UnitStatus
from graphmem.pipelines import shapes
from graphmem.pipelines.assemble import Assembly
from graphmem.pipelines.export_check import Plan
from graphmem.pipelines.recall import Recalled
from graphmem.pipelines.write import WriteReport

__all__ = [
    "MAX_BATCH",
    "MAX_BUDGET",
    "MAX_OFFSET",
    "Assembly",
    "EntityPage",
    "EntitySummary",
    "GraphMem",
    "Plan",
    "Recalled",
    "SubjectLike",
    "UnitPage",
    "UnitStatus",
    "WriteReport",
    "as_scope",
    "shapes",  # the faces show a stored record as an export writes it
]
