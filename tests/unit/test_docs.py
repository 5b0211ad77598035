"""The README, the docs/ pages (two of them generated), .env.example, CONTRIBUTING.md and the two
set-up scripts say what the code does."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from graphmem.cli.docs import render
from graphmem.domain.models import Fact
from graphmem.faces.episode_lines import EPISODE_KEYS
from graphmem.settings import docs as config_docs
from graphmem.settings.config import Settings, setting_name

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text(encoding="utf-8")
DOCS = ROOT / "docs"
#: Every page a reader sees: the README, CONTRIBUTING.md and the docs site.
PAGES = [ROOT / "README.md", ROOT / "CONTRIBUTING.md", *sorted(DOCS.glob("*.md"))]


def page(name: str) -> str:
    return (DOCS / name).read_text(encoding="utf-8")


def section(title: str, text: str = README) -> str:
    return text.split(f"## {title}\n", 1)[1].split("\n## ", 1)[0]


def test_docs_cli_md_is_generated_from_the_current_help():
    assert page("cli.md") == render(), "docs/cli.md is stale: run python -m graphmem.cli.docs > docs/cli.md"


def test_docs_configuration_md_is_generated_from_the_current_settings():
    assert page("configuration.md") == config_docs.render(), (
        "docs/configuration.md is stale: run python -m graphmem.settings.docs > docs/configuration.md"
    )


def test_env_example_is_generated_from_the_current_settings_and_changes_nothing():
    example = (ROOT / ".env.example").read_text(encoding="utf-8")
    assert example == config_docs.render_env_example(), (
        ".env.example is stale: run python -m graphmem.settings.docs env > .env.example"
    )
    assert all(not line or line.startswith("#") for line in example.splitlines())
    for field in Settings.model_fields:
        assert f"# {setting_name(field)}=" in example, field


def test_the_generated_defaults_do_not_depend_on_the_machine(monkeypatch, tmp_path):
    monkeypatch.setenv("GRAPHMEM_HOME", str(tmp_path))
    monkeypatch.setenv("HOME", str(tmp_path / "elsewhere"))
    assert config_docs.render() == page("configuration.md")
    assert "`~/.cache/graphmem`" in page("configuration.md")


def test_every_setting_has_a_description_and_a_row():
    table = page("configuration.md")
    for field, info in Settings.model_fields.items():
        assert info.description, f"Settings.{field} has no description"
        assert f"| `{field}` | `{setting_name(field)}` |" in table, field


def test_every_episode_and_fact_key_is_documented():
    episodes = page("episodes.md")
    for key in EPISODE_KEYS | set(Fact.model_fields):
        assert f"`{key}`" in episodes, key


def test_the_pages_name_nothing_a_reader_cannot_see():
    for path in PAGES:
        text = path.read_text(encoding="utf-8")
        for hidden in (r"\bissue", r"closing note", r"/work/", r"\bshared/", r"bench-data"):
            assert not re.search(hidden, text, re.IGNORECASE), (path.name, hidden)


def test_the_readme_is_a_short_guide_whose_links_resolve():
    assert len(README.splitlines()) <= 200
    for title in ("Set up", "A five-minute tour", "Documentation"):
        assert f"## {title}\n" in README
    for face in ("### CLI", "### Python", "### HTTP", "### MCP"):
        assert face in README
    links = re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", README)
    local = [link for link in links if not re.match(r"[a-z]+://", link)]
    assert local and all((ROOT / link).is_file() for link in local), local


def test_every_docs_page_is_in_the_site_and_linked_from_the_readme():
    site = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    for path in DOCS.glob("*.md"):
        assert f": {path.name}" in site, path.name
        if path.name != "index.md":
            assert f"(docs/{path.name})" in README, path.name


def test_the_docs_site_builds_in_strict_mode(tmp_path):
    pytest.importorskip("mkdocs", reason="the test extra installs mkdocs-material")
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "mkdocs",
            "build",
            "--strict",
            "-f",
            str(ROOT / "mkdocs.yml"),
            "-d",
            str(tmp_path / "site"),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
    )
    assert run.returncode == 0, run.stderr[-3000:]


def test_contributing_has_its_recipes():
    text = (ROOT / "CONTRIBUTING.md").read_text(encoding="utf-8")
    for recipe in ("Add a query file", "Add a migration", "Add a store method", "Run the tests without Neo4j"):
        assert f"## {recipe}\n" in text, recipe
    for named in ("graphmem/ports/", "tests/contract", "cypher/", "not neo4j", "scripts/test"):
        assert named in text, named


def test_set_up_is_two_commands_with_their_prerequisites():
    setup = section("Set up")
    [block] = re.findall(r"```bash\n(.*?)```", setup, re.DOTALL)
    assert [line.split("#")[0].strip() for line in block.splitlines()] == [
        "bash scripts/quickstart",
        "bash scripts/test",
    ]
    assert "Java 21+" in setup and "Maven" in setup and "docker-compose.yml" in setup
    assert "docs/cli.md" in README
    assert "bash scripts/test" in (ROOT / ".ci" / "run").read_text(encoding="utf-8")  # CI runs the README's command


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


def test_the_quickstart_installs_what_the_tour_uses_and_says_what_is_next():
    script = (ROOT / "scripts" / "quickstart").read_text(encoding="utf-8")
    assert '-e ".[server,mcp]"' in script
    tour = section("A five-minute tour")
    assert "graphmem serve" in tour and "graphmem mcp serve" in tour
    lines = script.rstrip().splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith('echo "--- next'))
    assert all(line.startswith("echo ") for line in lines[start:]) and 3 <= len(lines) - start <= 5
