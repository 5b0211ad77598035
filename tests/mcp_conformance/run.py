"""Run the MCP conformance suite against `graphmem mcp serve` and check it against expected.txt.

    python -m tests.mcp_conformance.run --install             # npm ci here: Node 22 and the suite, pinned
    python -m tests.mcp_conformance.run [--transport http|stdio|both] [--keep DIR]

Needs a running Neo4j (NEO4J_URI, or GRAPHMEM_NEO4J_PORT) and npm to install (the npm registry
only: the `node` package brings Node 22 itself). Over HTTP the server runs with
--insecure-no-auth on 127.0.0.1 (the suite sends no Authorization header); over stdio the suite
reaches it through stdio_bridge.py. Prints each scenario with its outcome, then whether the
outcomes match the list; exits 1 when they do not (or the suite could not run).
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
NODE = HERE / "node_modules" / "node" / "bin" / "node"
SUITE = HERE / "node_modules" / "@modelcontextprotocol" / "conformance" / "dist" / "index.js"
EXPECTED = HERE / "expected.txt"
TRANSPORTS = ("http", "stdio")
#: One scenario's time limit is the suite's (30 s); the whole run's, this.
SUITE_TIMEOUT = 600


@dataclass(frozen=True)
class Expectation:
    http: str
    stdio: str
    reason: str

    def on(self, transport: str) -> str:
        return getattr(self, transport)


def expected(path: Path = EXPECTED) -> dict[str, Expectation]:
    """expected.txt: ``scenario http stdio [reason]`` per line, each of pass|fail|-."""
    found = {}
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        name, http, stdio, *reason = line.split(maxsplit=3)
        if {http, stdio} - {"pass", "fail", "-"} or name in found:
            raise ValueError(f"{path.name}:{number}: {line!r}: want `scenario http stdio [reason]`, each pass|fail|-")
        if "fail" in (http, stdio) and not reason:
            raise ValueError(f"{path.name}:{number}: {name} is expected to fail without a reason")
        found[name] = Expectation(http, stdio, reason[0] if reason else "")
    return found


def installed() -> bool:
    return NODE.is_file() and SUITE.is_file()


def install() -> None:
    """``npm ci`` in this folder: the lockfile's exact versions (the npm registry only)."""
    subprocess.run(["npm", "ci", "--no-audit", "--no-fund", "--loglevel=error"], cwd=HERE, check=True)
    version = subprocess.run([str(NODE), "--version"], capture_output=True, text=True, check=True).stdout.strip()
    print(f"node {version}, conformance suite in {SUITE.parents[1]}", file=sys.stderr)


def server_argv(transport: str, subject: str) -> list[str]:
    """The command serving ``subject`` over ``transport`` on HTTP; ``--port P`` is appended."""
    serve = [sys.executable, "-m", "graphmem.cli.main", "mcp", "serve", "--subject", subject]
    if transport == "http":
        return [*serve, "--transport", "http", "--insecure-no-auth"]
    return [sys.executable, str(HERE / "stdio_bridge.py"), "--stdio", shlex.join(serve)]


def server_env() -> dict[str, str]:
    env = dict(os.environ)
    env.setdefault("GRAPHMEM_EMBEDDER", "hashing")
    env.pop("GRAPHMEM_MCP_SUBJECT", None)
    env.pop("GRAPHMEM_MCP_TOKEN", None)
    return env


@dataclass(frozen=True)
class Outcome:
    """One scenario's result: whether all its checks passed, their counts, the first failure."""

    passed: bool
    checks: int
    failed: int
    message: str


def run_suite(url: str, out: Path) -> dict[str, Outcome]:
    """Run every scenario of the suite's active set against ``url``: each scenario's outcome,
    from the results the suite writes in ``out``."""
    done = subprocess.run(
        [str(NODE), str(SUITE), "server", "--url", url, "-o", str(out)],
        capture_output=True,
        text=True,
        timeout=SUITE_TIMEOUT,
        cwd=out,
    )
    outcomes: dict[str, Outcome] = {}
    for folder in sorted(out.iterdir()):
        if not (folder / "checks.json").is_file() or not folder.name.startswith("server-"):
            continue
        scenario = folder.name.removeprefix("server-").rsplit("-", 6)[0]  # ...-2026-12-04T17-48-23-130Z
        checks = json.loads((folder / "checks.json").read_text(encoding="utf-8"))
        failed = [c for c in checks if c.get("status") not in ("SUCCESS", "INFO", "WARNING")]
        message = failed[0].get("errorMessage", "") if failed else ""
        outcomes[scenario] = Outcome(not failed, len(checks), len(failed), message)
    if not outcomes:
        raise RuntimeError(f"the suite ran no scenario (exit {done.returncode}): {done.stderr[-2000:]}")
    return outcomes


def compare(transport: str, outcomes: dict[str, Outcome], wanted: dict[str, Expectation]) -> list[str]:
    """What does not match the list: an unlisted scenario, an outcome other than expected."""
    problems = []
    for scenario, outcome in outcomes.items():
        passed, message = outcome.passed, outcome.message
        if scenario not in wanted:
            problems.append(f"{scenario}: not in {EXPECTED.name} ({'passes' if passed else 'fails: ' + message})")
            continue
        want = wanted[scenario].on(transport)
        if want == "pass" and not passed:
            problems.append(f"{scenario}: expected to pass, fails: {message}")
        elif want == "fail" and passed:
            problems.append(f"{scenario}: passes now: mark it pass in {EXPECTED.name}")
    missing = sorted(s for s, e in wanted.items() if e.on(transport) != "-" and s not in outcomes)
    problems += [f"{scenario}: listed but the suite did not run it" for scenario in missing]
    return problems


def tally(transport: str, outcomes: dict[str, Outcome], wanted: dict[str, Expectation]) -> str:
    """Each scenario's outcome, then the counts of scenarios and of checks; a scenario listed
    ``-`` for the transport is shown but not counted."""
    lines = [f"conformance over {transport}:"]
    counted = {}
    for scenario, o in outcomes.items():
        if scenario in wanted and wanted[scenario].on(transport) == "-":
            lines.append(f"  ---- {scenario} (not checked over {transport})")
            continue
        counted[scenario] = o
        lines.append(f"  {'PASS' if o.passed else 'FAIL'} {scenario}" + ("" if o.passed else f": {o.message[:160]}"))
    passed = sum(o.passed for o in counted.values())
    checks, failed = sum(o.checks for o in counted.values()), sum(o.failed for o in counted.values())
    lines.append(f"  scenarios: {passed} pass, {len(counted) - passed} fail, of {len(counted)}")
    lines.append(f"  checks: {checks - failed} pass, {failed} fail, of {checks}")
    return "\n".join(lines)


def check(transport: str, subject: str, keep: Path | None = None) -> tuple[str, list[str]]:
    """Serve ``subject`` over ``transport``, run the suite, and compare with the list: the
    tally, and the problems (none: as expected)."""
    from tests.ports import serving

    with tempfile.TemporaryDirectory(prefix=f"mcp-conformance-{transport}-") as tmp:
        out = keep / transport if keep else Path(tmp)
        out.mkdir(parents=True, exist_ok=True)
        argv = server_argv(transport, subject)
        with serving(argv, f"mcp serve over {transport}", env=server_env(), cwd=ROOT) as server:
            outcomes = run_suite(f"http://127.0.0.1:{server.port}/mcp", out)
    wanted = expected()
    return tally(transport, outcomes, wanted), compare(transport, outcomes, wanted)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--install", action="store_true", help="install Node 22 and the suite (npm ci), then stop")
    parser.add_argument("--transport", choices=[*TRANSPORTS, "both"], default="both")
    parser.add_argument("--subject", default="user:mcp-conformance")
    parser.add_argument("--keep", type=Path, help="keep the suite's results in this folder")
    args = parser.parse_args()
    if args.install:
        install()
        return 0
    if not installed():
        print(f"the suite is not installed: python -m tests.mcp_conformance.run --install ({HERE})", file=sys.stderr)
        return 1
    failed = False
    for transport in TRANSPORTS if args.transport == "both" else (args.transport,):
        report, problems = check(transport, args.subject, args.keep)
        print(report)
        for problem in problems:
            print(f"  UNEXPECTED {problem}")
        print(f"  {transport}: " + ("as expected" if not problems else f"{len(problems)} unexpected"))
        failed |= bool(problems)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
