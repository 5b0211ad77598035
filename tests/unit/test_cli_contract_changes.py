"""The CLI contract changes of issue 42 (docs/commands.md, "Changes to the contract"), through the
CLI over the in-memory adapters, and in a real process on a terminal where one matters:
`db status` exits 3 when stopped, `blocks show LABEL`, `episodes delete` asks, `episodes show`
lists what the episode produced, `import` is idempotent in every order, GRAPHMEM_SUBJECT."""

from __future__ import annotations

import json
import os
import pty
import subprocess
import sys
from pathlib import Path

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from graphmem.domain.models import Fact, Scope
from tests.cli import ENV, as_json, invoker, one_error_line, subject
from tests.conftest import fresh_scope
from tests.ports import free_port

ROOT = Path(__file__).resolve().parents[2]


def test_db_status_exits_3_when_stopped_and_still_says_so(tmp_path):
    run = invoker()
    args = ("db", "status", "--port", free_port(), "--home", tmp_path)
    stopped = run(*args)
    assert stopped.exit_code == 3 and "not running" in stopped.stdout
    assert as_json(run(*args, "--json"), code=3)["running"] is False


def test_blocks_take_the_label_as_an_argument_or_as_the_old_option(run, mem):
    s = subject(scope := fresh_scope())
    assert run("blocks", "set", "persona", "--value", "Be brief.", "--budget", "9", "-s", s).exit_code == 0
    assert as_json(run("blocks", "show", "persona", "-s", s, "--json"))["value"] == "Be brief."
    assert as_json(run("blocks", "show", "--label", "persona", "-s", s, "--json"))["value"] == "Be brief."
    assert as_json(run("blocks", "show", "persona", "--label", "persona", "-s", s, "--json"))["label"] == "persona"
    both = run("blocks", "show", "persona", "--label", "tone", "-s", s)
    assert both.exit_code == 2 and "two labels" in one_error_line(both)
    neither = run("blocks", "show", "-s", s)
    assert neither.exit_code == 2 and "missing the block label" in one_error_line(neither)
    assert run("blocks", "delete", "persona", "-s", s).exit_code == 0
    assert mem.list_blocks(scope) == []


def _one_episode(mem, scope: Scope) -> str:
    mem.remember(
        "Alice moved to Berlin.",
        scope,
        facts=[Fact(subject="Alice", predicate="lives_in", object="Berlin", single_valued=True)],
    )
    [episode] = mem.episodes(scope)
    return episode.id


def test_episodes_delete_without_a_terminal_needs_yes(run, mem):
    scope = fresh_scope()
    episode = _one_episode(mem, scope)
    refused = run("episodes", "delete", episode, "-s", subject(scope))
    assert refused.exit_code == 2 and "add --yes" in one_error_line(refused)
    assert [e.id for e in mem.episodes(scope)] == [episode]
    deleted = as_json(run("episodes", "delete", episode, "-s", subject(scope), "--yes", "--json"))
    assert deleted["units"] == 1 and mem.episodes(scope) == []


#: A process with one in-memory episode running `episodes delete` on it, then printing how many
#: episodes are left (stdin is the terminal the test holds).
_ON_A_TERMINAL = """
from graphmem import GraphMem
from graphmem.adapters.memory import InMemoryIndex, InMemoryStore
from graphmem.cli.common import CliState
from graphmem.cli.main import app
from graphmem.embed import HashingEmbedder
store = InMemoryStore()
mem = GraphMem(store, InMemoryIndex(store, HashingEmbedder()))
mem.remember("Alice moved to Berlin.", "user:alice")
[episode] = mem.episodes("user:alice")
try:
    app(["episodes", "delete", episode.id, "-s", "user:alice"], obj=CliState(factory=lambda s, **o: mem))
finally:
    print("left", len(mem.episodes("user:alice")), flush=True)
"""


def _delete_on_a_terminal(answer: str) -> tuple[int, str, str]:
    controller, terminal = pty.openpty()
    try:
        os.write(controller, answer.encode())  # typed ahead: the terminal holds the line until it is read
        done = subprocess.run(
            [sys.executable, "-c", _ON_A_TERMINAL],
            stdin=terminal,
            capture_output=True,
            text=True,
            cwd=ROOT,
            env={**os.environ, **ENV},
            timeout=120,
        )
    finally:
        os.close(controller)
        os.close(terminal)
    return done.returncode, done.stdout, done.stderr


def test_episodes_delete_asks_on_a_terminal():
    code, out, err = _delete_on_a_terminal("n\n")
    assert "delete episode" in err and "? [y/N]" in err  # the question is on stderr
    assert code == 1 and "not confirmed" in err and out.strip() == "left 1"
    code, out, err = _delete_on_a_terminal("yes\n")
    assert code == 0 and out.splitlines()[0].startswith("deleted episode") and out.splitlines()[-1] == "left 0"


def test_episodes_show_lists_what_the_episode_produced(run, mem):
    scope = fresh_scope()
    first = _one_episode(mem, scope)
    mem.remember(
        "Alice moved to Lisbon.",
        scope,
        facts=[Fact(subject="Alice", predicate="lives_in", object="Lisbon", single_valued=True)],
    )
    second = next(e.id for e in mem.episodes(scope) if e.id != first)
    shown = as_json(run("episodes", "show", second, "-s", subject(scope), "--json"))
    decided = mem.decisions(scope, episode_id=second)
    assert shown["units"] == [d.produced_id for d in decided if d.produced_id] and len(shown["units"]) == 1
    [decision] = shown["decisions"]
    assert decision["op"] == "UPDATE" and "Berlin" in decision["target_fact"]
    human = run("episodes", "show", second, "-s", subject(scope)).stdout
    assert f"UPDATE: {decision['produced_fact']} (unit {shown['units'][0]}); ends: {decision['target_fact']}" in human


def _export(run, s: str, path: Path) -> list[tuple[str, str]]:
    assert run("export", "-s", s, "--output", path).exit_code == 0
    return sorted((r["type"], r.get("id") or r.get("unit_id") or "") for r in map(json.loads, path.open()))[1:]


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@example(steps=["forget", "import --force", "import"])  # issue 42: the second import was refused
@given(steps=st.lists(st.sampled_from(["import", "import --force", "forget"]), min_size=1, max_size=6))
def test_import_is_idempotent_in_every_order(run, mem, tmp_path, steps):
    """Against a model: an import refuses only an erased subject it would bring back without
    --force; otherwise it leaves the subject holding the export exactly, however often it runs."""
    scope = fresh_scope()
    s, saved = subject(scope), tmp_path / f"{scope.subject_id}.jsonl"
    _one_episode(mem, scope)
    records = _export(run, s, saved)
    erased, holds = False, True
    for step in steps:
        if step == "forget":
            assert run("forget", "-s", s, "--yes").exit_code == 0
            erased, holds = True, False
            continue
        done = run("import", saved, *step.split()[1:])
        if erased and not holds and step == "import":
            assert done.exit_code == 1 and "was erased" in one_error_line(done)
        else:
            assert done.exit_code == 0, done.output
            holds = True
        assert (_export(run, s, tmp_path / "now.jsonl") == records) is holds


def test_graphmem_subject_is_the_default_subject_and_doctor_shows_it(mem):
    scope = fresh_scope()
    run = invoker_with_env({"GRAPHMEM_SUBJECT": subject(scope)}, mem)
    assert run("remember", "Bob likes tea.", "--json").exit_code == 0
    assert len(mem.episodes(scope)) == 1
    assert len(mem.episodes(other := fresh_scope())) == 0
    assert run("remember", "Carol likes coffee.", "-s", subject(other)).exit_code == 0  # --subject wins
    assert len(mem.episodes(other)) == 1 and len(mem.episodes(scope)) == 1
    checks = {c["check"]: c for c in json.loads(run("doctor", "--json").stdout)["checks"]}
    assert checks["default subject"]["detail"] == subject(scope)
    unset = invoker_with_env({}, mem)("remember", "Bob likes tea.")
    assert unset.exit_code == 2 and "GRAPHMEM_SUBJECT" in one_error_line(unset)
    bad = invoker_with_env({"GRAPHMEM_SUBJECT": "alice"}, mem)("remember", "Bob likes tea.")
    assert bad.exit_code == 2 and one_error_line(bad).startswith("error: GRAPHMEM_SUBJECT:")


def invoker_with_env(env: dict[str, str], mem):
    from typer.testing import CliRunner

    from graphmem.cli.common import CliState
    from graphmem.cli.main import app

    def invoke(*args: object):
        state = CliState(factory=lambda settings, **options: mem)
        full = {**ENV, "GRAPHMEM_SUBJECT": None, **env}
        return CliRunner().invoke(app, [str(a) for a in args], env=full, obj=state)

    return invoke


#: A recall over one in-memory episode that takes DELAY seconds, with --json; stderr is a terminal.
_SLOW_RECALL = """
import sys, time
from graphmem import GraphMem
from graphmem.adapters.memory import InMemoryIndex, InMemoryStore
from graphmem.cli.common import CliState
from graphmem.cli.main import app
from graphmem.embed import HashingEmbedder
store = InMemoryStore()
mem = GraphMem(store, InMemoryIndex(store, HashingEmbedder()))
mem.remember("Alice moved to Berlin.", "user:alice")
quick = mem.recall
mem.recall = lambda *a, **k: (time.sleep(float(sys.argv[1])), quick(*a, **k))[1]
app(["recall", "where does Alice live", "-s", "user:alice", "--json"], obj=CliState(factory=lambda s, **o: mem))
"""


def _recall_with_stderr_on_a_terminal(delay: float) -> tuple[str, str]:
    controller, terminal = pty.openpty()
    try:
        done = subprocess.run(
            [sys.executable, "-c", _SLOW_RECALL, str(delay)],
            stderr=terminal,
            stdout=subprocess.PIPE,
            text=True,
            cwd=ROOT,
            env={**os.environ, **ENV, "TERM": "xterm"},
            timeout=120,
        )
        os.close(terminal)
        shown = b""
        while True:
            try:
                chunk = os.read(controller, 65536)
            except OSError:  # the terminal's other end is closed and drained
                break
            if not chunk:
                break
            shown += chunk
    finally:
        os.close(controller)
    assert done.returncode == 0
    return done.stdout, shown.decode(errors="replace")


def test_a_step_over_a_second_shows_a_spinner_on_stderr_only():
    out, err = _recall_with_stderr_on_a_terminal(2.5)
    assert "recalling" in err
    assert json.loads(out)["hits"]  # stdout is the one JSON document, nothing else
    out, err = _recall_with_stderr_on_a_terminal(0)
    assert "recalling" not in err and json.loads(out)["hits"]
