"""Settings: one environment name per setting, a ``.env`` file, keyword overrides."""

from __future__ import annotations

import json
import os
import pwd
from pathlib import Path

import pytest

from graphmem.cli.common import CliState
from graphmem.errors import ConfigurationError
from graphmem.settings.config import LocalServerSettings, Settings
from tests.cli import invoker, one_error_line

#: Every setting and the one environment variable that sets it.
ENV_NAMES = {
    "neo4j_uri": "NEO4J_URI",
    "neo4j_user": "NEO4J_USER",
    "neo4j_password": "NEO4J_PASSWORD",
    "neo4j_database": "NEO4J_DATABASE",
    "home": "GRAPHMEM_HOME",
    "embedder": "GRAPHMEM_EMBEDDER",
    "openai_base_url": "OPENAI_BASE_URL",
    "openai_api_key": "OPENAI_API_KEY",
    "embedding_model": "GRAPHMEM_EMBEDDING_MODEL",
    "embedding_dimensions": "GRAPHMEM_EMBEDDING_DIMENSIONS",
    "llm_model": "GRAPHMEM_LLM_MODEL",
    "policy": "GRAPHMEM_POLICY",
    "subject": "GRAPHMEM_SUBJECT",
    "rrf_k": "GRAPHMEM_RRF_K",
    "list_weights": "GRAPHMEM_LIST_WEIGHTS",
    "http_max_body": "GRAPHMEM_HTTP_MAX_BODY",
    "http_max_episodes": "GRAPHMEM_HTTP_MAX_EPISODES",
    "http_timeout": "GRAPHMEM_HTTP_TIMEOUT",
    "http_concurrency": "GRAPHMEM_HTTP_CONCURRENCY",
    "http_queue": "GRAPHMEM_HTTP_QUEUE",
    "http_key_concurrency": "GRAPHMEM_HTTP_KEY_CONCURRENCY",
    "http_cors_origins": "GRAPHMEM_HTTP_CORS_ORIGINS",
    "http_metrics": "GRAPHMEM_HTTP_METRICS",
    "mcp_token": "GRAPHMEM_MCP_TOKEN",
    "trace_retention_days": "GRAPHMEM_TRACE_RETENTION_DAYS",
    "rerank": "GRAPHMEM_RERANK",
    "rerank_depth": "GRAPHMEM_RERANK_DEPTH",
    "rerank_weight": "GRAPHMEM_RERANK_WEIGHT",
    "neo4j_port": "GRAPHMEM_NEO4J_PORT",
    "neo4j_version": "GRAPHMEM_NEO4J_VERSION",
    "neo4j_retry_seconds": "GRAPHMEM_NEO4J_RETRY_SECONDS",
    "llm_base_url": "GRAPHMEM_LLM_BASE_URL",
    "llm_api_key": "GRAPHMEM_LLM_API_KEY",
    "embedding_base_url": "GRAPHMEM_EMBEDDING_BASE_URL",
    "embedding_api_key": "GRAPHMEM_EMBEDDING_API_KEY",
}
VALUES = {
    "neo4j_uri": "bolt://db:1",
    "neo4j_user": "u",
    "neo4j_password": "pw",
    "neo4j_database": "d",
    "home": "/tmp/gm-home",
    "embedder": "hashing",
    "openai_base_url": "http://llm:1/v1",
    "openai_api_key": "k",
    "embedding_model": "m",
    "embedding_dimensions": "7",
    "llm_model": "l",
    "policy": "llm",
    "subject": "user:alice",
    "rrf_k": "5",
    "list_weights": '{"time": 2.0}',
    "http_max_body": "4096",
    "http_max_episodes": "50",
    "http_timeout": "2.5",
    "http_concurrency": "3",
    "http_queue": "7",
    "http_key_concurrency": "1",
    "http_cors_origins": "http://a.test,http://b.test",
    "http_metrics": "admin",
    "mcp_token": "t",
    "trace_retention_days": "30.0",
    "rerank": "True",
    "rerank_depth": "40",
    "rerank_weight": "2.5",
    "neo4j_port": "7690",
    "neo4j_version": "5.26.30",
    "neo4j_retry_seconds": "4.5",
    "llm_base_url": "http://vllm:1/v1",
    "llm_api_key": "lk",
    "embedding_base_url": "http://ollama:1/v1",
    "embedding_api_key": "ek",
}


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for name in ENV_NAMES.values():
        monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(tmp_path)  # no stray .env


def plain(settings: Settings) -> dict[str, str]:
    out = {}
    for field in ENV_NAMES:
        value = getattr(settings, field)
        value = value.get_secret_value() if hasattr(value, "get_secret_value") else value
        out[field] = json.dumps(value) if isinstance(value, dict) else str(value)
    return out


def test_every_setting_reads_its_one_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    assert set(ENV_NAMES) == set(Settings.model_fields)
    for field, name in ENV_NAMES.items():
        monkeypatch.setenv(name, VALUES[field])
    assert plain(Settings()) == VALUES


def test_other_spellings_are_not_read(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", "/somewhere")  # `home` is GRAPHMEM_HOME, never HOME
    monkeypatch.setenv("GRAPHMEM_NEO4J_URI", "bolt://wrong:1")
    monkeypatch.setenv("EMBEDDER", "hashing")
    settings = Settings()
    assert settings.home != Path("/somewhere") and settings.neo4j_uri == "bolt://127.0.0.1:7687"
    assert settings.embedder == "minilm"


def test_dotenv_then_environment_then_keywords(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    (tmp_path / ".env").write_text("NEO4J_URI=bolt://dotenv:1\nGRAPHMEM_RRF_K=9\nUNRELATED=x\n")
    assert (Settings().neo4j_uri, Settings().rrf_k) == ("bolt://dotenv:1", 9)
    monkeypatch.setenv("NEO4J_URI", "bolt://env:1")
    assert Settings().neo4j_uri == "bolt://env:1"
    assert Settings(neo4j_uri="bolt://kw:1").neo4j_uri == "bolt://kw:1"
    assert Settings.from_env(neo4j_uri=None, rrf_k=3).neo4j_uri == "bolt://env:1"  # None: not given


def test_empty_variables_are_unset_and_bad_ones_are_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GRAPHMEM_EMBEDDING_DIMENSIONS", "")
    assert Settings().embedding_dimensions is None
    monkeypatch.setenv("GRAPHMEM_EMBEDDER", "word2vec")
    with pytest.raises(ValueError, match="embedder"):
        Settings()


@pytest.mark.parametrize(
    "weights, words",
    [
        ('{"semntic": 2}', "unknown name 'semntic': use semantic|lexical"),  # a typo would weigh nothing
        ('{"time": -1}', "greater than or equal to 0"),
        ('{"similarity": NaN}', "finite number"),  # json reads NaN
    ],
)
def test_list_weights_name_known_lists_with_finite_weights(monkeypatch: pytest.MonkeyPatch, weights, words) -> None:
    monkeypatch.setenv("GRAPHMEM_LIST_WEIGHTS", weights)
    with pytest.raises(ValueError, match=words):
        Settings()


# -- a .env another local user could have written ----------------------------------------------
ROOT = os.geteuid() == 0
FIX = "remove the .env if you did not write it, or run graphmem from another folder"


@pytest.fixture
def planted(tmp_path: Path) -> Path:
    """A .env that sends every write elsewhere and lets a chosen token in."""
    env = tmp_path / ".env"
    env.write_text("NEO4J_URI=bolt://127.0.0.1:7733\nGRAPHMEM_MCP_TOKEN=chosen\n")
    env.chmod(0o600)
    return env


@pytest.mark.parametrize("kind", [Settings, LocalServerSettings])
def test_a_dotenv_others_can_write_is_refused(planted: Path, kind) -> None:
    planted.chmod(0o666)
    with pytest.raises(ConfigurationError) as refused:
        kind()
    assert str(refused.value) == (
        f"{planted} refused: {planted} can be written by other users (mode 0666): chmod go-w {planted}, or {FIX}"
    )
    planted.chmod(0o600)
    assert Settings().neo4j_uri == "bolt://127.0.0.1:7733"  # one only its user can change is read


def test_a_dotenv_holding_a_secret_others_can_read_is_refused_as_a_token_file_is(planted: Path) -> None:
    planted.chmod(0o644)
    with pytest.raises(ConfigurationError) as refused:
        Settings()
    assert str(refused.value) == (
        f"{planted} refused: {planted} can be read by other users (mode 0644): chmod go-rwx {planted}"
    )
    planted.write_text("NEO4J_URI=bolt://127.0.0.1:7733\nGRAPHMEM_MCP_TOKEN=\n")  # no secret set in it
    assert Settings().neo4j_uri == "bolt://127.0.0.1:7733"


def test_a_dotenv_in_a_folder_others_can_write_is_refused(planted: Path) -> None:
    folder = planted.parent
    folder.chmod(0o777)  # another user could put their own .env in its place
    try:
        with pytest.raises(ConfigurationError, match=f"^{planted} refused: {folder} can be written by other users"):
            Settings()
    finally:
        folder.chmod(0o700)


@pytest.mark.skipif(not ROOT, reason="only root can give a file to another user")
def test_a_dotenv_of_another_user_in_a_shared_folder_is_refused(planted: Path) -> None:
    """/tmp-like: root's sticky folder open to all, where another user wrote the .env."""
    planted.parent.chmod(0o1777)
    try:
        os.chown(planted, pwd.getpwnam("nobody").pw_uid, -1)
        with pytest.raises(ConfigurationError, match=f"^{planted} refused: {planted} belongs to user nobody"):
            Settings()
        os.chown(planted, 0, -1)  # root's own there: no one else can change it
        assert Settings().mcp_token.get_secret_value() == "chosen"
    finally:
        planted.parent.chmod(0o700)


def test_the_cli_refuses_it_in_one_line(planted: Path) -> None:
    planted.chmod(0o666)
    run = invoker(CliState(factory=lambda settings, **options: pytest.fail("connected despite the .env")))
    for args in (["stats"], ["db", "status"]):
        refused = run(*args)
        assert refused.exit_code == 1
        assert one_error_line(refused).startswith(f"error: {planted} refused: {planted} can be written")


@pytest.mark.parametrize(
    "env, args, named",
    [
        ({"GRAPHMEM_RRF_K": "abc"}, [], "GRAPHMEM_RRF_K: Input should be a valid integer"),
        ({"GRAPHMEM_NEO4J_RETRY_SECONDS": "nan"}, [], "GRAPHMEM_NEO4J_RETRY_SECONDS: Input should be a finite number"),
        ({"GRAPHMEM_LIST_WEIGHTS": '{"time": -1}'}, [], "GRAPHMEM_LIST_WEIGHTS.time: Input should be greater"),
        ({"NEO4J_URI": "http://db:1"}, [], "NEO4J_URI: 'http://db:1' is not a Bolt URI"),
        ({}, ["--uri", "http://db:1"], "--uri: 'http://db:1' is not a Bolt URI"),
        ({"NEO4J_URI": "bolt://db:1"}, ["--uri", "http://db:1"], "--uri: 'http://db:1' is not a Bolt URI"),
    ],
)
def test_the_cli_names_a_bad_setting_as_it_was_set(monkeypatch: pytest.MonkeyPatch, env, args, named) -> None:
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    refused = invoker(CliState(factory=lambda settings, **options: pytest.fail("connected with a bad setting")))(
        *args, "stats"
    )
    assert refused.exit_code == 2
    assert one_error_line(refused).startswith(f"error: {named}")


@pytest.mark.parametrize(
    "uri, refused",
    [
        ("bolt://db:1?region=eu", "Routing context"),  # a routing context on a direct URI
        ("neo4j://db:1?region", "Invalid parameters"),
        ("bolt://alice:pw@db:1", "userinfo is not supported"),
    ],
)
def test_a_uri_the_driver_refuses_is_one_line_before_any_connection(
    monkeypatch: pytest.MonkeyPatch, uri, refused
) -> None:
    monkeypatch.setenv("NEO4J_URI", uri)
    failed = invoker()("stats")
    assert failed.exit_code != 0
    assert one_error_line(failed).startswith(f"error: Neo4j URI {uri}: ") and refused in one_error_line(failed)
