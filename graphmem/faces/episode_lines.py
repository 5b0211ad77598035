"""Episode lines: the JSON Lines records ``graphmem ingest`` reads (docs/episodes.md),
parsed by the one function every face uses.

Every line stands alone. Whatever a line holds (malformed or deeply nested JSON, a lone
surrogate, a value of the wrong type, a time out of range, an over-long field), parsing it
either returns an ``Episode`` or raises ``InvalidInput`` with one line naming the field and
what was wrong; nothing else escapes, and the lines around it are unaffected.

Besides the models' limits (text, subject, id, channel and label lengths), a line is at most
``MAX_LINE_BYTES`` bytes of UTF-8 and nests at most ``MAX_DEPTH`` levels (an episode needs
four: the line, its facts, a fact, its labels).

``json_lines`` reads the lines of an export (``graphmem import``, ``POST /v1/import``) with the
same decoding: a line no decoder can read is one ``InvalidInput`` naming it, never a traceback.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from typing import Any, BinaryIO

from pydantic import ValidationError

from graphmem.domain.models import Episode, Fact, Scope
from graphmem.domain.times import parse_time
from graphmem.errors import InvalidInput, error_line, quoted

__all__ = [
    "EPISODE_KEYS",
    "ExportFile",
    "MAX_DEPTH",
    "MAX_LINE_BYTES",
    "episode_from_value",
    "json_lines",
    "load_json",
    "parse_episode",
    "read_lines",
]

#: The keys an episode line may have.
EPISODE_KEYS = frozenset({"id", "subject", "project", "occurred_at", "channel", "raw", "facts"})
#: A line holds one episode of at most 200,000 characters of text plus its facts.
MAX_LINE_BYTES = 4 * 1024 * 1024
MAX_DEPTH = 16

_FACT_TIMES = ("valid_at", "invalid_at")


def parse_episode(line: str) -> Episode:
    """One episode line as an Episode.

    Raises:
        InvalidInput: the line is not an episode; the message is one line naming what was
            wrong (``facts.0.valid_at: ...``).
    """
    return episode_from_value(load_json(line))


def load_json(line: str) -> Any:
    """``json.loads`` of one line; what it cannot read is ``InvalidInput`` with one line."""
    try:
        return json.loads(line)
    except json.JSONDecodeError as exc:
        raise InvalidInput(f"not JSON: {exc.msg} (column {exc.colno})") from None
    except RecursionError:  # json.loads recurses per level: a line nested about a thousand deep
        raise InvalidInput(f"JSON nested deeper than {MAX_DEPTH} levels") from None
    except ValueError:  # the one other refusal of json.loads: an integer of over 4,300 digits
        raise InvalidInput("not JSON: a number with more digits than can be read") from None


def json_lines(lines: Iterable[str], name: str) -> Iterator[tuple[str, Any]]:
    """The JSON value of each non-blank line, named ``name:number``; the first line that is
    not JSON raises ``InvalidInput`` starting with its name."""
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        where = f"{name}:{number}"
        try:
            value = load_json(line)
        except InvalidInput as exc:
            raise InvalidInput(f"{where}: {exc}") from None
        yield where, value


class ExportFile:
    """An export file read twice (``pipelines.bulk.Export``): its records with their byte
    offsets, then any record by its offset. Decoded as ``json_lines`` decodes."""

    def __init__(self, stream: BinaryIO, name: str) -> None:
        self.stream, self.name = stream, name

    def records(self) -> Iterator[tuple[int, str, Any]]:
        self.stream.seek(0)
        offset = 0
        for number, raw in enumerate(self.stream, 1):
            if raw.strip():
                where = f"{self.name}:{number}"
                try:
                    yield offset, where, load_json(raw.decode("utf-8"))
                except InvalidInput as exc:
                    raise InvalidInput(f"{where}: {exc}") from None
                except UnicodeDecodeError as exc:
                    raise InvalidInput(f"{where}: not UTF-8 text ({exc.reason})") from None
            offset += len(raw)

    def record(self, position: int) -> Any:
        self.stream.seek(position)
        return load_json(self.stream.readline().decode("utf-8"))


def episode_from_value(data: Any) -> Episode:
    """A decoded episode line (``json.loads`` of it) as an Episode; ``InvalidInput`` if bad."""
    _check_plain(data)
    if not isinstance(data, dict):
        raise InvalidInput("an episode line is a JSON object")
    unknown = sorted(set(data) - EPISODE_KEYS)
    if unknown:
        raise InvalidInput(f"unknown key(s) {', '.join(map(quoted, unknown))}: use {', '.join(sorted(EPISODE_KEYS))}")
    for key in ("subject", "occurred_at", "raw"):
        if data.get(key) in (None, ""):
            raise InvalidInput(f"{key}: required")
    if not isinstance(data["subject"], str):
        raise InvalidInput("subject: must be a string TYPE:ID")
    project = data.get("project")
    if project is not None and not isinstance(project, str):
        raise InvalidInput("project: must be a string")
    try:
        scope = Scope.parse(data["subject"], project)
        fields: dict[str, Any] = {
            "scope": scope,
            "occurred_at": parse_time(data["occurred_at"], "occurred_at"),
            "raw": data["raw"],
            "facts": _facts(data.get("facts")),
        }
    except InvalidInput:
        raise
    except ValueError as exc:
        raise InvalidInput(error_line(exc)) from None
    for key in ("channel", "id"):
        if data.get(key) is not None:
            fields[key] = data[key]
    try:
        episode = Episode(**fields)
    except ValidationError as exc:
        raise InvalidInput(error_line(exc)) from None
    # Without an id, the line's content names it: ingesting the same line again (a re-run of a
    # file cut short, a client's retry) finds the episode stored instead of adding another.
    return episode if "id" in fields else episode.model_copy(update={"id": episode.fingerprint[:32]})


def _facts(facts: Any) -> tuple[Fact, ...]:
    if facts is None:
        return ()
    if not isinstance(facts, list):
        raise InvalidInput("facts: must be a list")
    parsed = []
    for n, fact in enumerate(facts):
        if not isinstance(fact, dict):
            raise InvalidInput(f"facts.{n}: must be an object")
        fact = dict(fact)
        for key in _FACT_TIMES:
            if fact.get(key) is not None:
                fact[key] = parse_time(fact[key], f"facts.{n}.{key}")
        try:
            parsed.append(Fact.model_validate(fact))
        except ValidationError as exc:
            raise InvalidInput(f"facts.{n}.{error_line(exc)}") from None
    return tuple(parsed)


def _check_plain(data: Any) -> None:
    """Refuse what no field can hold before looking at fields: nesting deeper than
    ``MAX_DEPTH`` and strings (keys too) that are not Unicode text, named by their path."""
    todo: list[tuple[Any, str, int]] = [(data, "", 1)]
    while todo:
        value, path, depth = todo.pop()
        if depth > MAX_DEPTH:
            raise InvalidInput(f"not an episode: JSON nested deeper than {MAX_DEPTH} levels")
        if isinstance(value, dict):
            items = list(value.items())
        elif isinstance(value, list):
            items = list(enumerate(value))
        else:
            items = []
        for key, item in items:
            where = f"{path}.{key}" if path else str(key)
            if isinstance(key, str):
                _check_text(key, where)
            if isinstance(item, str):
                _check_text(item, where)
            elif isinstance(item, (dict, list)):
                todo.append((item, where, depth + 1))
    if isinstance(data, str):
        _check_text(data, "the line")


def _check_text(text: str, where: str) -> None:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise InvalidInput(
            f"{quoted(where)}: holds a lone surrogate (U+{ord(text[exc.start]):04X}): not Unicode text"
        ) from None


def read_lines(stream: BinaryIO) -> Iterator[tuple[int, str | InvalidInput]]:
    """The lines of a byte stream, numbered from 1: each decoded as UTF-8 (a leading byte
    order mark dropped), or the ``InvalidInput`` saying why it cannot be (not UTF-8, longer
    than ``MAX_LINE_BYTES``). Blank lines are skipped. A bad line never stops the next."""
    number = 0
    while True:
        raw = stream.readline(MAX_LINE_BYTES + 1)
        if not raw:
            return
        number += 1
        if len(raw) > MAX_LINE_BYTES and not raw.endswith(b"\n"):
            while (rest := stream.readline(MAX_LINE_BYTES)) and not rest.endswith(b"\n"):
                pass  # skip the rest of the over-long line without holding it
            yield number, InvalidInput(f"line longer than {MAX_LINE_BYTES} bytes")
            continue
        try:
            text = raw.decode("utf-8-sig" if number == 1 else "utf-8")
        except UnicodeDecodeError as exc:
            yield number, InvalidInput(f"not UTF-8 text: {exc.reason} at byte {exc.start + 1}")
            continue
        if text.strip():
            yield number, text
