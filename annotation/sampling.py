"""Validation samples: the random share of a project's items that people validate.

A draw takes ``n`` items (or a fraction of the project) uniformly at random among the items not yet
in the sample, within each stratum of a payload field when the sample is stratified, with a seed.
Once a project has a sample, only sampled items are served: the others are *held out*
(``Item.held_out``, not open, never reopened by a skip), so they stay model-only. A later draw adds
to the same sample with the same strata, so the union of the draws is one stratified simple random
sample; the inclusion probability of an item is its stratum's sampled share ``n_h / N_h``, which
each draw records for the sample so far. Prediction-powered estimates weight by it.

Which items a draw takes depends only on the seed, the items (by id) and their strata: the same
data and seed give the same sample.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np
from django.db import transaction
from django.db.models import Exists, OuterRef, Q
from django.db.models.fields.json import KeyTextTransform, KeyTransform

from annotation.errors import ConcordError, FieldError, ValidationFailed
from annotation.item_places import places_hold_out, places_serve
from annotation.models import Annotation, Item, Project, SampleDraw, SampleItem, ValidationSample
from annotation.table_statistics import statistics_refreshed

__all__ = [
    "ALLOCATIONS",
    "MAX_DRAW",
    "SampleDesign",
    "draw_json",
    "project_items_have_field",
    "item_stratum",
    "project_sample_design",
    "sample_discardable_draw",
    "sample_draws",
    "sample_hold_out_new_items",
    "validation_sample_discard",
    "validation_sample_draw",
]

ALLOCATIONS = tuple(ValidationSample.Allocation.values)
#: Items one draw may add, at most.
MAX_DRAW = 1_000_000
MAX_SEED = 2**63 - 1
#: How a stratum reads when its field is absent from an item.
MISSING_STRATUM = "(missing)"

SIZE_NEEDED = "give either the number of items or a fraction of the project, not both and not neither"
BAD_N = f"must be a whole number from 1 to {MAX_DRAW}"
BAD_FRACTION = "must be a number above 0 and at most 1"
BAD_SEED = f"must be a whole number from 0 to {MAX_SEED}"
BAD_ALLOCATION = f"must be one of {', '.join(ALLOCATIONS)}"
UNKNOWN_STRATA_FIELD = "{field!r} is no payload field of {kind} items (nor meta.<key>); fields: {fields}"
FIELD_ON_NO_ITEM = (
    "no item of the project has {field!r}: check the spelling (a field no item has puts every item in one stratum)"
)
STRATA_FIXED = (
    "this sample is stratified by {current}; every draw of a sample uses its strata (discard the draws before "
    "anyone labels them to start again)"
)
NO_DRAW = "the project has no validation sample draw to discard"
NOT_LATEST = "only the latest draw (draw {latest}) can be discarded"
DRAW_STARTED = (
    "draw {number} cannot be discarded: people have already labelled or opened {n} of its items "
    "(a draw can be discarded only before anyone labels it)"
)
NOTHING_LEFT = "every item of the project is already in the validation sample"


class SampleExhausted(ConcordError):
    code = "sample_exhausted"
    http_status = 409


class DrawNotDiscardable(ConcordError):
    code = "draw_not_discardable"
    http_status = 409


@dataclass(frozen=True)
class SampleDesign:
    """How a project's validation sample was drawn, as estimates need it."""

    strata_field: str
    #: Inclusion probability by stratum after the latest draw ("" is the only stratum without strata).
    probabilities: dict[str, float]
    sampled_item_ids: frozenset[int]
    draws: int

    def stratum_of(self, payload: dict) -> str:
        return item_stratum(payload, self.strata_field)


def item_stratum(payload: dict, field: str) -> str:
    """The stratum an item belongs to: its ``field`` value (``meta.<key>`` reads the meta object) as
    text; "" when the sample is not stratified."""
    if not field:
        return ""
    if field.startswith("meta."):
        value = (payload.get("meta") or {}).get(field.removeprefix("meta."), None)
    else:
        value = payload.get(field)
    if value is None:
        return MISSING_STRATUM
    return value if isinstance(value, str) else json.dumps(value, sort_keys=True, ensure_ascii=False)


def _check_draw(
    project: Project, *, n: int | None, fraction: float | None, strata: str, allocation: str, seed: Any
) -> None:
    errors = []
    if (n is None) == (fraction is None):
        errors.append(FieldError("n", SIZE_NEEDED))
    if n is not None and (isinstance(n, bool) or not isinstance(n, int) or not 1 <= n <= MAX_DRAW):
        errors.append(FieldError("n", BAD_N))
    if fraction is not None and (
        isinstance(fraction, bool) or not isinstance(fraction, (int, float)) or not 0 < fraction <= 1
    ):
        errors.append(FieldError("fraction", BAD_FRACTION))
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed <= MAX_SEED:
        errors.append(FieldError("seed", BAD_SEED))
    if allocation not in ALLOCATIONS:
        errors.append(FieldError("allocation", BAD_ALLOCATION))
    fields = project.task_kind.payload_fields
    if strata and not (strata in fields or (strata.startswith("meta.") and len(strata) > len("meta."))):
        message = UNKNOWN_STRATA_FIELD.format(field=strata[:100], kind=project.kind, fields=", ".join(fields))
        errors.append(FieldError("strata", message))
    elif strata and not project_items_have_field(project=project, field=strata):
        errors.append(FieldError("strata", FIELD_ON_NO_ITEM.format(field=strata[:100])))
    if errors:
        raise ValidationFailed(errors)


def project_items_have_field(*, project: Project, field: str) -> bool:
    """Whether some item of the project carries ``field`` (``meta.<key>``: a key of its meta object)
    with a value: a field no item has is a typo, not a stratum or a group."""
    if field.startswith("meta."):
        # The key as one literal (a key may hold "__", which a lookup path would split).
        text = KeyTextTransform(field.removeprefix("meta."), KeyTransform("meta", "payload"))
    else:
        text = KeyTextTransform(field, "payload")
    return Item.objects.filter(project=project).alias(value=text).filter(value__isnull=False).exists()


def _allocate(want: int, remaining: dict[str, int], sizes: dict[str, int], allocation: str) -> dict[str, int]:
    """How many of ``want`` items each stratum gives: by stratum size (largest remainders) or equally,
    never more than a stratum has left; what a full stratum cannot give goes to the others."""
    take = dict.fromkeys(remaining, 0)
    left = min(want, sum(remaining.values()))
    while left > 0:
        open_strata = [s for s in sorted(remaining) if remaining[s] > take[s]]
        shares = {s: (sizes[s] if allocation == ValidationSample.Allocation.PROPORTIONAL else 1) for s in open_strata}
        total = sum(shares.values())
        exact = {s: left * shares[s] / total for s in open_strata}
        quota = {s: min(math.floor(exact[s]), remaining[s] - take[s]) for s in open_strata}
        spare = left - sum(quota.values())
        for s in sorted(open_strata, key=lambda s: (-(exact[s] - math.floor(exact[s])), s)):
            if spare == 0:
                break
            if quota[s] < remaining[s] - take[s]:
                quota[s] += 1
                spare -= 1
        given = sum(quota.values())
        for s, k in quota.items():
            take[s] += k
        left -= given
        if given == 0:
            break
    return take


@transaction.atomic
def validation_sample_draw(
    *,
    project: Project,
    seed: int,
    n: int | None = None,
    fraction: float | None = None,
    strata: str = "",
    allocation: str = ValidationSample.Allocation.PROPORTIONAL,
    user: Any = None,
) -> SampleDraw:
    """Draw ``n`` more items (or ``fraction`` of the project's items) into the project's validation
    sample, at random with ``seed``, stratified by ``strata`` when given; hold the others out of
    serving. The first draw creates the sample; later ones extend it with the same strata."""
    _check_draw(project, n=n, fraction=fraction, strata=strata, allocation=allocation, seed=seed)
    Project.objects.select_for_update().filter(pk=project.pk).first()  # one draw of a project at a time
    sample = ValidationSample.objects.filter(project=project).first()
    if sample is not None and sample.strata_field != strata:
        current = repr(sample.strata_field) if sample.strata_field else "no field (a simple random sample)"
        raise ValidationFailed([FieldError("strata", STRATA_FIXED.format(current=current))])
    if sample is None:
        sample = ValidationSample(project=project, strata_field=strata, allocation=allocation)
        sample.full_clean(exclude=["project"])
        sample.save()
    already = set(SampleItem.objects.filter(sample=sample).values_list("item_id", flat=True))
    by_stratum: dict[str, list[int]] = {}
    sizes: dict[str, int] = {}
    rows = Item.objects.filter(project=project, gold_value__isnull=True).order_by("pk").values_list("pk", "payload")
    for pk, payload in rows.iterator(chunk_size=5000):
        stratum = item_stratum(payload, strata)
        sizes[stratum] = sizes.get(stratum, 0) + 1
        if pk not in already:
            by_stratum.setdefault(stratum, []).append(pk)
    remaining = {s: len(ids) for s, ids in by_stratum.items()}
    if not any(remaining.values()):
        raise SampleExhausted(NOTHING_LEFT)
    if n is not None:
        want = n
    else:
        assert fraction is not None  # _check_draw refused a draw with neither
        want = max(1, math.ceil(fraction * sum(sizes.values())))
    take = _allocate(want, remaining, sizes, allocation)
    rng = np.random.default_rng(seed)
    chosen: dict[str, list[int]] = {}
    for stratum in sorted(take):
        ids = by_stratum[stratum]
        picks: list[int] | np.ndarray = rng.choice(len(ids), size=take[stratum], replace=False) if take[stratum] else []
        chosen[stratum] = sorted(ids[i] for i in picks)
    sampled_per_stratum = {s: sizes[s] - remaining.get(s, 0) + take.get(s, 0) for s in sizes}
    design = {
        s: {"population": sizes[s], "sampled": sampled_per_stratum[s], "probability": sampled_per_stratum[s] / sizes[s]}
        for s in sorted(sizes)
    }
    number = SampleDraw.objects.filter(sample=sample).count() + 1
    draw = SampleDraw(
        sample=sample,
        number=number,
        seed=seed,
        requested_n=n,
        requested_fraction=fraction,
        drawn=sum(take.values()),
        strata=design,
        created_by=user if getattr(user, "pk", None) else None,
    )
    draw.full_clean(exclude=["sample", "created_by"])
    draw.save()
    SampleItem.objects.bulk_create(
        [
            SampleItem(sample=sample, draw=draw, item_id=pk, stratum=s, inclusion_probability=design[s]["probability"])
            for s, ids in chosen.items()
            for pk in ids
        ],
        batch_size=2000,
    )
    new_ids = [pk for ids in chosen.values() for pk in ids]
    statistics_refreshed(SampleItem, len(new_ids))
    _serve_only_sampled(project, sample, new_ids)
    return draw


def _started(items: Any) -> Any:
    """Those of ``items`` someone labelled or holds."""
    return items.filter(Q(assigned_count__gt=0) | Exists(Annotation.objects.filter(item_id=OuterRef("pk"))))


def sample_discardable_draw(*, project: Project) -> int | None:
    """The number of the latest draw while nobody labelled or holds one of its items, else None
    (the page offers to discard it; ``validation_sample_discard`` checks again)."""
    latest = SampleDraw.objects.filter(sample__project=project).order_by("-number").first()
    if latest is None:
        return None
    drawn = Item.objects.filter(Exists(SampleItem.objects.filter(draw=latest, item_id=OuterRef("pk"))))
    return None if _started(drawn).exists() else latest.number


@transaction.atomic
def validation_sample_discard(*, project: Project, number: int | None = None) -> int:
    """Discard the latest draw (``number``, when given, must name it) before anyone labelled or
    opened one of its items: its items are held out again; discarding the first draw removes the
    sample, so every item is served again and a new sample may take other strata. The number."""
    Project.objects.select_for_update().filter(pk=project.pk).first()  # as a draw: one at a time
    latest = SampleDraw.objects.filter(sample__project=project).select_related("sample").order_by("-number").first()
    if latest is None:
        raise DrawNotDiscardable(NO_DRAW)
    if number is not None and number != latest.number:
        raise DrawNotDiscardable(NOT_LATEST.format(latest=latest.number))
    drawn = Item.objects.filter(Exists(SampleItem.objects.filter(draw=latest, item_id=OuterRef("pk"))))
    touched = _started(drawn).count()
    if touched:
        raise DrawNotDiscardable(DRAW_STARTED.format(number=latest.number, n=touched))
    if latest.number == 1:
        latest.sample.delete()  # its draws and items go with it
        places_serve(Item.objects.filter(project=project, gold_value__isnull=True, held_out=True),
                     overlap=project.overlap)  # fmt: skip
    else:
        places_hold_out(drawn)
        latest.delete()
    return latest.number


def _serve_only_sampled(project: Project, sample: ValidationSample, new_ids: Iterable[int]) -> None:
    """Sampled items are served as any item; the others are held out (closed, never reopened)."""
    new_ids = list(new_ids)
    for start in range(0, len(new_ids), 900):
        places_serve(Item.objects.filter(pk__in=new_ids[start : start + 900]), overlap=project.overlap)
    sample_hold_out_new_items(project=project)


def sample_hold_out_new_items(*, project: Project) -> int:
    """Hold out the project's regular items that are not in its validation sample (items imported
    after a draw): only a draw puts an item in front of people. None without a sample; the count."""
    sample = ValidationSample.objects.filter(project=project).first()
    if sample is None:
        return 0
    sampled = SampleItem.objects.filter(sample=sample, item_id=OuterRef("pk"))
    return places_hold_out(
        Item.objects.filter(project=project, gold_value__isnull=True, held_out=False).exclude(Exists(sampled))
    )


def sample_draws(*, project: Project) -> list[SampleDraw]:
    """The project's draws, first first (none without a sample)."""
    return list(
        SampleDraw.objects.filter(sample__project=project)
        .select_related("sample__project", "created_by")
        .order_by("number")
    )


def project_sample_design(*, project: Project) -> SampleDesign | None:
    """The project's validation sample as estimates weight it, or None when it has none."""
    sample = ValidationSample.objects.filter(project=project).first()
    if sample is None:
        return None
    latest = SampleDraw.objects.filter(sample=sample).order_by("-number").first()
    probabilities = {s: float(info["probability"]) for s, info in (latest.strata if latest else {}).items()}
    ids = frozenset(SampleItem.objects.filter(sample=sample).values_list("item_id", flat=True))
    return SampleDesign(
        strata_field=sample.strata_field,
        probabilities=probabilities,
        sampled_item_ids=ids,
        draws=latest.number if latest else 0,
    )


def draw_json(draw: SampleDraw) -> dict[str, Any]:
    """A draw as the command and the API show it."""
    return {
        "project": draw.sample.project.slug,
        "draw": draw.number,
        "seed": draw.seed,
        "n": draw.requested_n,
        "fraction": draw.requested_fraction,
        "drawn": draw.drawn,
        "strata_field": draw.sample.strata_field or None,
        "strata": draw.strata,
        "created_at": draw.created_at.isoformat(),
        "created_by": draw.created_by.get_username() if draw.created_by else None,
    }
