"""`graphmem serve` for real: a subprocess on a free port against the test Neo4j, its keys as
stored in Neo4j, readiness, plain HTTP calls, and the memory browser page in headless
Chromium. The endpoint contract itself runs in process in tests/contract/test_http.py."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import time
import urllib.error
import urllib.request
from contextlib import contextmanager
from pathlib import Path

import pytest

pytest.importorskip("fastapi")

from graphmem.settings.config import Settings
from tests.conftest import fresh_scope
from tests.ports import free_port, serving

pytestmark = pytest.mark.neo4j

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM, CHROMEDRIVER = "/usr/bin/chromium", "/usr/bin/chromedriver"


def env() -> dict[str, str]:
    out = dict(os.environ)
    out.setdefault("NEO4J_URI", "bolt://127.0.0.1:7687")
    out.setdefault("GRAPHMEM_EMBEDDER", "hashing")
    return out


def cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "graphmem.cli.main", *args],
        env=env(),
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )


@contextmanager
def served():
    """`graphmem serve` on a free port, until the block ends."""
    with serving([sys.executable, "-m", "graphmem.cli.main", "serve"], "graphmem serve", env=env(), cwd=ROOT) as server:
        server.url = f"http://127.0.0.1:{server.port}"
        yield server


def call(method: str, url: str, token: str | None = None, body: object = None) -> tuple[int, dict]:
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(url, data=data, method=method)
    request.add_header("Content-Type", "application/json")
    if token:
        request.add_header("Authorization", f"Bearer {token}")
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


def fact(city: str, when: str, op: str = "assert") -> dict:
    return {
        "subject": "Alice",
        "predicate": "lives_in",
        "object": city,
        "content": f"Alice lives in {city}",
        "valid_at": when,
        "single_valued": True,
        "op": op,
    }


@pytest.fixture
def alice(conn) -> tuple[str, dict]:
    """A fresh subject and a key for it made by `graphmem keys create --json`."""
    scope = fresh_scope()
    subject = f"{scope.subject_type.value}:{scope.subject_id}"
    made = cli("keys", "create", "--subject", subject, "--name", "browser", "--json")
    assert made.returncode == 0, made.stderr
    return subject, json.loads(made.stdout)


def test_keys_are_stored_as_digests_in_neo4j(alice, conn):
    _, key = alice
    secret = key["key"].split("_", 2)[2]
    [row] = conn.read("keys/get_key", id=key["id"])
    stored = row["key"]
    assert stored["digest"] == hashlib.sha256(secret.encode()).hexdigest()
    every_value = json.dumps(stored, default=str)
    assert key["key"] not in every_value and secret not in every_value
    listed = json.loads(cli("keys", "list", "--json").stdout)["keys"]
    assert key["id"] in {k["id"] for k in listed} and key["key"] not in json.dumps(listed)


def test_serve_answers_over_http_and_erasure_revokes_the_key(alice):
    subject, key = alice
    base = f"/v1/subjects/{subject.replace(':', '%3A')}"
    with served() as server:
        url = server.url
        assert call("GET", url + "/readyz")[0] == 200
        assert call("GET", url + base + "/blocks")[0] == 401
        status, written = call(
            "POST",
            url + base + "/episodes",
            key["key"],
            {
                "episodes": [
                    {"occurred_at": "2020-01-01", "raw": "I live in Paris.", "facts": [fact("Paris", "2020-01-01")]},
                    {"occurred_at": "2022-01-01", "raw": "I moved to Berlin.", "facts": [fact("Berlin", "2022-01-01")]},
                ]
            },
        )
        assert status == 200 and written["decisions"]["UPDATE"] == 1
        status, then = call(
            "POST", url + base + "/recall", key["key"], {"query": "where does Alice live", "as_of": "2021-01-01"}
        )
        assert status == 200 and [h["content"] for h in then["hits"]] == ["Alice lives in Paris"]
        status, receipt = call("DELETE", url + base + "?confirm=true", key["key"])
        assert status == 200 and receipt["revoked_keys"] == [key["id"]] and receipt["actor"] == key["id"]
        assert call("GET", url + base + "/blocks", key["key"])[0] == 401
        log = server.output()
    # one JSON object per request, after the logger's prefix
    requests = [json.loads(line[line.index("{") :]) for line in log.splitlines() if "graphmem.http.access" in line]
    recalls = [r for r in requests if (r["method"], r["route"]) == ("POST", "/v1/subjects/{subject}/recall")]
    assert [r["status"] for r in recalls] == [200] and recalls[0]["key"] == key["id"]
    assert subject not in log  # the access log names routes, never a subject


def test_readyz_is_503_at_once_while_neo4j_cannot_be_reached():
    from starlette.testclient import TestClient

    from graphmem.api import GraphMem
    from graphmem.http import HttpConfig, create_app

    port = free_port()
    settings = Settings.from_env(neo4j_uri=f"bolt://127.0.0.1:{port}", embedder="hashing")
    mem = GraphMem.connect(settings, migrate=False, check_index=False)
    try:
        with TestClient(create_app(lambda: mem, HttpConfig(timeout=2))) as client:
            began = time.monotonic()
            response = client.get("/readyz")
            took = time.monotonic() - began
    finally:
        mem.close()
    assert response.status_code == 503 and took < 5  # the driver alone would retry for 30 s
    error = response.json()["error"]
    assert error["code"] == "not_ready"
    assert error["message"].startswith(f"connectivity: Neo4j at bolt://127.0.0.1:{port} is unreachable")


needs_chromium = pytest.mark.skipif(
    not (Path(CHROMIUM).exists() and Path(CHROMEDRIVER).exists()),
    reason="needs Debian's chromium and chromium-driver (.ci/run installs them)",
)


def chromium(profile: Path):
    """A headless Chromium driven by selenium, its console log kept (CSP refusals show there)."""
    webdriver = pytest.importorskip("selenium.webdriver")
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    for flag in (
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--no-first-run",
        "--window-size=1100,1500",
        f"--user-data-dir={profile}",
    ):
        options.add_argument(flag)
    return webdriver.Chrome(service=webdriver.ChromeService(executable_path=CHROMEDRIVER), options=options)


@needs_chromium
def test_the_api_docs_in_headless_chromium(alice, tmp_path):
    """/docs shows every operation with nothing fetched from elsewhere and nothing the CSP refused."""
    pytest.importorskip("selenium.webdriver")
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as seen
    from selenium.webdriver.support.ui import WebDriverWait

    with served() as server:
        operations = sum(len(methods) for methods in call("GET", server.url + "/openapi.json")[1]["paths"].values())
        driver = chromium(tmp_path / "profile")
        try:
            driver.get(server.url + "/docs")
            WebDriverWait(driver, 30).until(seen.presence_of_element_located((By.CSS_SELECTOR, ".opblock")))
            assert len(driver.find_elements(By.CSS_SELECTOR, ".opblock")) == operations
            assert "/v1/subjects/{subject}/recall" in driver.find_element(By.ID, "swagger-ui").text
            loaded = driver.execute_script("return performance.getEntriesByType('resource').map(e => e.name)")
            assert loaded and all(url.startswith(server.url + "/") for url in loaded), loaded
            assert [entry for entry in driver.get_log("browser") if entry["level"] == "SEVERE"] == []
        finally:
            driver.quit()


@needs_chromium
def test_the_memory_browser_in_headless_chromium(alice, tmp_path):
    pytest.importorskip("selenium.webdriver")
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as seen
    from selenium.webdriver.support.ui import WebDriverWait

    subject, key = alice
    base = f"/v1/subjects/{subject.replace(':', '%3A')}"
    with served() as server:
        url = server.url
        # Paris, then Berlin, then a job asserted and retracted: superseded, current and retracted values.
        episodes = [
            {"occurred_at": "2019-01-01", "raw": "I live in Paris.", "facts": [fact("Paris", "2019-01-01")]},
            {"occurred_at": "2022-01-01", "raw": "I moved to Berlin.", "facts": [fact("Berlin", "2022-01-01")]},
            {
                "occurred_at": "2022-03-01",
                "raw": "I work at Acme.",
                "facts": [
                    {
                        "subject": "Alice",
                        "predicate": "works_at",
                        "object": "Acme",
                        "content": "Alice works at Acme",
                        "valid_at": "2022-03-01",
                        "single_valued": True,
                    }
                ],
            },
        ]
        retraction = {
            "occurred_at": "2022-04-01",
            "raw": "I never worked at Acme.",
            "facts": [
                {
                    "subject": "Alice",
                    "predicate": "works_at",
                    "object": "Acme",
                    "content": "Alice works at Acme",
                    "op": "retract",
                }
            ],
        }
        assert call("POST", url + base + "/episodes", key["key"], {"episodes": episodes})[0] == 200
        # a later write: within one write the retraction would reach the fact before any unit shows it
        assert call("POST", url + base + "/episodes", key["key"], {"episodes": [retraction]})[0] == 200

        driver = chromium(tmp_path / "profile")
        try:
            wait = WebDriverWait(driver, 20)
            driver.get(url + "/")
            driver.find_element(By.ID, "key").send_keys(key["key"])
            driver.find_element(By.ID, "key-use").click()
            wait.until(seen.text_to_be_present_in_element((By.ID, "whoami"), key["id"]))
            assert driver.find_element(By.ID, "subject").get_attribute("value") == subject
            assert driver.execute_script("return sessionStorage.getItem('graphmem.key')") == key["key"]
            assert driver.execute_script("return localStorage.length") == 0

            driver.find_element(By.ID, "query").send_keys("where does Alice live?")
            driver.find_element(By.ID, "as-of").send_keys("2020-06-01")
            driver.find_element(By.ID, "search-go").click()
            wait.until(seen.text_to_be_present_in_element((By.ID, "status"), "as of 2020-06-01"))
            hits = driver.find_elements(By.CSS_SELECTOR, "#hits .hit .content")
            assert hits and hits[0].text == "Alice lives in Paris"
            assert "true 2019-01-01 → 2022-01-01" in driver.find_element(By.CSS_SELECTOR, "#hits .hit .meta").text

            driver.find_element(By.CSS_SELECTOR, "#hits .hit .explain").click()
            wait.until(seen.text_to_be_present_in_element((By.ID, "explanation"), "I live in Paris."))
            driver.find_element(By.CSS_SELECTOR, "#explanation .open-timeline").click()
            wait.until(seen.presence_of_element_located((By.CSS_SELECTOR, "#timeline-chart svg")))
            bars = {
                b.get_attribute("data-unit"): b.get_attribute("class")
                for b in driver.find_elements(By.CSS_SELECTOR, "#timeline-chart rect.bar")
            }
            states = sorted(c.split()[1] for c in bars.values())
            assert states == ["current", "retracted", "superseded"], states
            labels = [t.text for t in driver.find_elements(By.CSS_SELECTOR, "#timeline-chart text.value")]
            assert labels == ["Alice lives in Paris", "Alice lives in Berlin", "Alice works at Acme"]
            slots = [t.text for t in driver.find_elements(By.CSS_SELECTOR, "#timeline-chart text.slot")]
            assert slots == ["Alice lives_in", "Alice works_at"]
            marks = driver.find_elements(By.CSS_SELECTOR, "#timeline-chart polygon.decision")
            assert len(marks) >= 4 and driver.find_elements(By.CSS_SELECTOR, "#timeline-chart polygon.delete")

            driver.find_element(By.ID, "decisions-go").click()
            wait.until(seen.text_to_be_present_in_element((By.ID, "status"), "decision(s)"))
            rows = driver.find_elements(By.CSS_SELECTOR, "#decisions tbody tr")
            cells = [[td.text for td in r.find_elements(By.TAG_NAME, "td")] for r in rows]
            assert len(rows) >= 4 and {c[4] for c in cells} == {key["id"]}
            assert all(c[2] for c in cells)  # every row names its facts (decided at, op, facts, reason, by)

            # Memory text is shown as text: markup in it is never parsed into the page.
            hostile = "<img src=x onerror=\"document.title='pwned'\">"
            call(
                "POST",
                url + base + "/episodes",
                key["key"],
                {
                    "episodes": [
                        {
                            "occurred_at": "2023-01-01",
                            "raw": hostile,
                            "facts": [{"subject": "Alice", "predicate": "likes", "object": "tea", "content": hostile}],
                        }
                    ]
                },
            )
            driver.find_element(By.ID, "as-of").clear()
            driver.find_element(By.ID, "query").clear()
            driver.find_element(By.ID, "query").send_keys("img onerror")
            driver.find_element(By.ID, "search-go").click()
            wait.until(seen.text_to_be_present_in_element((By.ID, "hits"), hostile))
            assert driver.title != "pwned" and not driver.find_elements(By.CSS_SELECTOR, "#hits img")

            driver.find_element(By.ID, "entity").clear()
            driver.find_element(By.ID, "entity").send_keys("Alice")
            driver.find_element(By.ID, "timeline-go").click()
            wait.until(seen.text_to_be_present_in_element((By.ID, "status"), "value(s) on the timeline"))
            shot = tmp_path / "memory-browser.png"
            driver.get_screenshot_as_file(str(shot))
            assert shot.stat().st_size > 10_000
            if os.environ.get("GRAPHMEM_SCREENSHOT"):  # keep it for a person to look at
                shutil.copy(shot, os.environ["GRAPHMEM_SCREENSHOT"])
        finally:
            driver.quit()
