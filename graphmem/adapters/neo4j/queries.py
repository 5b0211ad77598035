"""Cypher lives in ``cypher/``, one query a file, loaded by name and checked.

Each file starts with a ``//`` header::

    // mode: read | write | schema | fragment
    // params: scope, ids          (the $parameters its own body uses)
    // values: dimensions:int      ({{placeholders}} for what Neo4j cannot parameterise)
    // include: recall/fused       (a fragment that ends this query; optional)
    // One line saying what the query does.

- ``{{include area/name}}`` in a body line, alone or inside an expression, stands for that
  fragment's body; a fragment's parameters count as the including query's.
- A parameter used but not declared, or declared but not used, fails with ``file:line``.
- Query text is never built with f-strings or ``+``: ``Query.render`` fills placeholders after
  validating each value against its type; a query with placeholders runs only rendered.
- Migrations are numbered files under ``cypher/migrations``; statements end with ``;`` at the
  end of a line.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from importlib import resources
from pathlib import Path

from graphmem.errors import ConfigurationError, InvalidInput

_PARAM = re.compile(r"\$([A-Za-z_][A-Za-z0-9_]*)")
_VALUE = re.compile(r"\{\{([a-z_]+)\}\}")
_INCLUDE = re.compile(r"\{\{include ([a-z0-9_]+/[a-z0-9_]+)\}\}")
_STRING = re.compile(r"'(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\"")
_MIGRATION = re.compile(r"^(\d{4})_[a-z0-9_]+\.cypher$")
_VALUE_TYPES = {
    "int": re.compile(r"^[1-9][0-9]{0,5}$"),
    "name": re.compile(r"^[A-Za-z][A-Za-z0-9_-]{0,62}$"),
}


def cypher_root() -> Path:
    """The ``cypher/`` folder: inside the wheel as ``graphmem/_cypher``, else the repo's."""
    packaged = resources.files("graphmem") / "_cypher"
    if packaged.is_dir():
        return Path(str(packaged))
    return Path(__file__).resolve().parents[3] / "cypher"


@dataclass(frozen=True)
class Query:
    name: str
    mode: str
    params: frozenset[str]
    values: dict[str, str]
    text: str
    path: Path

    def rendered(self, **values: object) -> Query:
        """This query with its ``{{placeholders}}`` filled (see ``render``), ready to run."""
        return Query(self.name, self.mode, self.params, {}, self.render(**values), self.path)

    def render(self, **values: object) -> str:
        """Fill ``{{placeholders}}`` after validating each value: names Neo4j cannot take as
        parameters (index names, index dimensions, analyzers)."""
        if set(values) != set(self.values):
            raise InvalidInput(f"{self.name}: needs values {sorted(self.values)}, got {sorted(values)}")
        text = self.text
        for key, kind in self.values.items():
            value = str(values[key])
            if not _VALUE_TYPES[kind].match(value):
                raise InvalidInput(f"{self.name}: {key}={value!r} is not a valid {kind}")
            text = text.replace("{{" + key + "}}", value)
        return text


def _error(path: Path, line: int, message: str) -> ConfigurationError:
    return ConfigurationError(f"{path}:{line}: {message}")


def parse(path: Path, name: str) -> Query:
    lines = path.read_text(encoding="utf-8").splitlines()
    header: dict[str, str] = {}
    body_start = 0
    for number, line in enumerate(lines, 1):
        if not line.startswith("//"):
            body_start = number - 1
            break
        key, sep, value = line[2:].strip().partition(":")
        if sep and key in ("mode", "params", "values", "include"):
            header[key] = value.strip()
    else:
        body_start = len(lines)
    body = "\n".join(lines[body_start:]).strip()
    if not body:
        raise _error(path, 1, "no query body")
    mode = header.get("mode")
    if mode not in ("read", "write", "schema", "fragment"):
        raise _error(path, 1, f"header 'mode' must be read|write|schema|fragment, got {mode!r}")
    declared = frozenset(p.strip() for p in header.get("params", "").split(",") if p.strip())
    included: set[str] = set()  # the included fragments' parameters: declared and used there

    def fragment(name: str, line: int) -> Query:
        part = load(name)
        if part.mode != "fragment":
            raise _error(path, line, f"include {name!r} is not a fragment")
        included.update(part.params)
        return part

    def splice(line: str, number: int) -> str:
        if line.lstrip().startswith("//"):
            return line
        return _INCLUDE.sub(lambda found: fragment(found.group(1), number).text, line)

    spliced = [splice(line, number) for number, line in enumerate(lines[body_start:], body_start + 1)]
    body = "\n".join(spliced).strip()
    if header.get("include"):
        body = body + "\n" + fragment(header["include"], 1).text
    declared = declared | included
    values: dict[str, str] = {}
    for item in filter(None, (v.strip() for v in header.get("values", "").split(","))):
        key, _, kind = item.partition(":")
        if kind not in _VALUE_TYPES:
            raise _error(path, 1, f"value {key!r} has unknown type {kind!r}")
        values[key] = kind
    used: dict[str, int] = {p: 1 for p in included}
    for offset, line in enumerate(lines[body_start:], body_start + 1):
        if line.lstrip().startswith("//"):
            continue
        for match in _PARAM.finditer(_STRING.sub("''", _INCLUDE.sub("", line))):
            used.setdefault(match.group(1), offset)
    for param, line_no in used.items():
        if param not in declared:
            raise _error(path, line_no, f"${param} is used but not declared in the header")
    unused = declared - used.keys()
    if unused:
        raise _error(path, 1, f"declared but unused: {', '.join(sorted(unused))}")
    placeholders = set(_VALUE.findall(body))
    if placeholders != set(values):
        raise _error(path, 1, f"placeholders {sorted(placeholders)} != declared values {sorted(values)}")
    return Query(name, mode, declared, values, body, path)


@cache
def load(name: str) -> Query:
    """Load ``cypher/<name>.cypher`` (e.g. ``load("store/put_episode")``), cached."""
    path = cypher_root() / f"{name}.cypher"
    if not path.is_file():
        raise ConfigurationError(f"no Cypher file {path}")
    return parse(path, name)


@dataclass(frozen=True)
class Migration:
    number: str
    name: str
    statements: tuple[str, ...]


def migrations() -> list[Migration]:
    """Numbered migrations in order; each statement is checked like a query file."""
    folder = cypher_root() / "migrations"
    found = []
    for path in sorted(folder.iterdir()):
        match = _MIGRATION.match(path.name)
        if not match:
            raise ConfigurationError(f"{path}: migration files are named NNNN_name.cypher")
        query = parse(path, path.stem)
        if query.params or query.values:
            raise _error(path, 1, "migrations take no parameters")
        statements = tuple(s.strip() for s in re.split(r";\s*$", query.text, flags=re.M) if s.strip())
        found.append(Migration(match.group(1), path.stem, statements))
    numbers = [m.number for m in found]
    if len(set(numbers)) != len(numbers):
        raise ConfigurationError(f"duplicate migration numbers in {folder}")
    return found
