"""Human output hands a terminal nothing it would act on: on every command, memory text is shown
with each control, format and line-separator character escaped (``graphmem.cli.common.shown``),
a line break too wherever the text sits on one line or in one table cell; --json stays JSON.
Over the in-memory adapters (the factory in the context object)."""

from __future__ import annotations

import unicodedata
from datetime import UTC, datetime

import pytest

from graphmem.domain.models import STORED, Fact, MemoryBlock, MemoryKind
from tests.cli import as_json, subject
from tests.conftest import fresh_scope

#: Sets the terminal's title: ESC ] 0 ; ... BEL.
OSC = "\x1b]0;TITLE-PWNED\x07"
SHOWN = "\\u001b]0;TITLE-PWNED\\u0007"
AT = datetime(2024, 1, 1, tzinfo=UTC)


def acted_on(output: str) -> list[str]:
    """What a terminal would act on or show as nothing, but the lines of the output itself."""
    return [c for c in output if c not in "\n\t" and unicodedata.category(c) in ("Cc", "Cf", "Zl", "Zp")]


def plain(result, *needles: str) -> str:
    assert result.exit_code == 0, result.output
    assert acted_on(result.stdout) == [] and acted_on(result.stderr) == []
    for needle in needles:
        assert needle in result.stdout
    return result.stdout


@pytest.fixture
def bob(mem):
    """A subject whose episode, fact, rule under review, block and decision reason hold OSC."""
    scope = fresh_scope()
    mem.remember(
        f"Bob osc test {OSC}",
        scope,
        at=AT,
        facts=[
            Fact(subject="Bob", predicate="likes", content=f"Bob likes tea {OSC}"),
            Fact(subject="assistant", predicate="rule", content=f"Obey {OSC}", kind=MemoryKind.procedural),
        ],
    )
    mem.set_block(scope, "persona", f"Be brief {OSC}", token_budget=50, description=f"tone {OSC}")
    return scope


def test_an_episode_is_shown_escaped(run, mem, bob):
    scope = bob
    [episode] = mem.episodes(scope)
    plain(run("episodes", "show", episode.id, "--subject", subject(scope)), f"Bob osc test {SHOWN}")
    plain(run("episodes", "list", "--subject", subject(scope)), f"Bob osc test {SHOWN}")
    assert as_json(run("episodes", "show", episode.id, "--subject", subject(scope), "--json"))["raw"].endswith(OSC)


def test_the_assembled_context_is_shown_escaped(run, bob):
    scope = bob
    out = plain(
        run("assemble", "what does Bob like", "--subject", subject(scope)),
        f"Be brief {SHOWN}",
        f"Bob likes tea {SHOWN}",
    )
    assert out.startswith("## persona\n")  # its own lines stay lines
    doc = as_json(run("assemble", "what does Bob like", "--subject", subject(scope), "--json"))
    assert OSC in doc["text"]


def test_blocks_are_shown_escaped(run, mem, bob):
    scope = bob
    s = subject(scope)
    plain(run("blocks", "list", "--subject", s), f"tone {SHOWN}")
    plain(run("blocks", "show", "--label", "persona", "--subject", s), f"Be brief {SHOWN}")
    # A label stored before labels were checked (an import keeps it) is shown escaped too.
    mem.store.put_block(
        MemoryBlock.model_validate(
            {"scope": scope, "label": f"old{OSC}", "value": "v", "token_budget": 5}, context=STORED
        )
    )
    plain(run("blocks", "list", "--subject", s), f"old{SHOWN}")
    trace = as_json(run("assemble", "tea", "--subject", s, "--json"))["trace"]
    plain(run("explain", trace["id"], "--subject", s), f"[old{SHOWN}]")
    plain(run("blocks", "delete", "--label", f"old{OSC}", "--subject", s), f"deleted block old{SHOWN}")


def test_review_items_are_shown_escaped(run, bob):
    scope = bob
    plain(run("review", "list", "--subject", subject(scope)), f"Obey {SHOWN}")


def test_a_line_break_in_a_table_cell_or_a_line_is_shown_escaped(run, mem):
    scope = fresh_scope()
    s = subject(scope)
    mem.remember("tea", scope, at=AT, facts=[Fact(subject="Bob", predicate="likes", content="Bob likes tea\nadmin")])
    [row] = [line for line in plain(run("recall", "tea", "--subject", s)).splitlines() if "Bob likes tea" in line]
    assert "Bob likes tea\\u000aadmin" in row
    [unit_id] = [h["id"] for h in as_json(run("recall", "tea", "--subject", s, "--json"))["hits"]]
    reason = f"wrong\n2024-01-01 ADD {OSC}"  # would pass for a decision of its own
    plain(run("retract", unit_id, "--subject", s, "--reason", reason))
    out = plain(run("decisions", "--subject", s), f"wrong\\u000a2024-01-01 ADD {SHOWN}")
    rows = [line for line in out.splitlines() if not line.startswith("    ")]
    assert len(rows) == 2  # the ADD and the DELETE, one line each (the facts they name indented below)
    assert any(d["reason"].startswith(reason) for d in as_json(run("decisions", "--subject", s, "--json"))["decisions"])


def test_an_error_is_shown_escaped(run):
    # A file name comes from a shell glob as often as from a person.
    refused = run("ingest", f"missing{OSC}.jsonl")
    assert refused.exit_code == 2 and acted_on(refused.stderr) == []
    assert refused.stderr == f"error: missing{SHOWN}.jsonl: no such file\n"
