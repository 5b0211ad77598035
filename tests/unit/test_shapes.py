"""The JSON form of stored records (``graphmem.pipelines.shapes``): one per record kind, and the
one the faces show, so a record reads the same in an export and on every face."""

from __future__ import annotations

from graphmem.domain.models import RECORD_KINDS
from graphmem.faces import views
from graphmem.pipelines import shapes


def test_every_record_kind_has_its_json_form():
    assert set(shapes.SHAPES) == set(RECORD_KINDS)


def test_the_faces_show_a_stored_record_as_an_export_writes_it():
    shown = {"unit": views.unit, "episode": views.episode, "review": views.review, "usage": views.usage_record}
    assert all(shapes.SHAPES[kind] is shape for kind, shape in shown.items())
    assert views.time is shapes.time and views.scope is shapes.scope
