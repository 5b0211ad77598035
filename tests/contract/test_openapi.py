"""schemathesis against the real app (in process, over the in-memory adapters): every
operation of /openapi.json, a bounded number of generated requests each, with all of its
checks (statuses, content types, headers and bodies conform to the schema; schema-valid data
accepted, invalid data refused; auth not ignored; undeclared methods 405...): 0 failures."""

from __future__ import annotations

from datetime import UTC, datetime
from urllib.parse import unquote

import pytest

pytest.importorskip("fastapi")
schemathesis = pytest.importorskip("schemathesis")

from hypothesis import HealthCheck, settings  # noqa: E402
from schemathesis import GenerationMode  # noqa: E402

from graphmem import GraphMem  # noqa: E402
from graphmem.adapters.memory import InMemoryIndex, InMemoryStore  # noqa: E402
from graphmem.domain.limits import MAX_BLOCK_TOKENS, MAX_HOPS, MAX_K  # noqa: E402
from graphmem.domain.models import MemoryBlock, Scope  # noqa: E402
from graphmem.embed import HashingEmbedder  # noqa: E402
from graphmem.errors import one_line  # noqa: E402
from graphmem.http import HttpConfig, create_app  # noqa: E402
from graphmem.pipelines.assemble import SECTIONS  # noqa: E402
from tests.examples import examples  # noqa: E402

#: Generated requests per operation and phase: the whole run stays near a minute on 2 cores.
EXAMPLES = 25
#: The subject the memory holds (what responses are checked on when a request names it).
SUBJECT = "user:alice"


class ByLength:
    """A reranker (a served GraphMem has one: ``graphmem.api.wiring.make_reranker``) without model
    files: longer texts first."""

    name = "by-length"

    def score(self, query: str, texts: list[str]) -> list[float]:
        return [float(len(t)) for t in texts]


_store = InMemoryStore()
MEM = GraphMem(_store, InMemoryIndex(_store, HashingEmbedder()), reranker=ByLength())
_, TOKEN = MEM.create_key([], admin=True)
for when, city in ((2020, "Paris"), (2022, "Berlin")):
    MEM.remember(f"Alice lives in {city}.", SUBJECT, at=datetime(when, 1, 1, tzinfo=UTC))
#: An import body: the first record of the subject's export (its header), taken as it is.
EXPORT = next(iter(MEM.export(SUBJECT)))
schema = schemathesis.openapi.from_asgi("/openapi.json", create_app(lambda: MEM, HttpConfig(max_body=64 * 1024)))


def takes(check, **values) -> bool:
    try:
        check(**values)
    except ValueError:
        return False
    return True


def label_taken(label: str) -> bool:
    """A block label is visible text, and not the heading of one of the context's sections."""
    return (
        takes(MemoryBlock, scope=Scope.parse(SUBJECT), label=label, value="", token_budget=1)
        and one_line(label).lstrip("# ").casefold() not in SECTIONS
    )


@schema.hook
def map_case(context, case):
    """A valid case also keeps the rules no schema can say: a subject id and a block label are
    visible text (the id in one script, the label no section's heading), a project no word that
    reads as none, and the llm
    extractor needs an endpoint (this server has none); history names one of entity and unit_id;
    an erasure is confirmed; a listing's cursor is one a page gave; a block change is an admin's
    (a read-only block, a budget), and a block has a small budget (a subject's blocks total at
    most 100,000 tokens); an import is an export. Each rule's refusal is tested in
    test_http.py; here a valid case is made to keep it, so its answer must be a success."""
    if case.meta is None:
        return case
    if case.meta.generation.mode is not GenerationMode.POSITIVE:
        # A list of at most one item in a query is sent as no parameter or as one: a valid
        # request, which schemathesis then reports as invalid data accepted. On the wire a list
        # is a parameter given twice, which the API refuses (context.plain_query).
        for name, value in (case.query or {}).items():
            if isinstance(value, list) and len(value) < 2:
                case.query[name] = ["a", "b"]
        return case
    # Path parameters come percent-encoded, as the API reads them.
    path, query = case.path_parameters or {}, case.query if case.query is not None else {}
    if "subject" in path:
        try:
            Scope.parse(unquote(path["subject"]), query.get("project"))
        except ValueError:
            path["subject"] = SUBJECT
            query.pop("project", None)
    if "label" in path and not label_taken(unquote(path["label"])):
        path["label"] = "persona"
    where = (case.method, case.path)
    if where == ("POST", "/v1/subjects/{subject}/episodes") and case.body.get("extractor") == "llm":
        case.body = {**case.body, "extractor": None}
    elif where == ("GET", "/v1/subjects/{subject}/history") and ("entity" in query) == ("unit_id" in query):
        query.pop("unit_id", None)
        query["entity"] = "Alice"
    elif where == ("DELETE", "/v1/subjects/{subject}"):
        query["confirm"] = True
    elif where == ("PUT", "/v1/subjects/{subject}/blocks/{label}"):
        case.body = {
            **case.body,
            "admin": True,
            "truncate": True,
            "token_budget": min(case.body.get("token_budget") or 50, 50),
        }
    elif where == ("DELETE", "/v1/subjects/{subject}/blocks/{label}"):
        query["admin"] = True
    elif where == ("POST", "/v1/import"):
        case.media_type, case.body = "application/json", EXPORT
    elif where in (("GET", "/v1/subjects/{subject}/units"), ("GET", "/v1/subjects/{subject}/entities")):
        query.pop("cursor", None)  # a cursor is one a page gave (refused otherwise: test_http_listing.py)
    case.query = query
    return case


def test_the_api_takes_the_limits_of_their_one_home():
    document = schema.raw_schema
    bodies = document["components"]["schemas"]
    assert bodies["RecallIn"]["properties"]["k"]["maximum"] == MAX_K
    assert bodies["RecallIn"]["properties"]["hops"]["maximum"] == bodies["AssembleIn"]["properties"]["hops"]["maximum"]
    assert bodies["AssembleIn"]["properties"]["hops"]["maximum"] == MAX_HOPS
    [budget] = [b for b in bodies["BlockIn"]["properties"]["token_budget"]["anyOf"] if "maximum" in b]
    assert budget["maximum"] == MAX_BLOCK_TOKENS
    for path in ("/v1/subjects/{subject}/episodes", "/v1/subjects/{subject}/decisions"):
        [limit] = [p for p in document["paths"][path]["get"]["parameters"] if p["name"] == "limit"]
        assert limit["schema"]["maximum"] == MAX_K, path


@schema.parametrize()
@settings(max_examples=examples(EXAMPLES), deadline=None, suppress_health_check=list(HealthCheck))
def test_api_conforms_to_its_openapi(case):
    case.call_and_validate(headers={"Authorization": f"Bearer {TOKEN}"})
