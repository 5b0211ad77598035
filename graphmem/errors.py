"""graphmem's exceptions: one root, a few branches, driver errors mapped at the edge.

    GraphMemError                 root: everything graphmem raises on purpose
    ├── InvalidInput              bad input from a caller
    │   ├── ScopeViolation        a read or write tried to cross scopes
    │   └── BudgetExceeded        a block value over its token budget
    ├── NotFound                  no such id in the caller's scope
    │   └── Gone                  there when a write began, erased or deleted since
    ├── Conflict                  an immutable record would change, or a write lost its race
    ├── ConfigurationError        missing Java or Maven, bad settings
    │   └── IndexMismatch         stored embedding model differs: run `graphmem index rebuild`
    └── BackendError              the database or a remote model failed
        └── Unavailable           the database cannot be reached (retryable)

Every face reports a failure as ``error_line(exc)``, one line. ``exit_code(exc)`` is 2 for bad
input (InvalidInput, NotFound but Gone, any ValueError: pydantic's validation errors too) and
1 for everything else.
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


def episode_conflict(episode_id: str) -> Conflict:
    """The refusal of an episode whose id its subject already uses for other content. It names
    nothing stored: an episode id belongs to one subject."""
    return Conflict(f"episode {episode_id} already exists with different content; episodes are immutable")


class Gone(NotFound):
    """What a write named was there when it began and is not now (erased or deleted by
    another caller meanwhile): a runtime race, not bad input."""

    exit_code = 1


def episodes_gone(count: int, scope: object) -> Gone:
    """The refusal of a write whose decisions name episodes its scope no longer holds: erased
    or deleted after the write stored them, so nothing may derive from them now."""
    return Gone(
        f"{count} episode(s) of this write are no longer in scope {scope} (erased or deleted "
        "while it was written); nothing was derived from them: write them again if they are wanted"
    )


def erased_meanwhile(scope: object) -> Conflict:
    """The refusal of the rest of a write whose subject was erased while it ran."""
    return Conflict(
        f"{scope} was erased while this write ran: nothing more of it is stored; write it again if it is wanted"
    )


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


def one_line(text: str, limit: int = 1_000) -> str:
    """``text`` as one line that can always be printed: whitespace runs collapsed, what UTF-8
    cannot encode (a lone surrogate) escaped, at most ``limit`` characters."""
    line = " ".join(text.split()).encode("utf-8", "backslashreplace").decode("utf-8")
    return line if len(line) <= limit else line[: limit - 3] + "..."


def quoted(text: str, limit: int = 60) -> str:
    """``text`` quoted for a message (hidden characters shown escaped), cut after ``limit``."""
    return repr(text) if len(text) <= limit else repr(text[:limit]) + "..."


def error_line(exc: BaseException) -> str:
    """The error as one line: a validation error names its first bad field."""
    if isinstance(exc, ValidationError):
        first = exc.errors(include_url=False)[0]
        where = ".".join(str(p)[:60] for p in first["loc"]) or exc.title
        # A validator's own ValueError reads better without pydantic's "Value error, " prefix.
        message = str(first["ctx"]["error"]) if first["type"] == "value_error" else first["msg"]
        more = f" (and {exc.error_count() - 1} more)" if exc.error_count() > 1 else ""
        return one_line(f"{where}: {message}{more}")
    return one_line(str(exc)) or type(exc).__name__


def exit_code(exc: BaseException) -> int:
    """2 for bad input, 1 for a runtime failure."""
    if isinstance(exc, GraphMemError):
        return exc.exit_code
    return 2 if isinstance(exc, ValueError) else 1
