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

The CLI maps InvalidInput (and its children) to exit code 2 and everything else to exit code 1;
each error's ``str()`` is the one line an operator reads.
"""

from __future__ import annotations


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
