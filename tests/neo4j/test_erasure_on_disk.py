"""What an erased subject leaves in a local server's files, measured: distinctive words are
written (episode text, fact content, an entity name, a block, an assembly question), the
subject is forgotten (which flushes), and every file of the instance is searched for them.

docs/security.md ("Erasure on disk") states the result this test holds the server to: the words
leave the transaction logs; what remains is only in store files that keep freed records until
a later write reuses them (the property string and array stores), in range-index pages, and in
Lucene segments until a merge; never in logs or any other file. Run with ``-s`` to see where.
"""

from __future__ import annotations

import time
import uuid
from datetime import UTC, datetime
from pathlib import Path

import pytest

from graphmem import GraphMem
from graphmem.domain.models import Fact
from graphmem.settings.config import Settings

pytestmark = pytest.mark.neo4j

#: Where freed values may stay until overwritten (paths below the instance folder).
KEEPS_FREED = (
    "data/databases/neo4j/neostore.propertystore.db.strings",
    "data/databases/neo4j/neostore.propertystore.db.arrays",
    "data/databases/neo4j/schema/index/",
)
PAD = " with more words after it, so the value goes to the string store as plain text"


def holding(folder: Path, needle: bytes) -> dict[str, int]:
    """Files below ``folder`` holding ``needle``, with how many times."""
    found = {}
    for path in folder.rglob("*"):
        if path.is_file():
            count = path.read_bytes().count(needle)
            if count:
                found[path.relative_to(folder).as_posix()] = count
    return found


def test_what_an_erased_subject_leaves_on_disk(spare_server):
    tag = uuid.uuid4().hex[:10]
    token = f"zq{tag}x7"  # one lower-case word: as Lucene and the range index keep it
    texts = [
        f"Episode {token} text{PAD}",
        f"Fact {token} content{PAD}",
        f"Entity {token} name{PAD}",
        f"Block {token} value{PAD}",
        f"Question {token} asked{PAD}",
    ]
    name = f"subject{tag}"  # the subject's id: every node carries it
    victim, other = f"user:{name}", f"user:other-{tag}"
    at = datetime(2024, 1, 1, tzinfo=UTC)
    with GraphMem.connect(Settings.from_env(neo4j_uri=spare_server.uri, embedder="hashing")) as mem:
        mem.remember(
            texts[0], victim, at=at, facts=[Fact(subject=texts[2], predicate="likes", object="tea", content=texts[1])]
        )
        mem.remember("Another subject's fact, written beside it.", other, at=at)  # shares index segments
        mem.set_block(victim, "persona", texts[3], token_budget=200)
        mem.assemble(texts[4], victim)
        assert holding(spare_server.instance_dir, token.encode())  # written: in the logs at least
        mem.forget(victim)

    deadline = time.monotonic() + 60  # the local server checkpoints within ~10 s of a write
    while any(path.startswith("data/transactions/") for path in holding(spare_server.instance_dir, token.encode())):
        assert time.monotonic() < deadline, "the erased words are still in the transaction logs"
        time.sleep(1)
    left = holding(spare_server.instance_dir, token.encode())
    full = {text.split()[0]: holding(spare_server.instance_dir, text.encode()) for text in texts}
    named = holding(spare_server.instance_dir, name.encode())
    print(f"\nafter forget: the word in {left or 'no file'}\nwhole texts: {full}\nthe subject id in {named}")
    assert all(path.startswith(KEEPS_FREED) for path in left | named), (left, named)
    assert all(path.startswith(KEEPS_FREED[0]) for where in full.values() for path in where), full
