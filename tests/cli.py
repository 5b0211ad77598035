"""Helpers for CLI tests: invoking the app, reading its JSON and its one error line."""

from __future__ import annotations

import json
from collections.abc import Callable

from typer.testing import CliRunner, Result

from graphmem.cli.common import CliState
from graphmem.cli.main import app
from graphmem.domain.models import Scope

ENV = {"GRAPHMEM_EMBEDDER": "hashing"}


def invoker(state: CliState | None = None) -> Callable[..., Result]:
    """``invoke(*args, input=None)``: the CLI with ``state`` as its context object (None:
    the default factory, a real Neo4j from the environment)."""
    runner = CliRunner()

    def invoke(*args: object, input: str | None = None) -> Result:
        return runner.invoke(app, [str(a) for a in args], env=ENV, input=input, obj=state)

    return invoke


def subject(scope: Scope) -> str:
    return f"{scope.subject_type.value}:{scope.subject_id}"


def as_json(result: Result, code: int = 0) -> dict:
    """The one JSON document on stdout of a run that exited with ``code``."""
    assert result.exit_code == code, result.output
    return json.loads(result.stdout)


def one_error_line(result: Result) -> str:
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("error: ")
    return lines[0]


def fact_line(scope: Scope, eid: str, when: str, city: str) -> str:
    return json.dumps(
        {
            "id": eid,
            "subject": subject(scope),
            "occurred_at": when,
            "raw": f"I live in {city}.",
            "facts": [
                {
                    "subject": "Alice",
                    "predicate": "lives_in",
                    "object": city,
                    "content": f"Alice lives in {city}",
                    "valid_at": when,
                    "single_valued": True,
                }
            ],
        }
    )
