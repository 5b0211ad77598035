"""The stages that decide a batch's candidates, before it is drawn (``draw``).

- ``dated``: an extracted candidate given the world time its episode implies;
- ``gate``: the policy's ``should_write``; what it holds goes to human review;
- ``Timelines``: the groups the batch touches, read once, with the guards its commit checks;
- ``retire``: re-extraction takes back the facts it replaces;
- ``dedupe``: what the timeline settles for free (no LLM): an ending, a retraction, or a
  restatement of a value the group already holds;
- ``neighbours`` and ``retarget``: what the policy's reconciliation of a new value sees, and
  where its retraction goes.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import NamedTuple

from graphmem.domain import timeline
from graphmem.domain.models import (
    Candidate,
    Decision,
    Episode,
    MemoryUnit,
    Op,
    ReviewItem,
    Scope,
    TimelineEvent,
    WriteContext,
)
from graphmem.pipelines.write.batch import Proposal
from graphmem.pipelines.write.pipelining import CommitInFlight
from graphmem.pipelines.write.timelines import Group, GroupKey, as_event, day, retracts, unit_showing
from graphmem.ports import MemoryPolicy, TimelineStore


def dated(c: Candidate, episode: Episode) -> Candidate:
    """A candidate without a world time is taken as true from when its episode happened; an
    ending without one ends its value then."""
    if c.op == "end":
        return c if c.invalid_at is not None else c.model_copy(update={"invalid_at": episode.occurred_at})
    if c.valid_at is not None:
        return c
    return c.model_copy(update={"valid_at": min(episode.occurred_at, c.invalid_at or episode.occurred_at)})


class Gated(NamedTuple):
    """The candidates past the gate, and the review items for those it held, each with its
    NOOP decision."""

    passed: list[Proposal]
    held: list[ReviewItem]
    decisions: list[Decision]


def gate(policy: MemoryPolicy, scope: Scope, proposals: list[Proposal], now: datetime) -> Gated:
    """Ask the policy whether each candidate may be written; hold the rest for review."""
    gated = Gated([], [], [])
    for p in proposals:
        ok, reason = policy.should_write(p.candidate, WriteContext(episode=p.episode))
        if ok:
            gated.passed.append(p)
            continue
        item = ReviewItem(
            scope=scope,
            candidate=p.candidate,
            episode_id=p.episode.id,
            extractor_version=p.extractor_version,
            reason=reason,
        )
        gated.held.append(item)
        gated.decisions.append(p.decision(Op.NOOP, f"held for review {item.id}: {reason}", now, policy.name))
    return gated


@dataclass
class Timelines:
    """The timeline groups a batch touches: each one's stored log and units, the length of each
    log as read (``guards``: its commit refuses to write if another writer changed one since),
    and the log entries the batch adds."""

    store: TimelineStore
    scope: Scope
    in_flight: CommitInFlight
    groups: dict[str, Group] = field(default_factory=dict)
    guards: dict[str, int] = field(default_factory=dict)
    #: When the latest decision read was made: the batch's system time comes after it.
    latest: datetime | None = None

    def read(self, names: set[str]) -> None:
        """Read these groups, in one store call."""
        self.in_flight.wait_before(guards=names)
        stored, units = self.store.group_state(self.scope, sorted(names))
        self.guards = dict.fromkeys(names, 0)
        for d in stored:
            self.guards[d.logged.group] += 1
        self.latest = max((d.decided_at for d in stored), default=None)
        self.groups = {g: Group(single=False, events=[], units=[]) for g in names}
        for d in stored:
            self.groups[d.logged.group].events.append(d)
            self.groups[d.logged.group].single = d.logged.single
        for u in units:
            if u.unit.group is None:
                raise ValueError(f"unit {u.unit.id} is in no timeline group")
            self.groups[u.unit.group].units.append(u)

    def load(self, name: str) -> Group:
        """A group, read now if the batch did not read it (a policy's retraction of a fact of
        another group)."""
        if name not in self.groups:
            self.in_flight.wait_before(guards={name})
            events, units = self.store.group_state(self.scope, [name])
            single = events[0].logged.single if events else False
            self.groups[name] = Group(single=single, events=events, units=units)
            self.guards[name] = len(events)
        return self.groups[name]

    def append(self, d: Decision) -> None:
        """Add a decision with its event to its group's log."""
        self.groups[d.logged.group].events.append(d)


def retire(timelines: Timelines, old: Decision, note: str, now: datetime) -> Decision:
    """Re-extraction: take back one standing fact of the episode (``note`` says by what),
    deleting the unit that shows it."""
    retired = old.logged.model_copy(update={"kind": "retire", "target": old.id})
    shown = timelines.groups[retired.group].shown_by(old.id, now)
    d = Decision(
        op=Op.DELETE if shown else Op.NOOP,
        target_id=shown,
        reason=f"superseded by {note} (was {old.logged.extractor_version})",
        scope=timelines.scope,
        policy="timeline",
        decided_at=now,
        episode_id=old.episode_id,
        candidate=old.candidate,
        event=retired,
    )
    timelines.append(d)
    return d


def event(p: Proposal, key: GroupKey, now: datetime) -> TimelineEvent:
    """What a candidate puts into its group's log, if it is decided as it says."""
    c = p.candidate
    return TimelineEvent(
        kind=c.op,
        group=key.group,
        single=key.single,
        value=key.value,
        order_at=p.order_at or now,
        order_ep=p.position[0],
        order_fact=p.position[1],
        valid_at=c.valid_at,
        end=c.invalid_at,
        candidate=c,
        extractor_version=p.extractor_version,
        channel=p.episode.channel,
        occurred_at=p.episode.occurred_at,
    )


class Decided(NamedTuple):
    """A candidate's decision, and the archived units it brings back into search (those of a
    value it restates)."""

    decision: Decision
    unarchive: set[str]


def dedupe(group: Group, p: Proposal, ev: TimelineEvent, now: datetime, policy: str) -> Decided | None:
    """Settle a candidate for free, before any LLM: an ending cuts what its value shows then, a
    retraction reaches the earlier assertions of its value, and a restatement of a value the
    group holds changes at most its stretch. None: a new value, for the policy."""
    c, value = p.candidate, ev.value
    showing = group.showing(value, now)
    shown_text = group.text(showing, c.content)
    if c.op == "end":
        ended = group.ending(value, c.invalid_at, now)
        reason = (
            f"{c.content!r}: {ended.content!r} ends {day(c.invalid_at)}"
            if ended
            else f"{c.content!r} ends nothing known to be true then"
        )
        d = p.decision(Op.UPDATE if ended else Op.NOOP, p.because(reason), now, policy, ended.id if ended else None)
        return Decided(d.model_copy(update={"invalid_at": c.invalid_at}) if ended else d, set())
    if c.op == "retract":
        reason = (
            f"retraction of {c.content!r}"
            if showing and shown_text == c.content
            else f"retraction of {c.content!r}: {shown_text!r} was never true"
            if showing
            else f"retraction of {c.content!r}, asserted earlier in this write: none of it was stored"
            if retracts(ev, [e for e in group.events if e.decided_at == now])
            else "retraction matched no current fact"
        )
        return Decided(p.decision(Op.DELETE if showing else Op.NOOP, p.because(reason), now, policy, showing), set())
    if any(a.value == value for a in group.standing(now)):
        before = timeline.stretches(group.standing(now), ev.single)
        probe = timeline.Event(
            id="?",
            kind=ev.kind,
            value=value,
            known=now,
            order=(ev.order_at, ev.order_ep, ev.order_fact),
            valid_at=ev.valid_at,
            end=ev.end,
        )
        changed = before != timeline.stretches(timeline.active([*map(as_event, group.events), probe], now), ev.single)
        reason = f"restates {shown_text!r} over another time" if changed else f"restates the current {shown_text!r}"
        d = p.decision(Op.ADD if changed else Op.NOOP, reason, now, policy, showing)
        return Decided(d, {u.id for u in group.alive_of(group.owners(value), now)} & group.archived)
    return None


def neighbours(group: Group, scope: Scope, now: datetime, similar: Sequence[MemoryUnit]) -> list[MemoryUnit]:
    """What the policy reconciles a new value against: the group's standing facts (those this
    batch asserted as if their units stood already), then ``similar`` units by meaning."""
    standing = {a.id for a in group.standing(now)}
    found = group.covering(now, standing) + [
        unit_showing(e, timeline.NewUnit(e.id, e.id, e.logged.valid_at, e.logged.end, now), scope)
        for e in group.events
        if e.id in standing and e.decided_at == now
    ]
    known = {n.id for n in found}
    return found + [u for u in similar if u.id not in known]


def retarget(timelines: Timelines, ev: TimelineEvent, target: MemoryUnit) -> TimelineEvent:
    """The policy's retraction of ``target``: a retraction of the value its unit shows, in its
    group (read now if the batch did not read it)."""
    name = target.group or ev.group
    group = timelines.load(name)
    owner = next((e for e in group.events if e.id == target.source.assertion_id), None)
    return ev.model_copy(
        update={
            "kind": "retract",
            "group": name,
            "single": group.single if owner else ev.single,
            "value": owner.logged.value if owner else ev.value,
        }
    )
