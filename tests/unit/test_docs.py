"""The README, docs/cli.md and the two set-up scripts say what the code does."""

from __future__ import annotations

import re
from pathlib import Path

from graphmem.cli.docs import render
from graphmem.config import Settings, setting_name
from graphmem.episodes_io import EPISODE_KEYS
from graphmem.models import Fact

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text(encoding="utf-8")


def section(title: str) -> str:
    return README.split(f"## {title}\n", 1)[1].split("\n## ", 1)[0]


def test_docs_cli_md_is_generated_from_the_current_help():
    assert (ROOT / "docs" / "cli.md").read_text(encoding="utf-8") == render(), (
        "docs/cli.md is stale: run python -m graphmem.cli.docs > docs/cli.md"
    )


def test_every_setting_is_in_the_configuration_table():
    table = section("Configuration")
    named = set(re.findall(r"`([A-Z][A-Z0-9_]+)`", table))
    assert {setting_name(f) for f in Settings.model_fields} <= named


def test_every_episode_and_fact_key_is_documented():
    episodes = section("CLI")
    for key in EPISODE_KEYS | set(Fact.model_fields):
        assert f"`{key}`" in episodes, key


def test_the_readme_names_nothing_a_reader_cannot_see():
    for hidden in (r"\bissue", r"closing note", r"/work/", r"\bshared/", r"bench-data"):
        assert not re.search(hidden, README, re.IGNORECASE), hidden


def test_set_up_is_two_commands_with_their_prerequisites():
    setup = section("Set up")
    [block] = re.findall(r"```bash\n(.*?)```", setup, re.DOTALL)
    assert [line.split("#")[0].strip() for line in block.splitlines()] == [
        "bash scripts/quickstart",
        "bash scripts/test",
    ]
    assert "Java 21+" in setup and "Maven" in setup and "docker-compose.yml" in setup
    assert "docs/cli.md" in README


def test_the_scripts_install_into_their_venv_and_stop_on_failure():
    for name in ("quickstart", "test"):
        script = (ROOT / "scripts" / name).read_text(encoding="utf-8")
        assert "set -euo pipefail" in script and "python3 -m venv .venv" in script
        assert ".venv/bin/python -m pip install" in script and 'PATH="$PWD/.venv/bin:$PATH"' in script
        assert "|| true" not in script


def test_the_quickstart_says_the_hops_it_runs():
    script = (ROOT / "scripts" / "quickstart").read_text(encoding="utf-8")
    words = {"one": 1, "two": 2, "three": 3}
    for said, hops in re.findall(r"\((\w+) hops? through the graph.*\n.*--hops (\d)", script):
        assert words[said] == int(hops)
    assert re.search(r"hops? through the graph", script)
