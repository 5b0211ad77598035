"""A short command loads only what it runs: `graphmem recall` over a real process imports neither
the local server, nor the MCP or HTTP faces, nor the import pipeline, and builds no facade
validator but those of the methods it calls (benchmarks/cli_latency.py times the result)."""

from __future__ import annotations

import json
import subprocess
import sys

#: Runs `graphmem recall --help` (which builds the command as a run does) and prints what is loaded.
_LOADED = """
import json, sys
from graphmem.cli.main import app
def run(*args):
    try:
        app(list(args))
    except SystemExit:
        pass
    return sorted(m for m in sys.modules if m.startswith(("graphmem", "mcp", "fastapi", "uvicorn")))
print(json.dumps(run("recall", "--help")))
"""

NOT_FOR_RECALL = ("graphmem.server", "graphmem.cli.mcp", "graphmem.mcp", "graphmem.http", "graphmem.cli.exchange")


def test_recall_loads_none_of_the_other_commands_modules():
    done = subprocess.run([sys.executable, "-c", _LOADED], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    loaded = json.loads(done.stdout.strip().splitlines()[-1])
    assert "graphmem.cli.read" in loaded  # the command's own module, imported to run it
    assert [m for m in loaded if m.startswith(NOT_FOR_RECALL) or m.split(".")[0] in ("mcp", "fastapi")] == []


def test_every_command_is_listed_and_built_on_demand():
    from typer.main import get_command

    from graphmem.cli.main import COMMANDS, app

    root = get_command(app)
    ctx = root.context_class(root, info_name="graphmem")
    assert root.list_commands(ctx) == list(COMMANDS)
    for name in COMMANDS:
        assert root.get_command(ctx, name).name == name
