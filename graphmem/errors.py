"""graphmem's exceptions: one root, a few branches, driver errors mapped at the edge.

    GraphMemError                 root: catch this to catch everything graphmem raises
    ├── InvalidInput              bad input from a caller (CLI exit code 2)
    │   ├── ScopeViolation        a read or write tried to cross scopes
    │   └── BudgetExceeded        a block value over its token budget
    ├── NotFound                  an id that does not exist in the caller's scope
    ├── Conflict                  an immutable record would change (episode content, unit)
    ├── ConfigurationError        missing tools (Java, Maven), bad settings, model/index mismatch
    │   └── IndexMismatch         stored embedding model differs: run `graphmem index rebuild`
    └── BackendError              the database or a remote model failed (CLI exit code 1)
        └── Unavailable           the database cannot be reached (retryable)

Every face (CLI, MCP) reports a failure as ``error_line(exc)``: one line an operator reads.
``exit_code(exc)`` is 2 for bad input (InvalidInput, NotFound, any ValueError, pydantic's
validation errors included) and 1 for everything else.
"""

from __future__ import annotations

from pydantic import ValidationError


class GraphMemError(Exception):
    """Root of every error graphmem raises on purpose."""

    exit_code = 1


class InvalidInput(GraphMemError, ValueError):
    """The caller gave input that can never succeed as given."""

    exit_code = 2


class ScopeViolation(InvalidInput):
    """A read or write would cross (subject_type, subject_id, project_id)."""


class BudgetExceeded(InvalidInput):
    """A resident block value is over its token budget."""


class NotFound(GraphMemError, LookupError):
    """No such id in the caller's scope."""

    exit_code = 2


class Conflict(GraphMemError):
    """An immutable record would be changed, or an optimistic write lost its race."""


class ConfigurationError(GraphMemError):
    """The environment or settings cannot work (missing Java, wrong model, bad option)."""


class IndexMismatch(ConfigurationError):
    """The database's derived index was built with another embedding model or dimension."""


class BackendError(GraphMemError):
    """Neo4j or a remote model endpoint failed."""


class Unavailable(BackendError):
    """The database cannot be reached right now; retrying later may succeed."""


#: What a face reports as one line instead of a traceback: graphmem's own errors and bad
#: values (``ValueError`` includes pydantic's ``ValidationError``).
REPORTED = (GraphMemError, ValueError)


def error_line(exc: BaseException) -> str:
    """The error as one line: a validation error names its first bad field."""
    if isinstance(exc, ValidationError):
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or exc.title
        more = f" (and {exc.error_count() - 1} more)" if exc.error_count() > 1 else ""
        return f"{where}: {first['msg']}{more}"
    return " ".join(str(exc).split()) or type(exc).__name__


def exit_code(exc: BaseException) -> int:
    """2 for bad input, 1 for a runtime failure."""
    if isinstance(exc, GraphMemError):
        return exc.exit_code
    return 2 if isinstance(exc, ValueError) else 1
