"""Subjects as ``Scope`` now spells them: every stored subject and project id in Unicode NFC
without surrounding whitespace (``graphmem.domain.models.normal_name``), so every face finds
its data and forgetting one spelling erases them all.

- A subject moves with every key derived from its scope: scope keys and Lucene tokens, entity
  ids, slots, timeline groups, lock keys, stored candidates and episode fingerprints.
- Two spellings of one subject merge (entities of one name become one; the other spelling's
  block of a shared label is renamed), each merge a note.
- A control or format character is written out as ``<U+XXXX>``, so such a subject stays apart
  from the one it imitated.
- Each subject moves in one transaction: an interrupted run moves the rest.
"""

from __future__ import annotations

import functools
import hashlib
import json
import unicodedata
from datetime import UTC
from typing import TYPE_CHECKING, Any

from neo4j import ManagedTransaction

from graphmem.adapters.neo4j.driver import run
from graphmem.adapters.neo4j.migrations.frozen import group_of, stored_datetime
from graphmem.adapters.neo4j.queries import load
from graphmem.domain.models import (
    HIDDEN_CATEGORIES,
    Candidate,
    Scope,
    SubjectType,
    Triple,
    entity_id,
    fingerprint,
    normal_name,
)
from graphmem.errors import quoted

if TYPE_CHECKING:
    from graphmem.adapters.neo4j.driver import Neo4jConnection

#: Every label whose nodes carry a scope.
SCOPED = (
    "Unit",
    "Episode",
    "Entity",
    "Decision",
    "Trace",
    "Block",
    "Review",
    "Lock",
    "Commit",
    "Usage",
    "Deletion",
    "Entry",
)


#: A stored subject as it was read: (subject type, subject id, project id).
Subject = tuple[str, str, str | None]


def apply(conn: Neo4jConnection) -> list[str]:
    stored = {
        (r["subject_type"], r["subject_id"], r["project_id"])
        for label in SCOPED
        for r in conn.read(load("subjects/stored_subjects").rendered(label=label))
    }
    notes: list[str] = []
    moves = {}
    for old in sorted(stored, key=json.dumps):
        try:
            new = _normal(old)
        except ValueError as exc:
            notes.append(f"subject {_shown(old)} is left as stored: {exc}")
            continue
        if new.key != json.dumps(list(old)):
            moves[old] = new
    targets: dict[str, list[Subject]] = {}
    for old, new in moves.items():
        targets.setdefault(new.key, []).append(old)
    for _key, olds in targets.items():
        new = moves[olds[0]]
        spellings = [_shown(o) for o in olds] + ([_shown(_triple(new))] if _triple(new) in stored else [])
        if len(spellings) > 1:
            notes.append(f"subjects {', '.join(spellings)} are one subject now: {new}")
    for old, new in moves.items():
        notes += conn.write_tx(functools.partial(_move, old=old, new=new), what=f"normalising {_shown(old)}")
    return notes


def _triple(scope: Scope) -> Subject:
    return scope.subject_type.value, scope.subject_id, scope.project_id


def _shown(subject: Subject) -> str:
    kind, ident, project = subject
    return quoted(f"{kind}:{ident}") + (f" (project {quoted(project)})" if project is not None else "")


def _written_out(name: str) -> str:
    """A stored name in NFC with each character a name may not hold written out."""
    name = unicodedata.normalize("NFC", name).strip()
    return "".join(f"<U+{ord(c):04X}>" if unicodedata.category(c) in HIDDEN_CATEGORIES else c for c in name)


def _normal(subject: Subject) -> Scope:
    kind, ident, project = subject
    return Scope(
        subject_type=SubjectType(kind),
        subject_id=normal_name(_written_out(ident)),
        project_id=normal_name(_written_out(project)) if project is not None else None,
    )


def _stored_scope(subject: Subject) -> Scope:
    """A scope as stored, spelled as it was (not valid as a Scope any more)."""
    kind, ident, project = subject
    return Scope.model_construct(subject_type=SubjectType(kind), subject_id=ident, project_id=project)


def _move(tx: ManagedTransaction, old: Subject, new: Scope) -> list[str]:
    """Move one stored subject to its normal scope ``new`` in the transaction ``tx``."""
    before = _stored_scope(old)
    records = run(tx, "subjects/scope_records", subject_type=old[0], subject_id=old[1], scope=before.key)[0]
    groups, candidates = _groups(records["decisions"], before, new)
    unmatched = {
        g
        for g in {*(d["ev_group"] for d in records["decisions"]), *(u["group"] for u in records["units"] if u["group"])}
        if g not in groups
    }
    groups.update({g: _fallback(g, new) for g in unmatched})
    notes = (
        [
            f"{new}: {len(unmatched)} timeline group(s) got a key no later fact computes; re-extract the "
            "subject to join their facts again"
        ]
        if unmatched
        else []
    )

    def set_by_id(label: str, rows: list[dict[str, Any]]) -> None:
        if rows:
            run(tx, load("subjects/set_by_id").rendered(label=label), rows=rows, scope=before.key)

    set_by_id(
        "Decision",
        [
            {
                "id": d["id"],
                "props": {
                    "ev_group": groups[d["ev_group"]],
                    "ev_candidate": candidates.get(d["id"], d["ev_candidate"]),
                },
            }
            for d in records["decisions"]
        ],
    )
    set_by_id(
        "Unit",
        [{"id": u["id"], "props": {"group": groups.get(u["group"]), "slot": _slot(u, new)}} for u in records["units"]],
    )
    set_by_id(
        "Review", [{"id": r["id"], "props": {"candidate": _rescoped(r["candidate"], new)}} for r in records["reviews"]]
    )
    set_by_id(
        "Episode",
        [
            {
                "id": e["id"],
                "props": {
                    "fingerprint": fingerprint(
                        new,
                        stored_datetime(e["occurred_at"]).astimezone(UTC),
                        e["raw"],
                        e["channel"],
                        json.loads(e["facts"] or "[]"),
                    )
                },
            }
            for e in records["episodes"]
        ],
    )
    taken = {r["label"] for r in run(tx, "subjects/block_labels", scope=new.key)}
    clashing = [b for b in records["blocks"] if b["label"] in taken]
    renamed = [{"id": b["id"], "props": {"label": _free_label(b["label"], old)}} for b in clashing]
    set_by_id("Block", renamed)
    notes += [
        f"{new}: block {quoted(b['label'])} of {_shown(old)} is now {quoted(r['props']['label'])}"
        for b, r in zip(clashing, renamed)
    ]
    run(
        tx,
        "subjects/rekey_entities",
        rows=[{"old": e["id"], "new": entity_id(new, e["name"])} for e in records["entities"]],
    )
    run(
        tx,
        "subjects/rekey_locks",
        rows=[
            {"old": key, "new": "group:" + groups[key.removeprefix("group:")]}
            for key in records["locks"]
            if key.removeprefix("group:") in groups
        ],
    )
    for label in SCOPED:
        run(
            tx,
            load("subjects/rekey_nodes").rendered(label=label),
            subject_type=old[0],
            subject_id=old[1],
            old_scope=before.key,
            scope=new.key,
            new_id=new.subject_id,
            new_project=new.project_id,
            token=new.token,
        )
    return notes


def _groups(decisions: list[dict[str, Any]], before: Scope, new: Scope) -> tuple[dict[str, str], dict[str, str]]:
    """Old group -> new group, and each decision's candidate rewritten with the new scope. A
    group is mapped by recomputing it from a decision's candidate (``group_of``), once the same
    computation with the stored scope gives the stored group back; a group no decision gives
    back (computed by an earlier rule) is left out."""
    groups: dict[str, str] = {}
    candidates: dict[str, str] = {}
    for d in decisions:
        if d["ev_candidate"] is None:
            continue
        candidate = Candidate.model_validate(_with_scope(d["ev_candidate"], new))
        candidates[d["id"]] = candidate.model_dump_json()
        single = bool(d["ev_single"])
        if group_of(candidate.model_copy(update={"scope": before}), single)[0] == d["ev_group"]:
            groups[d["ev_group"]] = group_of(candidate, single)[0]
    return groups, candidates


def _fallback(group: str, new: Scope) -> str:
    """A key for a group under ``new`` that no other group has: derived from its old key."""
    prefix, _, _ = group.partition(":")
    digest = hashlib.sha256("\x1f".join((new.key, group)).encode()).hexdigest()[:32]
    return f"{prefix}:{digest}"


def _slot(unit: dict[str, Any], scope: Scope) -> str | None:
    if not (unit["subject"] and unit["predicate"]):
        return None
    return Triple.model_construct(subject=unit["subject"], predicate=unit["predicate"]).slot(scope)


def _with_scope(candidate_json: str, scope: Scope) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(candidate_json)
    data["scope"] = scope.model_dump(mode="json")
    return data


def _rescoped(candidate_json: str, scope: Scope) -> str:
    return Candidate.model_validate(_with_scope(candidate_json, scope)).model_dump_json()


def _free_label(label: str, old: Subject) -> str:
    """A label for a block of ``old`` that no block of the normal scope uses: the label tagged
    with the old spelling's hash."""
    return f"{label[:80]} ({hashlib.sha256(json.dumps(list(old)).encode()).hexdigest()[:6]})"
