"""The LLM extractor and policy against a stub OpenAI-compatible server (no Neo4j, no network):
structured output requests, retries on invalid output, and the policy's validation of what the
model says."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

import openai
import pytest

from graphmem.adapters.memory import InMemoryIndex, InMemoryStore
from graphmem.api import GraphMem
from graphmem.api.wiring import make_extractors, make_policy
from graphmem.domain.models import Candidate, Episode, Op, Scope, UnitFilter
from graphmem.embed import HashingEmbedder
from graphmem.errors import BackendError, ConfigurationError
from graphmem.extract import FactsExtractor, NoneExtractor
from graphmem.extract.llm import FACTS_SCHEMA, LLMExtractor
from graphmem.extract.rule import RuleExtractor
from graphmem.llm.client import make_client
from graphmem.llm.structured import structured
from graphmem.policy.llm import LLMPolicy
from graphmem.settings.config import Settings
from tests.stub_openai import StubOpenAI, error

MODEL = "test-model"
ALICE = Scope.parse("user:alice")
MARCH = datetime(2024, 3, 15, 12, 0, tzinfo=UTC)


class _Server(StubOpenAI):
    """POST /v1/chat/completions answers from a queue: a str is the assistant's content, a
    (status, message) tuple an error response. Every request body is recorded."""

    def __init__(self) -> None:
        self.queue: list[Any] = []
        super().__init__(self._respond)

    def _respond(self, path: str, body: dict) -> tuple[int, dict]:
        if path != "/v1/chat/completions":
            return error(404, f"no route {path}")
        if not self.queue:
            return error(500, "stub queue is empty")
        item = self.queue.pop(0)
        if isinstance(item, tuple):
            return error(*item)
        return 200, {
            "id": "chatcmpl-test",
            "object": "chat.completion",
            "created": 0,
            "model": body["model"],
            "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": item}}],
        }

    def push(self, *items: Any) -> None:
        self.queue.extend(json.dumps(i) if isinstance(i, dict) else i for i in items)


@pytest.fixture
def server():
    srv = _Server()
    yield srv
    srv.close()


@pytest.fixture
def client(server: _Server) -> openai.OpenAI:
    return make_client(Settings(openai_base_url=server.url, openai_api_key=""), "test", timeout=10)


@pytest.fixture
def mem(client: openai.OpenAI):
    store = InMemoryStore()
    index = InMemoryIndex(store, HashingEmbedder())
    extractors = {
        "facts": FactsExtractor(),
        "rule": RuleExtractor(),
        "none": NoneExtractor(),
        "llm": LLMExtractor(client, MODEL),
    }
    return GraphMem(store, index, policy=LLMPolicy(client, MODEL), extractors=extractors)


def fact(
    content: str,
    obj: str | None,
    predicate: str = "lives_in",
    subject: str = "I",
    valid_at: str | None = "2024-03-01",
    kind: str = "semantic",
    single: bool = True,
) -> dict:
    return {
        "content": content,
        "subject": subject,
        "predicate": predicate,
        "object": obj,
        "single_valued": single,
        "valid_at": valid_at,
        "kind": kind,
        "confidence": 0.9,
    }


def answer(op: str, target: str | None = None, reason: str = "because", confidence: float = 0.8) -> dict:
    return {"op": op, "target_id": target, "reason": reason, "confidence": confidence}


def units(mem: GraphMem) -> list:
    return mem.store.list_units(ALICE, UnitFilter())


# -- extractor --------------------------------------------------------------------------------


def test_extractor_tells_an_ending_from_a_correction(server: _Server, client: openai.OpenAI) -> None:
    ended = fact("alice no longer works at Siemens", "Siemens", "works_at", valid_at=None) | {
        "op": "end",
        "ended_at": "2024-02-01",
    }
    never = fact("alice never lived in Lyon", "Lyon", valid_at=None) | {"op": "retract", "ended_at": None}
    server.push({"facts": [ended, never]})
    episode = Episode(scope=ALICE, occurred_at=MARCH, raw="I left Siemens in February. I never lived in Lyon.")
    end, retract = LLMExtractor(client, MODEL).extract(episode)
    assert (end.op, end.valid_at, end.invalid_at) == ("end", None, datetime(2024, 2, 1, tzinfo=UTC))
    assert (retract.op, retract.valid_at, retract.invalid_at) == ("retract", None, None)
    assert '"end"' in json.dumps(FACTS_SCHEMA)  # the schema the model is given offers the distinction


def test_extractor_turns_a_move_into_a_candidate(server: _Server, client: openai.OpenAI) -> None:
    server.push({"facts": [fact("alice lives in Berlin", "Berlin")]})
    episode = Episode(scope=ALICE, occurred_at=MARCH, raw="I moved to Berlin")
    extractor = LLMExtractor(client, MODEL)
    assert extractor.version == "llm-test-model-2"
    [c] = extractor.extract(episode)
    assert isinstance(c, Candidate)
    assert c.scope == ALICE and c.content == "alice lives in Berlin"
    assert c.triple is not None
    assert (c.triple.subject, c.triple.predicate, c.triple.object, c.triple.single_valued) == (
        "alice",
        "lives_in",
        "Berlin",
        True,
    )
    assert c.valid_at == datetime(2024, 3, 1, tzinfo=UTC) and c.valid_at.tzinfo is not None
    assert c.confidence == 0.9
    user = json.loads(server.requests[0]["body"]["messages"][1]["content"])
    assert user["message"] == "I moved to Berlin" and user["speaker"] == "alice"
    assert user["message_date"] == "2024-03-15"


def test_extractor_defaults_and_clamps(server: _Server, client: openai.OpenAI) -> None:
    loose = fact("Bob likes tea", "tea", predicate="Likes", subject="Bob", valid_at=None, single=False)
    loose["confidence"] = 7
    server.push(
        {
            "facts": [
                loose,
                fact("alice moved", None, valid_at="2024-03-02T10:00:00+02:00", kind="episodic", predicate="moved"),
            ]
        }
    )
    a, b = LLMExtractor(client, MODEL).extract(Episode(scope=ALICE, occurred_at=MARCH, raw="stuff"))
    assert a.valid_at is None and a.confidence == 1.0 and a.triple.predicate == "likes"
    assert a.triple.subject == "Bob"
    assert b.valid_at == datetime(2024, 3, 2, 8, 0, tzinfo=UTC)
    assert b.kind.value == "episodic" and b.triple.object is None


def test_extractor_through_the_pipeline(server: _Server, mem: GraphMem) -> None:
    server.push({"facts": [fact("alice lives in Berlin", "Berlin")]}, answer("ADD", reason="new city"))
    report = mem.remember("I moved to Berlin", subject="user:alice", at=MARCH, extractor="llm")
    assert report.decisions == {"ADD": 1} and not report.failed
    [u] = units(mem)
    assert u.content == "alice lives in Berlin"
    assert u.source.extractor_version == "llm-test-model-2"
    assert u.time.valid_at == datetime(2024, 3, 1, tzinfo=UTC)
    [d] = mem.store.list_decisions(ALICE)
    assert (d.policy, d.reason, d.confidence) == ("llm", "new city", 0.8)


def test_invalid_json_twice_then_valid_succeeds_with_three_requests(server: _Server, client: openai.OpenAI) -> None:
    server.push(
        "not json at all",
        json.dumps({"facts": [{"content": "x"}]}),
        {"facts": [fact("alice lives in Berlin", "Berlin")]},
    )
    [c] = LLMExtractor(client, MODEL).extract(Episode(scope=ALICE, occurred_at=MARCH, raw="I moved to Berlin"))
    assert c.triple.object == "Berlin"
    assert len(server.requests) == 3
    # Each retry shows the model its previous reply and what was wrong with it.
    second, third = (r["body"]["messages"] for r in server.requests[1:])
    assert second[2] == {"role": "assistant", "content": "not json at all"}
    assert "not JSON" in second[3]["content"]
    assert "schema validation failed" in third[-1]["content"]


def test_always_invalid_output_keeps_the_episode_and_records_the_failure(server: _Server, mem: GraphMem) -> None:
    server.push("nope", "still nope", "{broken")
    report = mem.remember("I moved to Berlin", subject="user:alice", at=MARCH, extractor="llm", episode_id="ep-1")
    assert len(server.requests) == 3
    assert mem.store.get_episode("ep-1", ALICE) is not None
    assert units(mem) == []
    [d] = mem.store.list_decisions(ALICE)
    assert d.op is Op.NOOP and d.episode_id == "ep-1"
    assert "llm-test-model-2 failed" in d.reason and "model output invalid after 3 attempts" in d.reason
    assert report.failed and report.failed[0][0] == "ep-1"


# -- policy -----------------------------------------------------------------------------------


def test_policy_update_with_a_real_neighbour_supersedes(server: _Server, mem: GraphMem) -> None:
    server.push(answer("ADD", reason="first home"))
    first = mem.remember("I live in Paris", subject="user:alice", at=datetime(2023, 1, 1, tzinfo=UTC))
    [old_id] = first.unit_ids
    server.push(answer("UPDATE", target=old_id, reason="alice moved from Paris to Berlin", confidence=1.5))
    second = mem.remember("I moved to Berlin", subject="user:alice", at=MARCH)
    assert second.decisions == {"UPDATE": 1}
    # The neighbour was shown to the model with its id.
    shown = json.loads(server.requests[-1]["body"]["messages"][1]["content"])
    assert [n["id"] for n in shown["existing_memories"]] == [old_id]
    old = mem.store.get_unit(old_id, ALICE)
    assert old.time.expired_at is not None and old.time.invalid_at == MARCH
    [new_id] = second.unit_ids
    assert [u.id for u in units(mem)] == [new_id]
    update = next(d for d in mem.store.list_decisions(ALICE) if d.op is Op.UPDATE)
    assert update.target_id == old_id and update.confidence == 1.0 and update.invalid_at == MARCH


def test_policy_invented_target_becomes_noop(server: _Server, mem: GraphMem) -> None:
    server.push(answer("ADD"))
    mem.remember("I live in Paris", subject="user:alice")
    server.push(answer("UPDATE", target="made-up-id", reason="moved"))
    report = mem.remember("I moved to Berlin", subject="user:alice")
    assert report.decisions == {"NOOP": 1} and not report.unit_ids
    noop = next(d for d in mem.store.list_decisions(ALICE) if d.op is Op.NOOP)
    assert noop.reason == "LLM named target made-up-id, not one of the neighbours shown"
    assert [u.content for u in units(mem)] == ["I live in Paris"]


def test_policy_empty_reason_becomes_noop(server: _Server, mem: GraphMem) -> None:
    server.push(answer("ADD", reason="   "))
    report = mem.remember("I live in Paris", subject="user:alice")
    assert report.decisions == {"NOOP": 1} and units(mem) == []
    [d] = mem.store.list_decisions(ALICE)
    assert d.reason == "LLM gave no reason for ADD" and d.policy == "llm"


def test_policy_model_failure_becomes_noop(server: _Server, client: openai.OpenAI) -> None:
    server.push((400, "model not found"))
    policy = LLMPolicy(client, MODEL)
    c = Candidate(scope=ALICE, content="alice lives in Berlin")
    d = policy.reconcile(c, [])
    assert d.op is Op.NOOP and d.reason.startswith("LLM policy failed: ")
    assert "400" in d.reason and "model not found" in d.reason
    assert d.scope == ALICE and d.candidate == c.content and d.confidence == 0.0


def test_policy_rejects_unknown_op_and_missing_target(server: _Server, client: openai.OpenAI) -> None:
    policy = LLMPolicy(client, MODEL)
    c = Candidate(scope=ALICE, content="alice lives in Berlin")
    server.push(answer("MERGE"), answer("DELETE", target=None))
    assert policy.reconcile(c, []).reason == "LLM gave unknown op 'MERGE'"
    d = policy.reconcile(c, [])
    assert d.op is Op.NOOP and "DELETE without a target" in d.reason


def test_exact_duplicate_never_reaches_the_model(server: _Server, mem: GraphMem) -> None:
    server.push(answer("ADD"))
    mem.remember("I live in Paris", subject="user:alice")
    assert len(server.requests) == 1
    report = mem.remember("I live in Paris", subject="user:alice")
    assert len(server.requests) == 1  # zero requests for the duplicate
    assert report.decisions == {"NOOP": 1}
    dup = next(d for d in mem.store.list_decisions(ALICE) if d.op is Op.NOOP)
    assert dup.reason == "restates the current 'I live in Paris'"


def test_requests_carry_a_strict_json_schema(server: _Server, mem: GraphMem) -> None:
    server.push({"facts": [fact("alice lives in Berlin", "Berlin")]}, answer("ADD"))
    mem.remember("I moved to Berlin", subject="user:alice", extractor="llm")
    assert [r["path"] for r in server.requests] == ["/v1/chat/completions"] * 2
    names = []
    for r in server.requests:
        body = r["body"]
        assert body["model"] == MODEL and body["temperature"] == 0
        fmt = body["response_format"]
        assert fmt["type"] == "json_schema" and fmt["json_schema"]["strict"] is True
        schema = fmt["json_schema"]["schema"]
        assert schema["additionalProperties"] is False and set(schema["required"]) == set(schema["properties"])
        names.append(fmt["json_schema"]["name"])
    assert names == ["extracted_facts", "memory_decision"]
    item = server.requests[0]["body"]["response_format"]["json_schema"]["schema"]["properties"]["facts"]["items"]
    assert set(item["required"]) == set(item["properties"]) and item["additionalProperties"] is False
    assert item["properties"]["valid_at"]["type"] == ["string", "null"]
    # The schema is the validator's own: every field the validator reads is asked for.
    assert set(item["properties"]) == {
        "content",
        "subject",
        "predicate",
        "object",
        "single_valued",
        "valid_at",
        "op",
        "ended_at",
        "kind",
        "confidence",
    }
    assert item["properties"]["kind"]["enum"] == ["semantic", "episodic", "procedural"]
    assert not any(k in json.dumps(item) for k in ('"default"', '"minLength"', '"maxLength"', '"$ref"'))


# -- the shared helper ------------------------------------------------------------------------


def test_structured_transient_errors_are_retried_by_the_client(server: _Server, client: openai.OpenAI) -> None:
    server.push((503, "overloaded"), (429, "slow down"), {"ok": True})
    data = structured(client, MODEL, "sys", "user", "probe", {"type": "object"})
    assert data == {"ok": True} and len(server.requests) == 3


def test_structured_gives_up_on_persistent_errors(server: _Server, client: openai.OpenAI) -> None:
    server.push(*[(500, "down")] * 5)
    with pytest.raises(BackendError, match=r"failed \(500\): down") as info:
        structured(client, MODEL, "sys", "user", "probe", {"type": "object"})
    assert len(server.requests) == 5  # the first try and the client's four retries
    assert "\n" not in str(info.value) and info.value.__cause__ is not None
    server.push((401, "bad key"))
    with pytest.raises(BackendError, match=r"failed \(401\): bad key"):
        structured(client, MODEL, "sys", "user", "probe", {"type": "object"})
    assert len(server.requests) == 6  # a 4xx is not retried


def test_make_client_needs_a_key_or_a_base_url() -> None:
    with pytest.raises(ConfigurationError, match="the llm policy needs an OpenAI-compatible endpoint"):
        make_client(Settings(openai_api_key="", openai_base_url=None), "the llm policy")
    c = make_client(Settings(openai_base_url="http://127.0.0.1:9/v1", openai_api_key=""), "test")
    assert c.max_retries == 4 and c.api_key == "unused"


def test_wiring_adds_the_llm_parts_only_when_an_endpoint_is_configured(server: _Server) -> None:
    offline = Settings(openai_base_url=None, openai_api_key="", policy="rule")
    assert set(make_extractors(offline)) == {"facts", "rule", "none"}
    assert make_policy(offline).name == "rule"
    online = Settings(openai_base_url=server.url, openai_api_key="", policy="llm", llm_model=MODEL)
    assert set(make_extractors(online)) == {"facts", "rule", "none", "llm"}
    policy = make_policy(online)
    assert isinstance(policy, LLMPolicy) and policy.model == MODEL
