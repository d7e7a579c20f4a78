"""The item-place invariant has one home: annotation.item_places writes ``assigned_count`` and
``is_open``, and no other module does (an UPDATE's SET or an ORM ``update``/assignment)."""

import re
from pathlib import Path

import pytest

from annotation.item_places import places_follow_overlap, places_give_back, places_hold_out, places_serve
from annotation.kinds import get_kind
from annotation.models import Item

ROOT = Path(__file__).resolve().parents[2]
HOME = "annotation/item_places.py"
#: A write of either column: ``is_open=`` / ``assigned_count=`` in a call, an attribute assignment, or
#: ``{X.is_open} =`` in an SQL SET. Filters (``is_open=True`` inside ``Q(...)``/``filter(...)``) are reads.
WRITE = re.compile(r"\.update\([^)]*\b(?:is_open|assigned_count)\s*=|\.(?:is_open|assigned_count)\s*=(?!=)|"
                   r"\.(?:is_open|assigned_count)\}\s*=")  # fmt: skip
COPA = get_kind("copa_likert")


def writes_outside_home(root: Path) -> list[str]:
    found = []
    for app in ("accounts", "annotation", "judges", "validation"):
        for path in sorted((root / app).rglob("*.py")):
            relative = str(path.relative_to(root))
            if "migrations" in path.parts or relative == HOME:
                continue
            for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
                if WRITE.search(line):
                    found.append(f"{relative}:{number}")
    return found


class ItemPlacesTests:
    def test_no_module_but_item_places_writes_the_places(self):
        # The model's save sets a new item's is_open through item_places.open_when_created.
        assert writes_outside_home(ROOT) == ["annotation/models.py:" + str(_model_line())]

    def test_the_scan_finds_a_write(self, tmp_path):
        (tmp_path / "judges").mkdir()
        (tmp_path / "judges" / "late.py").write_text("Item.objects.filter(pk=1).update(is_open=False)\n")
        assert writes_outside_home(tmp_path) == ["judges/late.py:1"]

    @pytest.mark.django_db
    def test_the_moves_keep_the_invariant(self, make_project):
        project = make_project("copa_likert", overlap=2)
        item = Item.objects.create(project=project, external_id="a", payload=COPA.example_payload())
        known = Item.objects.create(project=project, external_id="q", payload=COPA.example_payload(), gold_value={})
        assert item.is_open and not known.is_open
        Item.objects.filter(pk=item.pk).update(assigned_count=2, is_open=False)  # two claims
        places_give_back(Item.objects.filter(pk__in=[item.pk, known.pk]))
        item.refresh_from_db(), known.refresh_from_db()
        assert (item.assigned_count, item.is_open) == (1, True) and known.assigned_count == 0
        places_follow_overlap(Item.objects.filter(project=project), overlap=1)
        item.refresh_from_db()
        assert not item.is_open
        places_hold_out(Item.objects.filter(pk=item.pk))
        places_follow_overlap(Item.objects.filter(project=project), overlap=3)
        item.refresh_from_db()
        assert item.held_out and not item.is_open  # held out stays closed whatever k
        places_serve(Item.objects.filter(pk=item.pk), overlap=3)
        item.refresh_from_db()
        assert not item.held_out and item.is_open


def _model_line() -> int:
    lines = (ROOT / "annotation" / "models.py").read_text(encoding="utf-8").splitlines()
    return next(n for n, line in enumerate(lines, start=1) if "self.is_open = open_when_created" in line)
