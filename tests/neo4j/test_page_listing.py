"""The memory browser's relevance, cleared state and entity browser (issue 42, item 6), in
headless Chromium against `graphmem serve` on the test Neo4j."""

from __future__ import annotations

import re

import pytest

pytest.importorskip("fastapi")

from tests.neo4j import test_http
from tests.neo4j.test_http import call, chromium, fact, needs_chromium, served

pytestmark = pytest.mark.neo4j
alice = test_http.alice  # the fixture: a fresh subject and a key for it


def knows(n: int) -> dict:
    return {
        "subject": "Alice",
        "predicate": "knows",
        "object": f"Person {n:02d}",
        "content": f"Alice knows Person {n:02d}",
    }


@needs_chromium
def test_relevance_cleared_state_and_entity_browser_in_headless_chromium(alice, tmp_path):
    pytest.importorskip("selenium.webdriver")
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as seen
    from selenium.webdriver.support.ui import WebDriverWait

    subject, key = alice
    base = f"/v1/subjects/{subject.replace(':', '%3A')}"
    episodes = [
        {"occurred_at": "2019-01-01", "raw": "I live in Paris.", "facts": [fact("Paris", "2019-01-01")]},
        {"occurred_at": "2022-01-01", "raw": "I moved to Berlin.", "facts": [fact("Berlin", "2022-01-01")]},
        # 24 people: with Alice, Paris, Berlin and "Person" the entities fill two pages of 20
        {"occurred_at": "2022-02-01", "raw": "People I know.", "facts": [knows(n) for n in range(24)]},
    ]
    with served() as server:
        url = server.url
        for item in episodes:
            assert call("POST", url + base + "/episodes", key["key"], {"episodes": [item]})[0] == 200
        driver = chromium(tmp_path / "profile")
        try:
            wait = WebDriverWait(driver, 20)
            driver.get(url + "/")
            driver.find_element(By.ID, "key").send_keys(key["key"])
            driver.find_element(By.ID, "key-use").click()
            wait.until(seen.text_to_be_present_in_element((By.ID, "whoami"), key["id"]))

            # Relevance is the calibrated confidence, never the raw fusion score.
            driver.find_element(By.ID, "query").send_keys("where does Alice live?")
            driver.find_element(By.ID, "search-go").click()
            wait.until(seen.text_to_be_present_in_element((By.ID, "status"), "hit(s)"))
            shown = [r.text for r in driver.find_elements(By.CSS_SELECTOR, "#hits .hit .relevance")]
            _, answer = call("POST", url + base + "/recall", key["key"], {"query": "where does Alice live?"})
            assert shown == [f"confidence {round(100 * h['confidence'])}%" for h in answer["hits"]]
            scores = {f"{h['score']:.4f}"[:5] for h in answer["hits"]}
            assert not any(s in driver.find_element(By.ID, "hits").text for s in scores)

            # The entity browser: two pages, then one entity's facts and its timeline picture.
            driver.find_element(By.ID, "entities-go").click()
            wait.until(seen.text_to_be_present_in_element((By.ID, "status"), "20 entities"))
            driver.find_element(By.ID, "entities-more").click()
            wait.until(seen.text_to_be_present_in_element((By.ID, "status"), "28 entities"))
            assert not driver.find_element(By.ID, "entities-more").is_displayed()
            names = [b.text for b in driver.find_elements(By.CSS_SELECTOR, "#entity-list .entity-open")]
            assert names == sorted(names, key=str.casefold) and len(set(names)) == 28  # "Person" too: the texts name it
            rows = {
                r.find_element(By.CSS_SELECTOR, ".entity-open").text: r.find_element(By.CSS_SELECTOR, ".facts").text
                for r in driver.find_elements(By.CSS_SELECTOR, "#entity-list tbody tr")
            }
            assert rows["Alice"] == "25" and rows["Paris"] == "0" and rows["Berlin"] == "1"
            driver.find_element(By.ID, "entity-prefix").send_keys("pa")
            driver.find_element(By.ID, "entities-go").click()
            wait.until(seen.text_to_be_present_in_element((By.ID, "status"), "1 entity"))
            driver.find_element(By.CSS_SELECTOR, "#entity-list .entity-open").click()
            wait.until(seen.text_to_be_present_in_element((By.ID, "entity-name"), "Paris"))
            assert [f.text for f in driver.find_elements(By.CSS_SELECTOR, "#entity-facts .content")] == []
            bars = driver.find_elements(By.CSS_SELECTOR, "#entity-chart svg rect.bar")
            assert [b.get_attribute("class") for b in bars] == ["bar superseded"]
            driver.find_element(By.ID, "entity-prefix").clear()
            driver.find_element(By.ID, "entity-prefix").send_keys("alice")
            driver.find_element(By.ID, "entities-go").click()
            wait.until(seen.text_to_be_present_in_element((By.ID, "status"), "1 entity"))
            driver.find_element(By.CSS_SELECTOR, "#entity-list .entity-open").click()
            wait.until(seen.text_to_be_present_in_element((By.ID, "status"), "25 fact(s) hold now"))
            facts = [f.text for f in driver.find_elements(By.CSS_SELECTOR, "#entity-facts .content")]
            assert "Alice lives in Berlin" in facts and "Alice lives in Paris" not in facts
            states = sorted(
                b.get_attribute("class") for b in driver.find_elements(By.CSS_SELECTOR, "#entity-chart rect.bar")
            )
            assert states.count("bar superseded") == 1 and states.count("bar current") == 25

            # A failed request clears what the last answers showed: a revoked key's search.
            assert driver.find_elements(By.CSS_SELECTOR, "#hits .hit")
            driver.execute_script("sessionStorage.setItem('graphmem.key', 'gm_bad_key')")
            driver.find_element(By.ID, "search-go").click()
            wait.until(seen.text_to_be_present_in_element((By.ID, "status"), "401"))
            assert not driver.find_elements(By.CSS_SELECTOR, "#hits .hit")
            assert not driver.find_elements(By.CSS_SELECTOR, "#entity-list tbody tr")
            assert not driver.find_elements(By.CSS_SELECTOR, "#entity-chart")
            assert "error" in driver.find_element(By.ID, "status").get_attribute("class")

            # A change of key clears too, even when the new key works.
            driver.find_element(By.ID, "key").send_keys(key["key"])
            driver.find_element(By.ID, "key-use").click()
            wait.until(seen.text_to_be_present_in_element((By.ID, "status"), "ready"))
            driver.find_element(By.ID, "search-go").click()
            wait.until(seen.text_to_be_present_in_element((By.ID, "status"), "hit(s)"))
            assert driver.find_elements(By.CSS_SELECTOR, "#hits .hit")
            driver.find_element(By.ID, "key").send_keys(key["key"])
            driver.find_element(By.ID, "key-use").click()
            wait.until(seen.text_to_be_present_in_element((By.ID, "status"), "ready"))
            assert not driver.find_elements(By.CSS_SELECTOR, "#hits .hit")
            assert re.search(r"key \S+", driver.find_element(By.ID, "whoami").text)
        finally:
            driver.quit()
