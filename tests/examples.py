"""Hypothesis example counts by profile (registered in tests/conftest.py)."""

from __future__ import annotations

from hypothesis import settings

#: The "ci" profile's max_examples: a test's own count (``examples(n)``) is what CI runs.
CI_EXAMPLES = 100
#: The "dev" profile's: local runs draw a fifth as many.
DEV_EXAMPLES = 20


def examples(ci: int) -> int:
    """``ci`` under the "ci" profile; under another, the same share of it as the profile's
    max_examples is of CI's (at least ``min(ci, 3)``)."""
    return max(min(ci, 3), round(ci * settings.default.max_examples / CI_EXAMPLES))
