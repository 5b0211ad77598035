"""The code's layout holds its architecture: modules of one concern, short docstrings, layers that
import only downwards, no import cycles, and the in-memory adapters free of Neo4j.

Each rule reads the source (ast), so a module that breaks one fails here with its name, not in
a review. CONTRIBUTING.md describes the layers.

``OUTSTANDING`` lists what the layout work of issue 41 has still to fix: each test asserts that
it finds exactly those, so a new offender fails and a fixed one must leave the list.
"""

from __future__ import annotations

import ast
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "graphmem"

MAX_LINES = 550
MAX_FUNCTION_DOC_WORDS = 80
MAX_MODULE_DOC_WORDS = 150

OUTSTANDING: dict[str, set[str]] = {
    "cycles": set(),
    "layers": set(),
    "long modules": set(),
    "docstrings": set(),
    "neo4j loaded": set(),
}

#: Layers from the bottom up: a module may import its own layer and the layers below it, never
#: one above. The faces (CLI, HTTP, MCP, their shared views and the integrations) reach the service through the
#: facade only; ``graphmem.server`` (the local Neo4j launcher) is an operator's tool beside it.
LAYERS: list[tuple[str, set[str]]] = [
    ("errors", {"graphmem.errors"}),
    ("domain", {"graphmem.domain"}),
    ("settings", {"graphmem.settings"}),
    ("ports", {"graphmem.ports"}),
    ("services", {"graphmem.llm", "graphmem.embed", "graphmem.rerank", "graphmem.extract", "graphmem.policy"}),
    ("adapters", {"graphmem.adapters"}),
    ("pipelines", {"graphmem.pipelines"}),
    ("server", {"graphmem.server"}),
    ("facade", {"graphmem.api"}),
    ("faces", {"graphmem.faces", "graphmem.cli", "graphmem.http", "graphmem.mcp", "graphmem.integrations"}),
    ("client", {"graphmem.client"}),
]
#: What a layer may use besides the layers below it (an adapter never uses a pipeline, say).
SKIPPED: dict[str, set[str]] = {
    "adapters": set(),
    "pipelines": {"adapters"},  # pipelines depend on the ports, never on an adapter
    "server": {"ports", "services", "adapters", "pipelines"},
    "faces": {"ports", "services", "adapters", "pipelines"},  # through the facade only
    # The HTTP client: the domain, the errors and the API's wire models, never the service itself.
    "client": {"settings", "ports", "services", "adapters", "pipelines", "server", "facade"},
}


def _modules() -> dict[str, Path]:
    found = {}
    for path in PACKAGE.rglob("*.py"):
        parts = path.relative_to(ROOT).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        found[name] = path
    return found


MODULES = _modules()


def _imports(name: str, path: Path) -> set[str]:
    """The graphmem modules ``name`` imports anywhere in its body (functions included), but
    those imported only for type checking."""
    tree = ast.parse(path.read_text())
    typing_only = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            typing_only.update(id(child) for child in ast.walk(node))
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(tree):
        if id(node) in typing_only:
            continue
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                module = ".".join([*base, node.module] if node.module else base)
            else:
                module = node.module or ""
            targets = [f"{module}.{alias.name}" for alias in node.names]
            targets = [t if t in MODULES else module for t in targets]
        else:
            continue
        found.update(t for t in targets if t in MODULES and t != name)
    return found


GRAPH = {name: _imports(name, path) for name, path in MODULES.items()}


def _layer(module: str) -> str | None:
    for layer, roots in LAYERS:
        if any(module == root or module.startswith(root + ".") for root in roots):
            return layer
    return None


def _cycles() -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(GRAPH[node]):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(GRAPH):
        if node not in index:
            visit(node)
    return found


def test_every_module_has_a_layer():
    assert [name for name in MODULES if name != "graphmem" and _layer(name) is None] == []


def test_no_import_cycles():
    assert {" ".join(cycle) for cycle in _cycles()} == OUTSTANDING["cycles"]


def test_layers_import_only_downwards():
    order = [layer for layer, _ in LAYERS]
    wrong = []
    for name, targets in GRAPH.items():
        mine = _layer(name)
        if mine is None:
            continue
        for target in targets:
            theirs = _layer(target)
            if theirs is None or theirs == mine:
                continue
            if order.index(theirs) > order.index(mine) or theirs in SKIPPED.get(mine, set()):
                wrong.append(f"{name} ({mine}) imports {target} ({theirs})")
    assert set(wrong) == OUTSTANDING["layers"]


def test_modules_are_short():
    long = {
        str(path.relative_to(ROOT)) for path in PACKAGE.rglob("*.py") if len(path.read_text().splitlines()) > MAX_LINES
    }
    assert long == OUTSTANDING["long modules"]


def _words(doc: str | None) -> int:
    return len((doc or "").split())


def test_docstrings_are_short():
    long = []
    for name, path in MODULES.items():
        tree = ast.parse(path.read_text())
        if _words(ast.get_docstring(tree)) > MAX_MODULE_DOC_WORDS:
            long.append(name)
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                words = _words(ast.get_docstring(node))
                if words > MAX_FUNCTION_DOC_WORDS:
                    long.append(f"{name}.{node.name}")
    assert set(long) == OUTSTANDING["docstrings"]


@pytest.mark.parametrize(
    "code",
    [
        "from graphmem import GraphMem",
        textwrap.dedent(
            """
            from graphmem import GraphMem
            from graphmem.adapters.memory import InMemoryIndex, InMemoryStore
            from graphmem.embed import HashingEmbedder
            store = InMemoryStore()
            mem = GraphMem(store, InMemoryIndex(store, HashingEmbedder()))
            mem.remember("I live in Paris.", subject="user:alice")
            assert list(mem.recall("where do I live?", subject="user:alice"))
            """
        ),
    ],
    ids=["import", "in-memory"],
)
def test_in_memory_loads_no_neo4j(code, request):
    check = (
        "import sys; bad = sorted(m for m in sys.modules if m.split('.')[0] == 'neo4j'"
        " or m.startswith(('graphmem.server', 'graphmem.adapters.neo4j'))); assert not bad, bad"
    )
    done = subprocess.run([sys.executable, "-c", code + "\n" + check], capture_output=True, text=True, cwd=ROOT)
    outstanding = request.node.callspec.id in OUTSTANDING["neo4j loaded"]
    assert (done.returncode == 0) != outstanding, done.stderr[-2000:]
