"""What the facade's methods take, and the check every public method runs on its arguments.

``checked`` makes each public method validate its arguments against its annotations (strictly:
``k="5"`` is a caller's bug to report, not a value to guess) and raise only ``GraphMemError``.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Annotated, Any, TypeVar

from pydantic import AfterValidator, AwareDatetime, ConfigDict, Field, Strict, ValidationError, validate_call

from graphmem.domain.models import MAX_QUERY_CHARS, AsOf, MemoryKind, Scope, utcnow
from graphmem.errors import GraphMemError, InvalidInput, error_line, one_line


def _asked(query: str) -> str:
    if not query.strip():
        raise ValueError("the question is blank")
    return query


SubjectLike = str | Scope
#: A time given to the facade: aware (a naive datetime is refused, never guessed as UTC).
Time = AwareDatetime | None
#: A question: every face takes the same (the CLI, MCP and HTTP alike); blank asks nothing.
Query = Annotated[str, Field(min_length=1, max_length=MAX_QUERY_CHARS), AfterValidator(_asked)]
#: Kinds may be given as their names ("semantic") as well as ``MemoryKind`` values.
Kinds = Sequence[Annotated[MemoryKind, Strict(False)]]
#: Told how many more records a long operation has done.
Progress = Callable[[int], None] | None

#: Bounds of the counts a caller gives, far beyond any real use and well within the database's
#: 64-bit integers: a larger value is refused as bad input instead of overflowing down there.
MAX_OFFSET = 2**53
MAX_BATCH = 1_000_000
MAX_BUDGET = 10_000_000

_ARGUMENTS = ConfigDict(strict=True, arbitrary_types_allowed=True)

C = TypeVar("C", bound=type)


def as_scope(subject: SubjectLike, project: str | None = None) -> Scope:
    """The scope a subject names (a ``Scope`` as it is); bad input is ``InvalidInput``."""
    if isinstance(subject, Scope):
        return subject
    try:
        return Scope.parse(subject, project)
    except ValueError as exc:
        raise InvalidInput(error_line(exc)) from None


def point_in_time(valid: datetime | None = None, known: datetime | None = None) -> AsOf:
    """(T, S) from optional aware datetimes; both default to now."""
    now = utcnow()
    return AsOf(valid=valid or now, known=known or now)


def checked(cls: C) -> C:
    """Make every public method of ``cls``, its bases' included, check its arguments against its
    annotations and raise only ``GraphMemError``: a wrong type, a naive datetime or a bad value
    anywhere below (``ValueError``, pydantic's included) becomes ``InvalidInput`` with one line."""
    for base in reversed(cls.__mro__[:-1]):  # a subclass's method wins over its base's
        for name, member in list(vars(base).items()):
            if not name.startswith("_") and inspect.isfunction(member):
                setattr(cls, name, _guarded(member))
    return cls


def _guarded(method: Callable[..., Any]) -> Callable[..., Any]:
    validated = validate_call(config=_ARGUMENTS)(method)
    names = list(inspect.signature(method).parameters)

    @functools.wraps(method)
    def call(*args: Any, **kwargs: Any) -> Any:
        try:
            return validated(*args, **kwargs)
        except GraphMemError:
            raise
        except ValidationError as exc:
            raise InvalidInput(_argument_error(method.__qualname__, names, exc)) from exc
        except ValueError as exc:
            raise InvalidInput(error_line(exc)) from exc

    return call


def _argument_error(qualname: str, names: list[str], exc: ValidationError) -> str:
    """One line naming the argument (by name, also when given by position) and what is wrong;
    a model's own error, raised inside the call, as ``error_line`` words it."""
    first = exc.errors(include_url=False)[0]
    loc = first["loc"]
    if exc.title == "ValidatorIterator":  # an item of an iterable argument, checked as it is read
        return one_line(f"item {loc[0]}: {first['msg']}")
    if exc.title != qualname:
        return error_line(exc)
    head = names[loc[0]] if isinstance(loc[0], int) else loc[0]
    # The argument and list positions in it, not the union member pydantic tried last.
    where = ".".join([str(head), *(str(p) for p in loc[1:] if isinstance(p, int))])
    message = str(first["ctx"]["error"]) if first["type"] == "value_error" else first["msg"]  # as error_line
    return one_line(f"{where}: {message}")
