"""What a newcomer meets first: help that keeps its bracketed text, one-line usage errors,
`--version`, messages that say what is missing, human output a person reads, and partial
dates. Over the in-memory adapters (the factory in the context object)."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime

import pytest
from hypothesis import given
from hypothesis import strategies as st
from typer.main import get_command

from graphmem import __version__
from graphmem.adapters.memory import InMemoryIndex, InMemoryStore
from graphmem.api import GraphMem
from graphmem.cli.common import CliState
from graphmem.cli.main import app
from graphmem.domain.times import parse_time
from graphmem.embed import HashingEmbedder
from graphmem.errors import BackendError, ConfigurationError, InvalidInput
from graphmem.extract.llm import LLMExtractor
from graphmem.extract.rule import RuleExtractor
from graphmem.llm.client import make_client
from graphmem.settings.config import Settings
from tests.cli import as_json, fact_line, invoker, one_error_line, subject
from tests.conftest import fresh_scope


def commands(group=None, path=()):
    """Every command path of the CLI, sub-commands included."""
    group = group or get_command(app)
    for name, command in sorted(group.commands.items()):
        if hasattr(command, "commands"):
            yield from commands(command, (*path, name))
        else:
            yield (*path, name)


def flat(text: str) -> str:
    """Without whitespace: help wraps lines anywhere, even after a hyphen."""
    return "".join(text.split())


@pytest.mark.parametrize("path", list(commands()), ids=" ".join)
def test_help_shows_every_bracketed_text_of_its_options(run, path):
    """Rich markup took "[default: now]" for a style tag and dropped it."""
    result = run(*path, "--help")
    assert result.exit_code == 0, result.output
    command = get_command(app)
    for name in path:
        command = command.commands[name]
    for param in command.params:
        for bracketed in re.findall(r"\[[^\]]*\]", getattr(param, "help", None) or ""):
            assert flat(bracketed) in flat(result.stdout), (param.name, bracketed)


@pytest.mark.parametrize(
    "args",
    [
        ["recall"],  # missing argument
        ["recall", "x", "--subject", "user:a", "--k", "many"],  # bad value
        ["bogus"],  # unknown command
        ["recall", "x", "-s", "user:a", "--frobnicate"],  # unknown option
        ["blocks", "set", "-l", "p", "--value", "v", "-s", "user:a", "--budget", "0"],
        ["review", "list", "--status", "bogus"],
    ],
)
def test_usage_errors_are_one_line_exit_2(run, args):
    result = run(*args)
    assert result.exit_code == 2 and result.stdout == ""
    one_error_line(result)


def test_a_zero_block_budget_says_what_is_wrong(mem):
    with pytest.raises(InvalidInput, match="token_budget: Input should be greater than 0"):
        mem.set_block("user:a", "persona", "Be brief.", token_budget=0)
    result = invoker(CliState(factory=lambda s, **o: mem))(
        "blocks", "set", "-l", "p", "--value", "v", "-s", "user:a", "--budget", "0"
    )
    assert "--budget': Input should be greater than or equal to 1" in one_error_line(result)


def test_version_comes_from_the_package(run):
    result = run("--version")
    assert result.exit_code == 0 and result.stdout.strip() == f"graphmem {__version__}"


def test_unknown_ids_and_entities_are_not_silent(run, moved):
    s = subject(moved)
    restored = run("restore", "deadbeef", "--subject", s)
    assert restored.exit_code == 2 and "nothing restored" in one_error_line(restored)
    nobody = run("history", "--entity", "Nobody", "--subject", s)
    assert nobody.exit_code == 2 and "nothing found" in one_error_line(nobody)
    blank = run("remember", " ", "--subject", s)  # named as the command names it, not as stored
    assert blank.exit_code == 2 and one_error_line(blank) == "error: text: text is empty"
    stranger = run("recall", "Alice", "--subject", subject(fresh_scope()))
    assert stranger.exit_code == 0 and "holds no episodes" in stranger.stdout


# -- the llm extractor --------------------------------------------------------------------
def test_llm_extractor_without_an_endpoint_names_the_settings(run):
    result = run("remember", "I live in Oslo.", "--subject", "user:a", "--extractor", "llm")
    assert result.exit_code == 2
    line = one_error_line(result)
    assert "GRAPHMEM_LLM_BASE_URL" in line and "OPENAI_API_KEY" in line and "unknown extractor" not in line


def test_llm_extractor_with_its_endpoint_down_fails_and_stores_nothing(embedder):
    store = InMemoryStore()
    down = make_client(Settings(llm_base_url="http://127.0.0.1:9/v1"), "test", timeout=2, max_retries=0)
    mem = GraphMem(
        store, InMemoryIndex(store, embedder), extractors={"llm": LLMExtractor(down, "m"), "rule": RuleExtractor()}
    )
    result = invoker(CliState(factory=lambda s, **o: mem))(
        "remember", "I live in Oslo.", "--subject", "user:a", "--extractor", "llm"
    )
    assert result.exit_code == 1 and "127.0.0.1:9" in one_error_line(result)
    assert result.stdout == "" and mem.episodes("user:a") == []


def test_each_role_has_its_own_endpoint_falling_back_to_openai(monkeypatch):
    for name in (
        "OPENAI_BASE_URL",
        "OPENAI_API_KEY",
        "GRAPHMEM_LLM_BASE_URL",
        "GRAPHMEM_LLM_API_KEY",
        "GRAPHMEM_EMBEDDING_BASE_URL",
        "GRAPHMEM_EMBEDDING_API_KEY",
    ):
        monkeypatch.delenv(name, raising=False)
    shared = Settings(openai_base_url="http://shared/v1", openai_api_key="k")
    assert shared.endpoint("llm") == shared.endpoint("embedding") == ("http://shared/v1", "k")
    split = Settings(
        openai_base_url="http://shared/v1",
        openai_api_key="k",
        llm_base_url="http://vllm/v1",
        embedding_base_url="http://ollama/v1",
        embedding_api_key="e",
    )
    assert split.endpoint("llm") == ("http://vllm/v1", "k")
    assert split.endpoint("embedding") == ("http://ollama/v1", "e")
    assert str(make_client(split, "t", "embedding").base_url) == "http://ollama/v1/"


# -- doctor and the connection ------------------------------------------------------------
def test_doctor_checks_the_llm_the_policy_needs(monkeypatch):
    for name in ("OPENAI_BASE_URL", "OPENAI_API_KEY", "GRAPHMEM_LLM_BASE_URL", "GRAPHMEM_LLM_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    store = InMemoryStore()
    mem = GraphMem(store, InMemoryIndex(store, HashingEmbedder()), settings=Settings(policy="llm"))
    doc = mem.doctor()
    [llm] = [c for c in doc["checks"] if c["check"] == "llm"]
    assert not doc["ok"] and not llm["ok"] and "GRAPHMEM_LLM_BASE_URL" in llm["detail"]


def test_doctor_reports_a_missing_llm_endpoint_as_a_failed_check(monkeypatch, tmp_path):
    for name in ("OPENAI_BASE_URL", "OPENAI_API_KEY", "GRAPHMEM_LLM_BASE_URL", "GRAPHMEM_LLM_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("GRAPHMEM_POLICY", "llm")
    monkeypatch.chdir(tmp_path)  # no stray .env
    result = invoker()("--uri", "bolt://127.0.0.1:9", "doctor", "--json")
    doc = as_json(result, code=1)
    checks = {c["check"]: c for c in doc["checks"]}
    assert not checks["llm"]["ok"] and "GRAPHMEM_LLM_BASE_URL" in checks["llm"]["detail"]
    assert {"connectivity", "embedder", "tokenizer"} <= set(checks)


def test_a_uri_that_is_not_bolt_is_refused_in_one_line(monkeypatch):
    result = invoker()("--uri", "http://127.0.0.1:7474", "doctor")
    assert result.exit_code == 2 and "use bolt://" in one_error_line(result)
    assert "aiohttp" not in result.output


def test_an_unreachable_server_is_named_fast_and_db_start_only_suggested_locally():
    from graphmem.adapters.neo4j.driver import Neo4jConnection

    for uri, local in [("bolt://127.0.0.1:9", True), ("neo4j+s://no-such-host.invalid", False)]:
        conn = Neo4jConnection(Settings(neo4j_uri=uri, neo4j_password="x"))
        began = datetime.now()
        with pytest.raises(BackendError) as caught:
            conn.server_version()
        conn.close()
        assert (datetime.now() - began).total_seconds() < 10
        message = str(caught.value)
        assert message.startswith(f"Neo4j at {uri} is unreachable") and ("graphmem db start" in message) == local


def test_the_local_port_setting_steers_the_default_uri(monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("NEO4J_URI", raising=False)
    monkeypatch.setenv("GRAPHMEM_NEO4J_PORT", "7690")
    assert Settings().neo4j_uri == "bolt://127.0.0.1:7690"
    monkeypatch.setenv("NEO4J_URI", "bolt://elsewhere:1")
    assert Settings().neo4j_uri == "bolt://elsewhere:1"


# -- human output -------------------------------------------------------------------------
@pytest.fixture
def moved(run, tmp_path):
    """Alice lived in Paris from 2023-01-01, then in Berlin from 2023-06-01 09:30:00.250+02:00."""
    scope = fresh_scope()
    path = tmp_path / "moved.jsonl"
    path.write_text(
        fact_line(scope, "p", "2023-01-01", "Paris")
        + "\n"
        + fact_line(scope, "b", "2023-06-01T09:30:00.250+02:00", "Berlin")
        + "\n"
    )
    assert run("ingest", path, "--json").exit_code == 0
    return scope


def test_recall_is_a_table_with_confidence_and_seconds(run, moved):
    s = subject(moved)
    human = run("recall", "where does Alice live", "--subject", s, "--k", "5")
    assert human.exit_code == 0
    header, *rows = human.stdout.splitlines()
    assert header.split()[:3] == ["confidence", "fact", "kind"]
    assert re.match(r"\d+%", rows[0]) and "semantic" in rows[0] and "2023-06-01 07:30:00" in rows[0]
    assert ".250" not in human.stdout and "0.0" not in human.stdout  # no microseconds, no raw fusion scores


def test_recall_says_nothing_relevant_found_and_still_lists_the_hits(run, mem):
    s = subject(fresh_scope())
    for n, text in enumerate(["I like green tea.", "I play chess on Sundays."]):
        mem.remember(text, s, at=datetime(2024, 1, 1 + n, tzinfo=UTC))
    first, header, *rows = run("recall", "which car does Maria drive?", "--subject", s).stdout.splitlines()
    assert first == "nothing relevant found; the closest hits:" and header.split()[0] == "confidence"
    assert len(rows) == 2
    found = as_json(run("recall", "which car does Maria drive?", "--subject", s, "--json"))
    assert found["relevant"] is False and len(found["hits"]) == 2
    assert as_json(run("recall", "green tea", "--subject", s, "--json"))["relevant"] is True


def test_tables_show_memory_text_as_written(run, mem):
    s = subject(fresh_scope())
    mem.remember("Remember [bold]this[/bold] and [default: that].", s, at=datetime(2024, 1, 1, tzinfo=UTC))
    human = run("recall", "remember this", "--subject", s)
    assert "[bold]this[/bold] and [default: that]" in human.stdout


def test_tables_escape_what_a_terminal_would_act_on(run, mem):
    # A right-to-left override in memory text reversed the rest of the table's line.
    s = subject(fresh_scope())
    mem.remember("Tea \u202egnissip\u202c with Bob\u200b.", s, at=datetime(2024, 1, 1, tzinfo=UTC))
    human = run("recall", "tea with Bob", "--subject", s)
    assert "Tea \\u202egnissip\\u202c with Bob\\u200b." in human.stdout
    assert not any(c in human.stdout for c in "\u202e\u202c\u200b")
    listed = run("episodes", "list", "--subject", s)  # a plain line, not a table
    assert "Tea \\u202egnissip" in listed.stdout and "\u202e" not in listed.stdout


def test_min_confidence_filters_by_confidence_and_only_when_given(run, mem):
    s = subject(fresh_scope())
    for n, text in enumerate(["I like green tea.", "I play chess on Sundays.", "My cat is called Tom."]):
        mem.remember(text, s, at=datetime(2024, 1, 1 + n, tzinfo=UTC))
    every = as_json(run("recall", "green tea", "--subject", s, "--json"))["hits"]
    assert len(every) == 3 and every[0]["content"] == "I like green tea."
    assert all(0 < h["confidence"] <= 1 for h in every)
    cut = 100 * min(h["confidence"] for h in every) + 0.05
    kept = as_json(run("recall", "green tea", "--subject", s, "--min-confidence", cut, "--json"))["hits"]
    assert kept == [h for h in every if 100 * h["confidence"] >= cut] and len(kept) < 3


def test_history_is_a_table_with_decisions_in_time_order(run, moved):
    human = run("history", "--entity", "Alice", "--subject", subject(moved))
    assert human.exit_code == 0
    lines = human.stdout.splitlines()
    assert all(len(line.rstrip()) <= 160 for line in lines)
    assert lines[0].split()[:2] == ["valid", "(UTC)"]
    assert "2023-01-01 → 2023-06-01 07:30:00" in human.stdout and "UPDATE:" in human.stdout


def test_decisions_are_listed_newest_first_then_by_id(run, moved):
    found = as_json(run("decisions", "--subject", subject(moved), "--json"))["decisions"]
    keys = [(d["decided_at"], d["id"]) for d in found]
    assert keys == sorted(keys, reverse=True)


# -- times ----------------------------------------------------------------------------------
@given(st.integers(1, 9999), st.one_of(st.none(), st.integers(1, 12)))
def test_a_year_or_a_month_is_its_start_in_utc(year, month):
    text = f"{year:04d}" if month is None else f"{year:04d}-{month:02d}"
    assert parse_time(text) == datetime(year, month or 1, 1, tzinfo=UTC)


def test_partial_dates_work_as_cli_options(run, moved):
    s = subject(moved)
    [hit] = as_json(run("recall", "where does Alice live", "--subject", s, "--as-of", "2023-03", "--json"))["hits"]
    assert hit["content"] == "Alice lives in Paris"
    [hit] = as_json(run("recall", "where does Alice live", "--subject", s, "--as-of", "2024", "--json"))["hits"]
    assert hit["content"] == "Alice lives in Berlin"


# -- progress -------------------------------------------------------------------------------
def test_ingest_progress_moves_during_a_file(monkeypatch, run, tmp_path):
    """The bar advances after each write, and a file of a few hundred episodes is many writes."""
    import graphmem.cli.write as write

    advanced: list[int] = []

    class Recorder:
        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return False

        def add_task(self, *args, **kwargs):
            return 0

        def advance(self, task, n):
            advanced.append(n)

    monkeypatch.setattr(write, "stderr_progress", Recorder)
    s = subject(fresh_scope())
    path = tmp_path / "many.jsonl"
    path.write_text(
        "".join(
            json.dumps({"subject": s, "occurred_at": "2024-01-01", "raw": f"I like tea {n}."}) + "\n"
            for n in range(300)
        )
    )
    assert run("ingest", path, "--extractor", "none").exit_code == 0
    assert sum(advanced) == 300 and len(advanced) >= 10


@pytest.mark.parametrize("args", [["recall", "x", "--subject", "user:a"], ["init"], ["doctor"]])
def test_a_command_reports_a_refused_port_within_seconds(args):
    began = datetime.now()
    result = invoker()("--uri", "bolt://127.0.0.1:9", *args)
    assert (datetime.now() - began).total_seconds() < 10 and result.exit_code == 1
    assert "Neo4j at bolt://127.0.0.1:9 is unreachable" in result.output


def test_a_fact_replaced_in_its_own_write_says_so_in_history(run, mem, monkeypatch):
    """A unit whose system interval is empty (created and expired at one instant) was never
    believed on its own; the table says that instead of an interval from T to T."""
    from graphmem.domain.models import Op
    from tests.factories import EPOCH, decision, unit

    scope = fresh_scope()
    gone = unit(scope, "Zed lives in Paris", created=EPOCH, valid=EPOCH)
    gone = gone.model_copy(update={"time": gone.time.model_copy(update={"expired_at": EPOCH})})
    monkeypatch.setattr(
        mem,
        "history",
        lambda **kwargs: [
            {
                "unit": gone,
                "slot": "Zed lives_in",
                "decisions": [decision(scope, Op.UPDATE, gone.id)],
                "believed_until": EPOCH,
                "earlier": [],
                "edges": [],
            }
        ],
    )
    human = run("history", "--entity", "Zed", "--subject", subject(scope))
    assert human.exit_code == 0 and "2020-01-01, replaced in the same write" in human.stdout


def test_db_start_on_another_port_says_how_to_point_the_other_commands_at_it(monkeypatch, tmp_path):
    from graphmem.server.local import LocalNeo4j, Status

    def running(self, **options):
        return Status(running=True, uri=self.uri, version="test", pid=1, password_file=None)

    monkeypatch.setattr(LocalNeo4j, "status", running)
    monkeypatch.setattr(LocalNeo4j, "start", running)
    monkeypatch.chdir(tmp_path)  # no stray .env
    monkeypatch.delenv("GRAPHMEM_NEO4J_PORT", raising=False)
    result = invoker()("db", "start", "--port", "7690", "--home", tmp_path)
    assert result.exit_code == 0 and "export GRAPHMEM_NEO4J_PORT=7690" in result.stderr
    default = invoker()("db", "start", "--port", "7687", "--home", tmp_path)
    assert default.exit_code == 0 and "export" not in default.stderr
    # The port the other commands already use needs no hint; another one does.
    monkeypatch.setenv("GRAPHMEM_NEO4J_PORT", "7690")
    configured = invoker()("db", "start", "--home", tmp_path)
    assert configured.exit_code == 0 and "7690" in configured.stdout and "export" not in configured.stderr
    other = invoker()("db", "start", "--port", "7687", "--home", tmp_path)
    assert other.exit_code == 0 and "export GRAPHMEM_NEO4J_PORT=7687" in other.stderr


def test_a_bad_subject_is_named_before_any_connection():
    # with the server down, the bad input is still what the user hears about
    def unreachable(settings, **options):
        raise AssertionError("no connection may be tried for bad input")

    run = invoker(CliState(factory=unreachable))
    result = run("recall", "x", "--subject", "alice")
    assert result.exit_code == 2
    assert one_error_line(result).startswith("error: Invalid value for '--subject'")
    assert "is not TYPE:ID" in one_error_line(result)


def test_a_user_other_than_neo4j_is_not_sent_the_local_servers_password(tmp_path):
    """The instance's password file is the neo4j user's: NEO4J_USER=bob with no password of
    its own is refused, naming what to set, instead of connecting as neo4j unannounced."""
    from graphmem.adapters.neo4j.driver import Neo4jConnection

    home = tmp_path / "home"
    kept = home / "instances" / "7755" / "password"
    kept.parent.mkdir(parents=True, mode=0o700)
    home.chmod(0o700), (home / "instances").chmod(0o700)
    kept.write_text("secret\n")
    kept.chmod(0o600)
    settings = Settings(neo4j_uri="bolt://127.0.0.1:7755", home=home, neo4j_user="bob")
    with pytest.raises(ConfigurationError, match="NEO4J_USER is bob but no password is given"):
        Neo4jConnection(settings)
    Neo4jConnection(settings.model_copy(update={"neo4j_user": "neo4j"})).close()  # the file's own user
