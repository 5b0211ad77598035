"""How a question is read (graphmem.pipelines.recall.readings): with its first person as a named
user's name beside the words as said, each reading with the time it names taken out whole; and
the count a recall asks beside it, in a forked child and at the interpreter's exit."""

from __future__ import annotations

import multiprocessing
import subprocess
import sys

import pytest

from graphmem import GraphMem
from graphmem.adapters.memory import InMemoryIndex, InMemoryStore
from graphmem.domain.models import MAX_QUERY_CHARS, Scope, search_terms
from graphmem.domain.timewords import find_window
from graphmem.embed import HashingEmbedder
from graphmem.pipelines.recall import readings
from tests.factories import EPOCH

KIM = [Scope.parse("user:kim")]


@pytest.mark.parametrize(
    "question",
    [
        "Where did I live in 2021?",
        "What did I do last week?",
        "Did I go out last night?",
        "Where was my office in June 2023?",
    ],
)
def test_each_reading_leaves_out_the_time_it_names_and_nothing_else(question):
    said, named = readings(question, KIM)
    asked = [set(search_terms(find_window(q, EPOCH).outside(q))) for q in (said, named)]
    assert asked[1] - asked[0] == {"kim"} and asked[0] <= asked[1]


def test_a_question_is_read_once_where_no_one_named_is_its_first_person():
    assert readings("Where do I live?", [Scope.parse("user:u-7f3a91c2")]) == ["Where do I live?"]
    assert readings("Where do I live?", [Scope.parse("user:kim"), Scope.parse("user:lee")]) == ["Where do I live?"]
    assert readings("Where does Kim live?", KIM) == ["Where does Kim live?"]


def test_a_reading_never_grows_past_what_a_question_may_be():
    name = " ".join(["A" + "a" * 48] * 4)
    question = ("I " * (MAX_QUERY_CHARS // 2))[:MAX_QUERY_CHARS]
    assert readings(question, [Scope.parse(f"user:{name}")]) == [question]


def memory() -> GraphMem:
    store = InMemoryStore()
    mem = GraphMem(store, InMemoryIndex(store, HashingEmbedder()))
    mem.remember("I moved to Graz.", "user:kim", at=EPOCH)
    return mem


def _child(out) -> None:
    out.put([h.unit.content for h in memory().recall("where?", "user:kim")])


def test_a_forked_child_recalls():
    memory().recall("where?", "user:kim")  # the parent's pool has a thread
    out = multiprocessing.get_context("fork").Queue()
    child = multiprocessing.get_context("fork").Process(target=_child, args=(out,))
    child.start()
    child.join(60)
    alive = child.is_alive()
    if alive:
        child.kill()
    assert not alive and out.get(timeout=5) == ["I moved to Graz."]


def test_a_recall_at_the_interpreters_exit_answers():
    script = (
        "import atexit\n"
        "from tests.unit.test_recall_readings import memory\n"
        "mem = memory()\n"
        "atexit.register(lambda: print([h.unit.content for h in mem.recall('where?', 'user:kim')]))\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert "['I moved to Graz.']" in done.stdout, done.stderr
