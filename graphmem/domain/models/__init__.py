"""graphmem's types as pydantic v2 models: the boundary every adapter and pipeline speaks.

Datetimes are timezone-aware everywhere (``AwareDatetime``): a naive datetime is rejected at
construction, so no layer below ever guesses a zone. Times are normalised to UTC.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import re
import unicodedata
import uuid
from collections.abc import Callable, Collection, Iterable, Mapping
from datetime import UTC, datetime
from enum import Enum
from functools import lru_cache
from typing import Annotated, Any, Literal, Protocol, TypeVar, get_args

import regex
from pydantic import (
    AfterValidator,
    AwareDatetime,
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    ValidationInfo,
    model_validator,
)

from graphmem.domain.timeline import END_OF_TIME
from graphmem.errors import error_line, quoted

#: Content longer than this is refused: a memory unit is a fact, not a document dump.
MAX_CONTENT_CHARS = 20_000
#: Raw episode text limit (documents are ingested as episodes, then split by extractors).
MAX_RAW_CHARS = 200_000
#: A subject id or project id: a name, not a text.
MAX_SUBJECT_CHARS = 200
#: An episode id (ids such as ``conv1:D1:3`` or UUIDs are far shorter).
MAX_EPISODE_ID_CHARS = 1_000
#: Where an episode came from (``chat``, ``email``, ...).
MAX_CHANNEL_CHARS = 200
#: A question to recall or assemble for: a question, not a document.
MAX_QUERY_CHARS = 10_000
#: One label of a fact, and how many labels a fact may carry.
MAX_LABEL_CHARS = 200
MAX_LABELS = 64


def utcnow() -> datetime:
    return datetime.now(UTC)


def new_id() -> str:
    return uuid.uuid4().hex


def _utc(value: datetime) -> datetime:
    try:
        return value.astimezone(UTC)
    except OverflowError:  # year 1 at +14:00 is year 0 in UTC, year 9999 at -14:00 year 10000
        raise ValueError(f"{value.isoformat()} is outside the years 1..9999 once in UTC") from None


def _unicode(value: str) -> str:
    """Text that can be stored: a lone surrogate (``"\\ud800"`` in JSON) is not Unicode text."""
    if value.isascii():  # no surrogate there: checked without encoding a copy
        return value
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise ValueError(f"text holds a lone surrogate (U+{ord(value[exc.start]):04X}): not Unicode text") from None
    return value


def clean_text(limit: int, blank: bool = False) -> Callable[[str], str]:
    """A check of text a user gives: Unicode without NUL, at most ``limit`` characters, not
    blank unless ``blank``; raises ValueError naming what is wrong."""

    def check(value: str) -> str:
        _unicode(value)
        if "\x00" in value:
            raise ValueError("text contains a NUL byte")
        if not blank and not value.strip():
            raise ValueError("text is empty")
        if len(value) > limit:
            raise ValueError(f"text is {len(value)} characters, over the {limit} limit")
        return value

    return check


#: Unicode categories a name may not hold: control (Cc), format (Cf: zero-width and bidi
#: marks, which make two names look alike) and lone surrogates (Cs).
HIDDEN_CATEGORIES = frozenset({"Cc", "Cf", "Cs"})
#: What a decoder puts for bytes that were not text: two different byte strings would read as
#: one name.
REPLACEMENT = "\ufffd"


def _hidden(value: str) -> str | None:
    """The first control, format, surrogate or replacement character of ``value``, as ``U+XXXX``."""
    found = next((c for c in value if c == REPLACEMENT or unicodedata.category(c) in HIDDEN_CATEGORIES), None)
    return None if found is None else f"U+{ord(found):04X}"


def normal_name(value: str) -> str:
    """A subject or project id as stored: Unicode NFC without surrounding whitespace, so every
    spelling of one name is one scope. Raises ValueError for a control, format or replacement character."""
    value = unicodedata.normalize("NFC", value).strip()
    hidden = _hidden(value)
    if hidden:
        raise ValueError(f"holds the hidden character {hidden} (control, format or undecodable): not allowed in a name")
    return clean_text(MAX_SUBJECT_CHARS)(value)


#: What shows as nothing, or as a blank where none is expected: ``_hidden``'s controls, format
#: characters, surrogates and U+FFFD, and also line and paragraph separators, private-use and
#: unassigned code points and every default-ignorable one (combining grapheme joiner, Hangul
#: fillers, variation selectors...).
_INVISIBLE = regex.compile(r"[\p{Cc}\p{Cf}\p{Cs}\p{Zl}\p{Zp}\p{Co}\p{Cn}\p{Default_Ignorable_Code_Point}\ufffd]")


#: The validation context of records read back (from a store, or an export being imported):
#: what was accepted when written is read as it was, though a later check would refuse it.
STORED = {"stored": True}


def _visible(limit: int, what: str, blank: bool = False) -> Callable[[str, ValidationInfo], str]:
    """Plain text with nothing hidden in it, for what is shown and compared as a name: a
    fact's subject, predicate or object, an episode's channel, a label (a hidden or invisible
    character would make a second one that looks like the first). Read back (``STORED``), a
    record keeps what it was stored with."""

    def check(value: str, info: ValidationInfo) -> str:
        if not (info.context or {}).get("stored"):
            _shown(value, what)
        return clean_text(limit, blank=blank)(value)

    return check


def _shown(value: str, what: str) -> None:
    """ValueError when ``value`` holds a character that shows as nothing (``_INVISIBLE``)."""
    found = _INVISIBLE.search(value)
    if found:
        raise ValueError(
            f"holds the hidden character U+{ord(found.group()):04X} (control, format, separator, "
            f"ignorable or undecodable): not allowed in {what}"
        )


#: Scripts whose letters look alike ("а" Cyrillic, "a" Latin, "α" Greek): a name mixing them
#: is how one subject is made to pass for another.
_CONFUSABLE_SCRIPTS = ("LATIN", "CYRILLIC", "GREEK")


def _one_script(value: str, what: str) -> None:
    """ValueError when ``value`` mixes letters of two of ``_CONFUSABLE_SCRIPTS``."""
    scripts = sorted(
        {
            name
            for c in value
            if c.isalpha()
            for name in [unicodedata.name(c, "").split(" ")[0]]
            if name in _CONFUSABLE_SCRIPTS
        }
    )
    if len(scripts) > 1:
        raise ValueError(
            f"mixes {' and '.join(s.title() for s in scripts)} letters, which look alike: write {what} in one script"
        )


def _identifier(value: str) -> str:
    """An episode id: kept as given (ids are compared exactly), but plain text."""
    hidden = _hidden(value)
    if hidden:
        raise ValueError(f"holds the hidden character {hidden} (control, format or undecodable): not allowed in an id")
    return clean_text(MAX_EPISODE_ID_CHARS)(value)


class _Interval(Protocol):
    @property
    def valid_at(self) -> datetime | None: ...
    @property
    def invalid_at(self) -> datetime | None: ...


_I = TypeVar("_I", bound=_Interval)


def _valid_before_invalid(record: _I) -> _I:
    """World time runs forward: a fact cannot stop being true before it starts."""
    if record.valid_at and record.invalid_at and record.invalid_at < record.valid_at:
        raise ValueError("invalid_at is before valid_at")
    return record


UTCDatetime = Annotated[AwareDatetime, AfterValidator(_utc)]


def _before_the_end(value: datetime | None, info: ValidationInfo) -> datetime | None:
    """A world time a fact gives: not ``END_OF_TIME``, which would read back as no time at all.
    Read back (``STORED``), a record keeps what it was stored with."""
    if value == END_OF_TIME and not (info.context or {}).get("stored"):
        raise ValueError("9999-12-31T23:59:59.999999Z stands for no end: leave the time out")
    return value


WorldTime = Annotated[UTCDatetime, AfterValidator(_before_the_end)]
Content = Annotated[str, AfterValidator(clean_text(MAX_CONTENT_CHARS))]
RawText = Annotated[str, AfterValidator(clean_text(MAX_RAW_CHARS))]
Reason = Annotated[str, AfterValidator(clean_text(2_000))]
Confidence = Annotated[float, Field(ge=0.0, le=1.0, allow_inf_nan=False)]
Name = Annotated[str, AfterValidator(normal_name)]
EpisodeId = Annotated[str, AfterValidator(_identifier)]
Channel = Annotated[str, AfterValidator(_visible(MAX_CHANNEL_CHARS, "a channel", blank=True))]
Labels = Annotated[
    tuple[Annotated[str, AfterValidator(_visible(MAX_LABEL_CHARS, "a label"))], ...], Field(max_length=MAX_LABELS)
]


class Model(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class MemoryKind(str, Enum):
    semantic = "semantic"
    episodic = "episodic"
    procedural = "procedural"


class SubjectType(str, Enum):
    user = "user"
    agent = "agent"
    shared = "shared"
    session = "session"


class Op(str, Enum):
    ADD = "ADD"
    UPDATE = "UPDATE"
    DELETE = "DELETE"
    NOOP = "NOOP"


#: Project ids that read as no project (how JSON, Python, Go and JavaScript print a missing
#: value, and nothing at all): one would be a project that every message shows as none.
NO_PROJECT = frozenset({"", "null", "none", "nil", "undefined"})


def check_new_project(project: str | None) -> None:
    """ValueError when ``project``, given as a new project id, reads as no project."""
    if project is not None and project.strip().casefold() in NO_PROJECT:
        raise ValueError(f"project {quoted(project)} reads as no project: leave the project out for none")


@lru_cache(maxsize=1 << 12)  # read for every row a write sends
def _scope_key(subject_type: str, subject_id: str, project_id: str | None) -> str:
    return json.dumps([subject_type, subject_id, project_id])


@lru_cache(maxsize=1 << 12)  # read for every entity and mention a write sends
def _scope_token(key: str) -> str:
    return "s" + hashlib.sha256(key.encode()).hexdigest()[:24]


class Scope(Model):
    """Who owns a record: every read and write is confined to exactly one scope.

    Ids are normalised (``normal_name``): ``user: Jose\u0301`` and ``user:José`` are one scope,
    whichever face (CLI, API, MCP) names it."""

    subject_type: SubjectType
    subject_id: Name
    project_id: Name | None = None

    @property
    def key(self) -> str:
        """Unambiguous single-string key, stored on every node and indexed."""
        return _scope_key(self.subject_type.value, self.subject_id, self.project_id)

    @property
    def token(self) -> str:
        """A single alphanumeric Lucene token naming the scope, so fulltext search can filter
        by scope inside the index instead of after it."""
        return _scope_token(self.key)

    @classmethod
    def parse(cls, subject: str, project: str | None = None, stored: bool = False) -> Scope:
        """Parse the CLI form ``TYPE:ID`` (e.g. ``user:alice``). A new id (not ``stored``: an
        export names what was stored then) holds nothing that shows as nothing (``_INVISIBLE``),
        so two subjects cannot look alike, and a new project is none of ``NO_PROJECT``."""
        if not stored:
            check_new_project(project)
        kind, sep, ident = subject.partition(":")
        kind = kind.strip()
        if not sep or not ident.strip():
            raise ValueError(f"subject {quoted(subject)} is not TYPE:ID (e.g. user:alice)")
        if kind not in SubjectType.__members__:
            allowed = "|".join(SubjectType.__members__)
            raise ValueError(f"unknown subject type {quoted(kind)}: use {allowed}")
        try:
            scope = cls(subject_type=SubjectType(kind), subject_id=ident, project_id=project)
        except ValidationError as exc:
            raise ValueError(f"subject {quoted(subject)}: {error_line(exc)}") from None
        checked = () if stored else (("subject", scope.subject_id), ("project", scope.project_id))
        for what, value in checked:
            try:
                _shown(value or "", "a name")
                _one_script(value or "", "a name")
            except ValueError as exc:
                raise ValueError(f"{what} {quoted(value or '')} {exc}") from None
        return scope

    def __str__(self) -> str:
        text = f"{self.subject_type.value}:{self.subject_id}"
        return f"{text} (project {self.project_id})" if self.project_id else text


class SourceRef(Model):
    episode_id: str
    channel: str
    extractor_version: str
    #: The decision whose assertion this unit shows (``graphmem.domain.timeline``): a unit shows one
    #: stretch of one assertion's timeline.
    assertion_id: str | None = None
    #: When the episode happened (the date a question about "last week" is near).
    occurred_at: UTCDatetime | None = None


class TemporalMeta(Model):
    """Both time axes. ``expired_at``/``invalid_at`` are derived from invalidation edges as
    seen at the query's system time; ``invalid_at`` may also be known at creation (a fact with
    a known end)."""

    created_at: UTCDatetime
    expired_at: UTCDatetime | None = None
    valid_at: UTCDatetime | None = None
    invalid_at: UTCDatetime | None = None
    last_recalled_at: UTCDatetime | None = None
    recall_count: int = 0

    _ordered = model_validator(mode="after")(_valid_before_invalid)


class Triple(Model):
    """The graph shape of a fact: it links a subject entity to an object entity."""

    subject: Annotated[str, AfterValidator(clean_text(500))]
    predicate: Annotated[str, AfterValidator(clean_text(200))]
    object: Annotated[str, AfterValidator(clean_text(500))] | None = None
    single_valued: bool = False

    def slot(self, scope: Scope) -> str:
        """The (scope, subject, predicate) key: a single-valued predicate holds one current
        object per slot."""
        key = f"{scope.key}\x1f{normalise(self.subject)}\x1f{normalise(self.predicate)}"
        return hashlib.sha256(key.encode()).hexdigest()[:32]


class MemoryUnit(Model):
    id: str = Field(default_factory=new_id)
    kind: MemoryKind
    scope: Scope
    content: Content
    summary: str | None = None
    content_hash: str
    source: SourceRef
    time: TemporalMeta
    confidence: Confidence = 1.0
    labels: tuple[str, ...] = ()
    triple: Triple | None = None
    #: The timeline group the unit belongs to (``graphmem.domain.timeline``); None for units written
    #: outside the write pipeline.
    group: str | None = None


class RecallStats(Model):
    """Recall statistics: operational state kept beside a unit, never on it."""

    recalled_at: UTCDatetime
    increment: Annotated[int, Field(ge=1)] = 1


class VersionRead(Model):
    """A count a plan read of the scope's commits of one kind (kept on its names lock), with the
    key of the last one counted; ``ahead``, the key of the commit of the same pipeline that was
    pending then, whose changes the plan includes."""

    version: Annotated[int, Field(ge=0)]
    last: str | None = None
    ahead: str | None = None

    def stands(self, version: int, last: str | None) -> bool:
        """Whether the count is now ``version``, its last commit ``last``, with no commit other
        than ``ahead`` counted since the read."""
        return version == self.version or (
            version == self.version + 1 and self.ahead is not None and last == self.ahead
        )


class NamesRead(VersionRead):
    """What a write's mention links were drawn against: the scope's names version (how many
    commits have made names known in it) and the digest of the last such commit's names
    (``graphmem.domain.mentions.digest``), read before its known names; ``ahead``, the digest of the
    names of the pending commit, which the links include."""

    def outdated(self, version: int, last: str | None) -> bool:
        """Whether a commit other than ``ahead`` made names known since: the links must then
        be drawn again."""
        return not self.stands(version, last)


class TextsRead(VersionRead):
    """The stored texts that name what a write makes known, found while it was planned
    (``UnitStore.earlier_texts``) so that its commit need not search: ``found`` (unit id ->
    text; its commit keeps those that name what it makes known then), read after the scope's
    texts version (how many commits have changed which texts a search finds) and the key of the
    last such commit (``WriteBatch.texts_key``); ``episodes``, the same of the scope's episodes
    (episode id -> raw text); ``ahead``, the key of the pending commit, whose new units'
    texts ``found`` holds too (its episodes, stored before it was planned, are found as they
    are). They stand (``stands``) when no other commit changed the texts since."""

    found: dict[str, str] = Field(default_factory=dict)
    episodes: dict[str, str] = Field(default_factory=dict)


#: Draws a write's mention links again with a reader of the scope's known names (norms -> name
#: -> made a name by a fact) as its commit sees them: the batch's new ``unit_mentions``,
#: ``episode_mentions`` and ``anchors`` (``UnitStore.commit``).
Relink = Callable[[Callable[[Collection[str]], dict[str, bool]]], Mapping[str, object]]


class WriteBatch(Model):
    """Everything one write commits atomically: new units, the decisions that produced or
    targeted them, the invalidation edges those decisions write, and candidates held for review.

    ``guards`` maps each timeline group the batch decided on to the length of its log (its
    decisions with an event) as read before deciding; the commit fails with ``Conflict`` when
    another writer changed one since (optimistic concurrency enforced by the store, so
    concurrent writers cannot both add the same current fact).
    """

    units: tuple[MemoryUnit, ...] = ()
    decisions: tuple[Decision, ...] = ()
    invalidations: tuple[Invalidation, ...] = ()
    reviews: tuple[ReviewItem, ...] = ()
    guards: dict[str, int] = Field(default_factory=dict)
    #: Archived units a write of their fact makes searchable again.
    unarchive: tuple[str, ...] = ()
    #: The embedding of each new unit's content: its search entries are written in the same
    #: transaction (``graphmem.domain.entries``).
    vectors: dict[str, list[float]] = Field(default_factory=dict)
    #: The embedding model of ``vectors``: a store whose live index has another model refuses.
    vector_model: str | None = None
    #: The entities each new unit and episode names (``graphmem.domain.mentions``), by owner id:
    #: derived links written with them, as (name, kind) pairs.
    unit_mentions: dict[str, tuple[tuple[str, str], ...]] = Field(default_factory=dict)
    episode_mentions: dict[str, tuple[tuple[str, str], ...]] = Field(default_factory=dict)
    #: Names this write makes known in the scope, each with whether a fact makes it a name
    #: (found case-folded) or a text named it (found where written with a capital): earlier
    #: units that name them are linked to them too, so links do not depend on arrival order.
    anchors: tuple[tuple[str, bool], ...] = ()
    #: What the mention links were drawn against: a commit that finds names made known since
    #: by another writer draws them again, holding the scope's names (``UnitStore.commit``).
    names_read: NamesRead | None = None
    #: The earlier texts naming ``anchors``, found while planning; a commit searches itself
    #: when there are none or they no longer stand (``TextsRead.stands``).
    texts_read: TextsRead | None = None
    #: The episodes this batch decides (every candidate of theirs, or none was extracted):
    #: stored undecided (``EpisodeStore.put_episodes``), they stop being so with its commit.
    decided: tuple[str, ...] = ()
    #: What a store made ready for this batch's commit ahead of it (``UnitStore.stage``),
    #: opaque to all else (not dumped, not shown).
    staged: Any = Field(default=None, exclude=True, repr=False)

    @property
    def texts_key(self) -> str | None:
        """What the scope's texts version records of this commit when it changes which texts a
        search finds: its new units' and episodes' ids as a short fingerprint (one a later plan
        can know: ``TextsRead.ahead``), or None when it unarchives units, whose texts that plan
        lacks."""
        if not self.changes_texts or self.unarchive:
            return None
        ids = sorted(f"unit:{u.id}" for u in self.units) + sorted(f"episode:{e}" for e in self.episode_mentions)
        return hashlib.sha256(" ".join(ids).encode()).hexdigest()[:32]

    @property
    def changes_texts(self) -> bool:
        """Whether the commit changes which texts a search for names finds: it adds units or
        episodes (``episode_mentions`` holds every new episode), or unarchives units."""
        return bool(self.units or self.episode_mentions or self.unarchive)

    def held(
        self,
        names: tuple[int, str | None],
        texts: tuple[int, str | None],
        relink: Relink | None,
        known_names: Callable[[Collection[str]], dict[str, bool]],
    ) -> WriteBatch:
        """This batch as its commit writes it, holding the scope's names, whose names and texts
        versions (with their last commits) it found at ``names`` and ``texts``: its mention links
        drawn again by ``relink`` with ``known_names`` when another writer made names known since
        they were drawn (``NamesRead.outdated``), and without ``texts_read`` when that no longer
        stands (``TextsRead.stands``: the commit searches the texts itself)."""
        batch = self
        if batch.texts_read is not None and not batch.texts_read.stands(*texts):
            batch = batch.model_copy(update={"texts_read": None})
        if relink is None or batch.names_read is None or not batch.names_read.outdated(*names):
            return batch
        return batch.model_copy(update=relink(known_names))


class MemoryBlock(Model):
    """A resident block: always in context, never retrieved."""

    id: str = Field(default_factory=new_id)
    scope: Scope
    label: Annotated[str, AfterValidator(_visible(100, "a block label"))]
    value: Annotated[str, AfterValidator(_unicode)]
    token_budget: Annotated[int, Field(gt=0, le=100_000)]
    writable: bool = True
    description: Annotated[str, AfterValidator(_unicode)] | None = None
    updated_at: UTCDatetime = Field(default_factory=utcnow)


FactOp = Literal["assert", "end", "retract"]


class Fact(Model):
    """A structured fact given with an episode (docs/episodes.md)."""

    subject: Annotated[str, AfterValidator(_visible(500, "a fact's names"))]
    predicate: Annotated[str, AfterValidator(_visible(200, "a fact's names"))]
    object: Annotated[str, AfterValidator(_visible(500, "a fact's names"))] | None = None
    content: Content | None = None
    kind: MemoryKind = MemoryKind.semantic
    valid_at: WorldTime | None = None
    invalid_at: WorldTime | None = None
    # Strict: a fact arrives as JSON (ingest lines, HTTP, MCP), where "yes" or "0.5" is a mistake.
    single_valued: Annotated[bool, Field(strict=True)] = False
    #: assert: true from valid_at (until invalid_at); end: true until invalid_at (default: the
    #: episode's time) and no longer; retract: never true (a correction).
    op: FactOp = "assert"
    labels: Labels = ()
    confidence: Annotated[Confidence, Field(strict=True)] = 1.0

    _ordered = model_validator(mode="after")(_valid_before_invalid)

    @model_validator(mode="after")
    def _ending_time(self) -> Fact:
        if self.op == "end" and self.valid_at is not None:
            raise ValueError("an ending gives invalid_at (when the fact stopped), not valid_at")
        return self

    def text(self) -> str:
        """The fact as one sentence: its content, else subject, predicate and object."""
        if self.content:
            return self.content
        words = [self.subject, self.predicate.replace("_", " "), self.object or ""]
        return " ".join(w for w in words if w)


class Episode(Model):
    """An immutable raw event. Append-only: the same id may only ever hold the same content.
    ``facts`` are structured facts that came with it (the raw event's structured part)."""

    id: EpisodeId = Field(default_factory=new_id)
    scope: Scope
    occurred_at: WorldTime
    raw: RawText
    channel: Channel = "chat"
    facts: tuple[Fact, ...] = ()
    derived_ids: tuple[str, ...] = ()

    @property
    def fingerprint(self) -> str:
        """What "the same content" means for an episode id."""
        return fingerprint(
            self.scope, self.occurred_at, self.raw, self.channel, [f.model_dump(mode="json") for f in self.facts]
        )


def fingerprint(scope: Scope, occurred_at: datetime, raw: str, channel: str, facts: list[dict[str, Any]]) -> str:
    """An episode's fingerprint from its parts (``facts`` as their JSON dumps), also for an
    episode as stored."""
    payload = json.dumps([scope.key, occurred_at.isoformat(), raw, channel, facts])
    return hashlib.sha256(payload.encode()).hexdigest()


class Appended(Model):
    """What ``MemoryStore.put_episodes`` did: how many episodes were new, and the positions (in
    the order given) of those not stored because their scope already holds other content under
    their id."""

    new: int = 0
    conflicts: tuple[int, ...] = ()


class Entity(Model):
    """A named thing units are about, resolved within its scope by normalised name: its id is
    ``entity_id(scope, name)``, its name the spelling of the first unit that named it."""

    id: str
    scope: Scope
    name: str
    norm: str
    created_at: UTCDatetime | None = None


class SubjectCounts(Model):
    """A scope holding records, with how many episodes, units and decisions it holds."""

    scope: Scope
    episodes: int = 0
    units: int = 0
    decisions: int = 0


#: What an erasure deletes, kind by kind: the counts its record keeps.
ERASED_KINDS = (
    "units",
    "episodes",
    "entities",
    "decisions",
    "traces",
    "blocks",
    "reviews",
    "locks",
    "commits",
    "usage",
    "deletions",
    "entries",
)


class Erasure(Model):
    """The record of one erasure: which kind of subject, keyed only by HMACs under the store's
    secret (``erasure_keys``), who asked, and how many records of each kind it deleted."""

    id: str
    subject_type: str
    subject_hash: str
    project_hash: str
    status: Literal["running", "done"]
    actor: str | None = None
    #: How the subject is keyed ("hmac-sha256"); None on records from before keys.
    key: str | None = None
    started_at: UTCDatetime | None = None
    updated_at: UTCDatetime | None = None
    units: int = 0
    episodes: int = 0
    entities: int = 0
    decisions: int = 0
    traces: int = 0
    blocks: int = 0
    reviews: int = 0
    locks: int = 0
    commits: int = 0
    usage: int = 0
    deletions: int = 0
    entries: int = 0

    @property
    def counts(self) -> dict[str, int]:
        """Records deleted so far, by kind (``ERASED_KINDS``)."""
        return {kind: getattr(self, kind) for kind in ERASED_KINDS}


class Usage(Model):
    """What happens to a unit in use, kept beside it (never on it): recall statistics and
    archive state."""

    unit_id: str
    scope: Scope
    recall_count: Annotated[int, Field(ge=0)] = 0
    last_recalled_at: UTCDatetime | None = None
    #: When it left search (None: searchable).
    archived_at: UTCDatetime | None = None

    @model_validator(mode="after")
    def _counted(self) -> Usage:
        if self.recall_count and self.last_recalled_at is None:
            raise ValueError("a recall count needs last_recalled_at")
        return self


class TimelineEvent(Model):
    """What a decision put into its group's log (``graphmem.domain.timeline.Event``): an assertion
    with what its units show, the ending of a value, a retraction of one, or the retirement
    of an assertion."""

    kind: Literal["assert", "end", "retract", "retire"]
    group: str
    single: bool
    value: str
    #: (when the asserting episode was first extracted, its place in that write, the fact's
    #: place in the episode): ties of valid_at and the reach of retractions follow it.
    order_at: UTCDatetime
    order_ep: Annotated[int, Field(ge=0)] = 0
    order_fact: Annotated[int, Field(ge=0)] = 0
    valid_at: UTCDatetime | None = None
    end: UTCDatetime | None = None
    #: ``retire``: the assertion (decision id) it retires.
    target: str | None = None
    #: ``assert``: what the units of its stretches show.
    candidate: Candidate | None = None
    extractor_version: str | None = None
    channel: str | None = None
    occurred_at: UTCDatetime | None = None

    @property
    def asserted(self) -> Candidate:
        """The candidate an assertion event states."""
        if self.candidate is None:
            raise ValueError(f"a {self.kind} event of {self.group} states no candidate")
        return self.candidate


class Decision(Model):
    """One policy decision. The reason is mandatory, for NOOP too."""

    id: str = Field(default_factory=new_id)
    op: Op
    target_id: str | None = None
    reason: Reason
    confidence: Confidence = 1.0
    policy: str = "rule"
    decided_at: UTCDatetime = Field(default_factory=utcnow)
    episode_id: str | None = None
    scope: Scope
    produced_id: str | None = None
    #: UPDATE: when the target stopped being true in the world. ADD: a known end for the new
    #: unit, e.g. an out-of-order fact bounded by the newer fact named in ``target_id``.
    invalid_at: UTCDatetime | None = None
    candidate: str | None = None
    #: Set when the decision entered its group's timeline log.
    event: TimelineEvent | None = None
    #: Decisions that re-derive timelines after an episode deletion hang from its record.
    deletion_id: str | None = None
    #: Who caused it: "cli", "mcp", an API key id, or None (the Python API).
    actor: str | None = None

    @property
    def logged(self) -> TimelineEvent:
        """The timeline event of a decision in a group's log (every one there carries one)."""
        if self.event is None:
            raise ValueError(f"decision {self.id} carries no timeline event")
        return self.event

    @model_validator(mode="after")
    def _target(self) -> Decision:
        if self.op in (Op.UPDATE, Op.DELETE) and not self.target_id:
            raise ValueError(f"{self.op.value} decision needs a target_id")
        return self


class Invalidation(Model):
    """An invalidation edge: ``decision_id`` stopped believing ``unit_id`` at ``expired_at``
    (system time); the fact stopped being true at ``invalid_at`` (world time), or never was
    (``None``: a retraction)."""

    unit_id: str
    decision_id: str
    expired_at: UTCDatetime
    invalid_at: UTCDatetime | None
    reason: Reason


class Candidate(Model):
    """What an extractor proposes; the policy decides what becomes of it. ``op`` as for a
    ``Fact``: an ending's time is its ``invalid_at``."""

    kind: MemoryKind = MemoryKind.semantic
    scope: Scope
    content: Content
    valid_at: UTCDatetime | None = None
    invalid_at: UTCDatetime | None = None
    labels: tuple[str, ...] = ()
    confidence: Confidence = 1.0
    triple: Triple | None = None
    op: FactOp = "assert"

    _ordered = model_validator(mode="after")(_valid_before_invalid)

    @model_validator(mode="before")
    @classmethod
    def _stored_before_endings(cls, data: Any) -> Any:
        # Candidates stored before endings existed say ``retract: true|false``.
        if isinstance(data, dict) and "retract" in data:
            data = {k: v for k, v in data.items() if k != "retract"} | ({"op": "retract"} if data["retract"] else {})
        return data

    @property
    def content_hash(self) -> str:
        return content_hash(self.content)


class WriteContext(Model):
    """What the policy's write gate sees besides the candidate: the episode it came from."""

    episode: Episode


class UnitFilter(Model):
    """Which units: every given field must match (``labels``: all of them)."""

    kind: MemoryKind | None = None
    labels: tuple[str, ...] = ()
    ids: tuple[str, ...] | None = None
    content_hashes: tuple[str, ...] | None = None
    slots: tuple[str, ...] | None = None
    #: Ignore the visibility rule entirely (erasure, export, history).
    include_expired: bool = False


class Page(Model):
    offset: Annotated[int, Field(ge=0)] = 0
    limit: Annotated[int, Field(gt=0, le=10_000)] = 100


class Hit(Model):
    id: str
    score: float


class AssembleTrace(Model):
    id: str = Field(default_factory=new_id)
    scope: Scope
    query: str
    resident_ids: tuple[str, ...]
    recalled_ids: tuple[str, ...]
    tokens: int
    #: Approved procedural units loaded as rules (resident, like blocks).
    rule_ids: tuple[str, ...] = ()
    created_at: UTCDatetime = Field(default_factory=utcnow)


class StoredTrace(AssembleTrace):
    """A trace as stored: with the fused score of each recalled unit, by rank (None where the
    unit's link is gone with the unit)."""

    scores: tuple[float | None, ...] = ()


class ReviewItem(Model):
    """A candidate held for a human (resident targets): approve writes it, reject drops it."""

    id: str = Field(default_factory=new_id)
    scope: Scope
    candidate: Candidate
    episode_id: str
    extractor_version: str
    reason: Reason
    status: Literal["pending", "approved", "rejected"] = "pending"
    created_at: UTCDatetime = Field(default_factory=utcnow)
    decided_at: UTCDatetime | None = None
    note: str | None = None


#: The entities the named-entity list reads per question and the units a walk's hop starts
#: from, by default: 3, measured against 5 over the same stores (MuSiQue hybrid+hops2 R@5 half
#: A 0.753 / 0.718, all-supports@10 half A 0.640 / 0.640 and half B 0.600 / 0.560; LoCoMo
#: within 0.01 everywhere), and a hop reads ~40% fewer units.
SEEDS = 3
#: Names of a question that may leave it when they are speakers (``Unnamed``): every set of
#: them is embedded, so a few.
UNNAMED = 2


class Unnamed(Model):
    """The question without some of the names it holds (``names``, by norm): what the lists
    read when exactly those names are people who speak in the scopes. "What books has Melanie
    read?" then reads "What books has read?", and the speaker list says who: her name would
    rank what was said to her, and every line of hers alike."""

    names: tuple[str, ...]
    vector: list[float] | None = None
    terms: tuple[str, ...] | None = None


class SearchRequest(Model):
    """What one recall asks of the index: candidates from each ranked list, visible at ``at``
    in ``scopes`` (of ``kinds``, when given), fused by reciprocal rank fusion. With ``during``,
    a unit is visible when it is true at some world time in [start, end) as known at
    ``at.known`` (a question that names a time and no as-of point)."""

    scopes: tuple[Scope, ...]
    at: AsOf
    during: tuple[UTCDatetime, UTCDatetime] | None = None
    #: A time the question names: a list of units true or told near it, closest first.
    window: tuple[UTCDatetime, UTCDatetime] | None = None
    #: The question asks what happened in the window: in its time list, what began inside the
    #: window comes before states that merely hold into it (``graphmem.domain.entries.nearness``).
    began_first: bool = False
    #: How many best units the fusion and the walk rank, of which the ``kept`` best are
    #: returned once each gains for the others told in its conversation (``graphmem.domain.fusion.together``).
    k: Annotated[int, Field(ge=1, le=2000)]
    keep: Annotated[int, Field(ge=1, le=1000)] | None = None
    #: How deep each list is read before fusion.
    fetch: Annotated[int, Field(ge=1)]
    kinds: tuple[MemoryKind, ...] = ()
    #: The question's embedding (None: no semantic list).
    vector: list[float] | None = None
    #: Words for the lexical list (None: no lexical list).
    terms: tuple[str, ...] | None = None
    #: Every word of the question, to find the entities it names (None: no entity list).
    words: tuple[str, ...] | None = None
    #: Names the question writes (norms, at most ``models.UNNAMED``) that may be speakers, and
    #: the question without each non-empty set of them (``Unnamed``).
    names: tuple[str, ...] = ()
    unnamed: tuple[Unnamed, ...] = ()
    rrf_k: Annotated[int, Field(ge=1)] = 1
    #: Weight of each list in the fusion, by name: semantic, lexical, entities, time, speaker;
    #: and of the question's similarity (``graphmem.domain.fusion.similar``) and a walk's paths.
    weights: dict[str, float] = Field(default_factory=dict)
    #: Entities read per question and units read per entity; units a hop starts from.
    seeds: int = SEEDS
    fanout: int = 50
    #: Hops of the walk from the best hits (``graphmem.domain.fusion.walk``), the units a hop
    #: returns, and how much less each hop deeper counts.
    hops: Annotated[int, Field(ge=0, le=3)] = 0
    frontier: Annotated[int, Field(ge=1)] = 20
    hop_decay: float = 0.5

    @property
    def kept(self) -> int:
        """How many units the recall returns: ``keep``, else ``k``."""
        return min(self.keep or self.k, self.k)

    @property
    def depth(self) -> int:
        """How many fused units a walk starts from and adds to: a unit reached by a path also
        scores its own fused score when the question found it below the top k."""
        return min(1000, max(self.k, self.fetch)) if self.hops else self.k

    @property
    def pool(self) -> int:
        """How many of the best fused units the question's similarity re-scores
        (``graphmem.domain.fusion.similar``) before the ``depth`` best are kept."""
        return min(1000, max(self.depth, self.fetch))

    def asked(self, speakers: Iterable[str]) -> tuple[list[float] | None, tuple[str, ...] | None]:
        """The vector and terms the lists read when ``speakers`` (norms) speak in the scopes:
        the question without those of its ``names``, else the whole question."""
        key = tuple(sorted(set(self.names) & set(speakers)))
        for u in self.unnamed:
            if key and u.names == key:
                return u.vector, u.terms
        return self.vector, self.terms


class Scored(Model):
    """A unit found by a search, as seen at the request's system time, with its fused score;
    a unit a walk reached (``hop`` > 0) carries its ``path``: unit contents and the names of
    the entities between them, from a direct hit to it."""

    unit: MemoryUnit
    score: float
    hop: int = 0
    path: tuple[str, ...] = ()
    #: The question's similarity with the unit ((1 + cos) / 2) when fusion read it: a direct
    #: hit among the fused units it re-scores (``graphmem.domain.fusion.similar``), with a vector.
    similarity: float | None = None


class Step(Model):
    """One hop of a walk: from the ``frontier`` units through the entities they are about or
    name, to units not in ``seen``; the ``limit`` best paths come back (see ``Reached``). When
    two frontier units reach each other, only the better of the two paths counts: a hit is not
    explained by the hit it explains."""

    frontier: tuple[str, ...]
    #: For each frontier unit, the name of the entity the walk reached it through (None for a
    #: direct hit): a path crosses an entity once, so the hop does not go back through it.
    through: tuple[str | None, ...] = ()
    seen: frozenset[str] = frozenset()
    limit: int


class Reached(Model):
    """A unit one hop away from ``source`` through the entity ``via``, as seen at the request's
    system time. ``similarity``: the cosine between the question and the path (the sum of the
    two units' vectors; None without vectors); ``score``: that times the entity's specificity
    (1 / log2(1 + units linked to it)), what paths are ranked by."""

    source: str
    via: str
    unit: MemoryUnit
    score: float
    similarity: float | None = None


class AsOf(Model):
    """A point on both time axes: world time ``valid`` (T) and system time ``known`` (S)."""

    valid: UTCDatetime
    known: UTCDatetime

    @classmethod
    def now(cls) -> AsOf:
        t = utcnow()
        return cls(valid=t, known=t)


#: What ``normalise`` drops around a name.
NAME_EDGES = " .,;:!?\"'()[]{}"


@lru_cache(maxsize=1 << 16)  # names and word runs recur across a batch's texts
def normalise(text: str) -> str:
    """Normalised text for hashing and entity names: NFKC, case-folded, whitespace collapsed,
    surrounding punctuation dropped."""
    text = unicodedata.normalize("NFKC", text).casefold()
    return " ".join(text.split()).strip(NAME_EDGES)


_WORD = re.compile(r"\w+")


def words(text: str) -> list[str]:
    """The plain words of a text, lower-cased: how search and entity matching see it."""
    if text.isascii():  # lowering ASCII moves no word boundary: one call for the whole text
        return _WORD.findall(text.lower())
    return [w.lower() for w in _WORD.findall(text)]


#: Words too common to tell texts apart. A lexical query drops them: BM25 would weight them
#: low, but across many of them the low weights still add up to noise.
STOPWORDS = frozenset(
    [
        "a",
        "an",
        "the",
        "of",
        "to",
        "in",
        "on",
        "at",
        "for",
        "and",
        "or",
        "is",
        "are",
        "was",
        "were",
        "be",
        "been",
        "did",
        "do",
        "does",
        "what",
        "when",
        "where",
        "who",
        "whom",
        "which",
        "how",
        "why",
        "with",
        "from",
        "by",
        "as",
        "that",
        "this",
        "it",
        "its",
        "i",
        "you",
        "he",
        "she",
        "they",
        "we",
        "her",
        "his",
        "their",
        "our",
        "my",
        "me",
        "your",
    ]
)


# A word as the fulltext index's English analyzer sees it: apostrophes inside keep it whole
# ("don't", "O'Brien"), and a possessive is dropped ("Caroline's" is "caroline"). Split at the
# apostrophe instead, the query would look for "s" and "t", words no indexed text holds.
_TERM = re.compile(r"\w+(?:['’]\w+)*")
_POSSESSIVE = re.compile(r"['’]s$")
_CLITIC = re.compile(r"['’]")


def terms(text: str) -> list[str]:
    """The lexical terms of a text, lower-cased (see ``search_terms``)."""
    return [_POSSESSIVE.sub("", t.lower()) for t in _TERM.findall(text)]


def search_terms(text: str) -> list[str]:
    """The distinct terms of a query a lexical search looks for, in order: stopwords go, with
    their contractions ("what's", "I'm", "they're")."""
    return [t for t in dict.fromkeys(terms(text)) if _CLITIC.split(t)[0] not in STOPWORDS]


def content_hash(content: str) -> str:
    return hashlib.sha256(normalise(content).encode()).hexdigest()


def erasure_key(secret: bytes, text: str) -> str:
    """How an erasure record names what it erased (``user:alice``, or a project id): an
    HMAC-SHA256, under the database's own secret, of the text's SHA-256. A plain hash of a
    subject is found by hashing guesses; this key is not, without the secret."""
    return keyed_digest(secret, hashlib.sha256(text.encode()).hexdigest())


def keyed_digest(secret: bytes, digest: str) -> str:
    """The erasure key of a text from its SHA-256 hex digest (the plain hash older erasure
    records held)."""
    return hmac.new(secret, digest.encode(), hashlib.sha256).hexdigest()


def erasure_keys(secret: bytes, subject_type: str, subject_id: str, project_id: str | None) -> tuple[str, str]:
    """(subject key, project key) of an erasure record; the project key is "" for an erasure
    of every project of the subject."""
    project = erasure_key(secret, project_id) if project_id is not None else ""
    return erasure_key(secret, f"{subject_type}:{subject_id}"), project


def entity_id(scope: Scope, name: str) -> str:
    """Entities are resolved within a scope by normalised name: the id is derived from both,
    so concurrent writers MERGE onto the same node."""
    return _entity_id(scope.key, name)


def entity_ids(scope: Scope, norms: Iterable[str]) -> list[str]:
    """``entity_id`` of names already normalised (``normalise``), the scope's key read once: a
    write asks for thousands of word runs."""
    key = scope.key
    return [_norm_id(key, norm) for norm in norms]


def _entity_id(key: str, name: str) -> str:
    return _norm_id(key, normalise(name))


def _norm_id(key: str, norm: str) -> str:
    return hashlib.sha256(f"{key}\x1f{norm}".encode()).hexdigest()[:32]


class Edge(Model):
    """An invalidation edge as stored on a unit (see ``Invalidation``)."""

    expired_at: UTCDatetime
    invalid_at: UTCDatetime | None
    decision_id: str
    #: The episode of that decision (None for decisions of a deletion record).
    episode_id: str | None = None


class GroupUnit(Model):
    """A unit of a timeline group as stored (its own end in ``unit.time.invalid_at``) with
    every invalidation edge on it, so its stretch can be read at any system time."""

    unit: MemoryUnit
    edges: tuple[Edge, ...] = ()
    archived: bool = False


class InvalidatedBy(Model):
    """An invalidation edge into a unit, as ``explain`` shows it: the decision that stopped
    believing the unit, what that decision produced, when and why."""

    decision_id: str
    op: Op
    produced_id: str | None = None
    expired_at: UTCDatetime
    invalid_at: UTCDatetime | None = None
    reason: str


class Superseded(Model):
    """An invalidation edge out of the decision that produced a unit: the unit it stopped
    believing (id and content), when and why."""

    unit_id: str
    content: str
    expired_at: UTCDatetime
    invalid_at: UTCDatetime | None = None
    reason: str


class UnitEdges(Model):
    """The invalidation edges around one unit: into it, and out of its producing decision."""

    incoming: tuple[InvalidatedBy, ...] = ()
    outgoing: tuple[Superseded, ...] = ()


class IndexState(Model):
    """One search index as the server reports it."""

    name: str
    type: str
    state: str
    populationPercent: float | None = None


class IndexStatus(Model):
    """The live search entries: the model, dimension and generation they were built with
    (None on a fresh database), the model a rebuild builds aside, the embedder configured now,
    counts, and each search index's state."""

    model: str | None = None
    dimension: int | None = None
    generation: int | None = None
    building: str | None = None
    embedder: dict[str, str | int]
    units: int = 0
    #: Units with an entry open now (searchable at the present system time).
    searchable_units: int = 0
    entries: int = 0
    entities: int = 0
    indexes: tuple[IndexState, ...] = ()


#: What an export holds, kind by kind, in the order it is written and imported: a record
#: names only records of its own kind or of the kinds before it.
RecordKind = Literal[
    "entity", "episode", "unit", "deletion", "decision", "invalidation", "usage", "block", "review", "trace"
]
RECORD_KINDS: tuple[RecordKind, ...] = get_args(RecordKind)


class Deletion(Model):
    """The content-free record of an episode deletion: ids, counts and when. Decisions that
    re-derive timelines after it hang from it."""

    id: str = Field(default_factory=new_id)
    scope: Scope
    episode_id: str
    deleted_at: UTCDatetime
    units: int = 0
    decisions: int = 0
    #: Who asked for the deletion (see ``Decision.actor``).
    actor: str | None = None


class ApiKey(Model):
    """An API key as stored: only the sha256 of its secret (``graphmem.domain.keys``), the subjects
    (``TYPE:ID``, every project of each) it may read and write, and whether it holds them all."""

    id: str
    digest: str
    subjects: tuple[str, ...] = ()
    admin: bool = False
    name: str | None = None
    created_at: UTCDatetime = Field(default_factory=utcnow)
    revoked_at: UTCDatetime | None = None


class Rewrite(Model):
    """What re-deriving timelines after an episode deletion changes, applied atomically with
    the deletion: records to drop and records to add (units, decisions, edges)."""

    drop_units: tuple[str, ...] = ()
    #: Edges to drop, by (unit id, decision id, expired_at): one decision may hang several
    #: edges on one unit, at different system times.
    drop_edges: tuple[tuple[str, str, UTCDatetime], ...] = ()
    add: WriteBatch = Field(default_factory=lambda: WriteBatch())
    #: Kept units whose edges changed: their search entries are recomputed.
    respan: tuple[str, ...] = ()


WriteBatch.model_rebuild()
SearchRequest.model_rebuild()
TimelineEvent.model_rebuild()
Decision.model_rebuild()

__all__ = [
    "ApiKey",
    "Appended",
    "AsOf",
    "AssembleTrace",
    "Candidate",
    "Decision",
    "Deletion",
    "Edge",
    "ERASED_KINDS",
    "Entity",
    "Episode",
    "Erasure",
    "Fact",
    "GroupUnit",
    "Hit",
    "IndexState",
    "IndexStatus",
    "InvalidatedBy",
    "Invalidation",
    "MemoryBlock",
    "MemoryKind",
    "MemoryUnit",
    "Op",
    "Page",
    "RECORD_KINDS",
    "RecallStats",
    "RecordKind",
    "Reached",
    "ReviewItem",
    "Rewrite",
    "Scope",
    "Scored",
    "SearchRequest",
    "Step",
    "SourceRef",
    "StoredTrace",
    "SubjectCounts",
    "SubjectType",
    "Superseded",
    "TemporalMeta",
    "TimelineEvent",
    "Triple",
    "UnitEdges",
    "UnitFilter",
    "Unnamed",
    "Usage",
    "WriteBatch",
    "WriteContext",
    "content_hash",
    "entity_id",
    "erasure_key",
    "erasure_keys",
    "keyed_digest",
    "new_id",
    "normal_name",
    "normalise",
    "utcnow",
]
