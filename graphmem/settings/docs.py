"""docs/configuration.md and .env.example from ``Settings``: ``python -m graphmem.settings.docs``.

``python -m graphmem.settings.docs > docs/configuration.md`` writes the page,
``python -m graphmem.settings.docs env > .env.example`` the example file. Both list every field of
``graphmem.settings.config.Settings`` with its environment name, default and description; a test fails
when either file is stale.
"""

from __future__ import annotations

import inspect
import json
import os
import sys
from pathlib import Path
from unittest import mock

from pydantic import SecretStr
from pydantic.fields import FieldInfo

from graphmem.settings.config import Settings, setting_name

PAGE_HEADER = """# Configuration

Generated from `graphmem.settings.config.Settings` by `python -m graphmem.settings.docs > docs/configuration.md`;
do not edit by hand. [`.env.example`](#the-env-file) lists the same settings, all commented out.

Each setting has exactly one environment name. Options of a command win over the environment,
which wins over a `.env` file in the working directory. An empty variable counts as unset.

| setting | environment | default | what it sets |
|---|---|---|---|
"""

PAGE_FOOTER = """
## The `.env` file

A `.env` file in the working directory is read too: the environment wins over it, and
`--uri`, `--user`, `--password` and `--database` win over both. Copy `.env.example` to `.env`
and uncomment the lines you want to change; as shipped, every line is a comment, so copying it
changes nothing.

A `.env` names the database every write goes to and the token a server accepts, so it is held
to the same rule as graphmem's home (see [Security](security.md#a-home-nobody-else-can-change)).
graphmem refuses a `.env` that belongs to another user, that others can write, or that sits in
a folder others can write (a root-owned sticky folder such as `/tmp` is fine). It also refuses
one that sets a password, token, API key or secret and that others can read, as it refuses
such a token file. The refusal is one line naming the file and the fix, and the command does
nothing.

## Passwords

`--password` works but warns: other local users can read it in the process list. Give the
password with `NEO4J_PASSWORD` (or in `.env`), or let graphmem read the local server's
password file. That file belongs to the `neo4j` user; another `NEO4J_USER` needs its own
password.

## Notes on some settings

- `NEO4J_URI` defaults to the local server's port, `GRAPHMEM_NEO4J_PORT`, so setting the port
  alone moves every command. See [Operations](operations.md#when-neo4j-goes-away) for what
  `GRAPHMEM_NEO4J_RETRY_SECONDS` waits for (at most 120).
- The `OPENAI_*` endpoint serves both the model and the `openai` embedder, unless
  `GRAPHMEM_LLM_*` or `GRAPHMEM_EMBEDDING_*` name their own. See
  [Models and embedders](models.md) for local model servers.
- `GRAPHMEM_LIST_WEIGHTS` and `GRAPHMEM_RRF_K` tune recall's fusion; see
  [Recall](recall.md#fusion).
- The `GRAPHMEM_HTTP_*` settings bound `graphmem serve`; see [HTTP API](http.md#load).
"""

ENV_HEADER = """\
# graphmem's settings with their defaults, generated from graphmem.settings.config.Settings by
# `python -m graphmem.settings.docs env > .env.example`. Every line is a comment: copy this file to
# .env and uncomment what you change. The environment wins over .env; empty means unset.
"""


def default_of(name: str, info: FieldInfo, *, placeholders: bool) -> str:
    """The default of field ``name`` as text, the same on every machine: the home folder as
    ``~``, and with ``placeholders`` a default computed from another setting names that setting."""
    if info.default_factory is None:
        value = info.default
    elif inspect.signature(info.default_factory).parameters:  # computed from the other fields
        data = {
            other: (f"<{setting_name(other)}>" if placeholders else f.default)
            for other, f in Settings.model_fields.items()
            if f.default_factory is None
        }
        value = info.get_default(call_default_factory=True, validated_data=data)
    else:
        with mock.patch.dict(os.environ, clear=False) as env:
            env.pop("GRAPHMEM_HOME", None)
            value = info.get_default(call_default_factory=True)
    if isinstance(value, SecretStr):
        value = value.get_secret_value()
    if isinstance(value, Path):
        value = str(value).replace(str(Path.home()), "~", 1)
    if isinstance(value, dict):
        return json.dumps(value)
    return "" if value is None else str(value)


def render() -> str:
    """The configuration page as Markdown: one table row per setting."""
    rows = []
    for name, info in Settings.model_fields.items():
        shown = default_of(name, info, placeholders=True)
        rows.append(
            f"| `{name}` | `{setting_name(name)}` | {f'`{shown}`' if shown else 'unset'} | {info.description} |\n"
        )
    return PAGE_HEADER + "".join(rows) + PAGE_FOOTER


def render_env_example() -> str:
    """.env.example: each setting as a commented description and a commented ``NAME=default``."""
    lines = [ENV_HEADER]
    for name, info in Settings.model_fields.items():
        lines.append(f"\n# {info.description}\n# {setting_name(name)}={default_of(name, info, placeholders=False)}\n")
    return "".join(lines)


if __name__ == "__main__":  # pragma: no cover
    print(render_env_example() if sys.argv[1:] == ["env"] else render(), end="")
