"""An annotator's own pace: labels a day over the last weeks, and the median time an item takes."""

from __future__ import annotations

import statistics
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta

from django.utils import timezone

from annotation.models import Annotation

PACE_DAYS = 30


@dataclass(frozen=True)
class PaceDay:
    day: date
    items: int  # first answers given that day (edits are not new items)
    median_seconds: float | None  # median time on item of those answers


@dataclass(frozen=True)
class Pace:
    days: list[PaceDay]  # oldest first, one per calendar day (UTC), days without answers included
    items: int
    median_seconds: float | None

    @property
    def busiest(self) -> int:
        return max((d.items for d in self.days), default=0)

    @property
    def last_day(self) -> date | None:
        return self.days[-1].day if self.days else None


def annotator_pace(*, user, days: int = PACE_DAYS, today: date | None = None) -> Pace:
    """Items per day and median seconds per item over the user's last ``days`` days, all projects.

    Counts first versions of answers given in the workspace or through the API (imported labels
    are not the user's pace)."""
    today = today or timezone.now().date()
    first_day = today - timedelta(days=days - 1)
    since = datetime.combine(first_day, time.min, tzinfo=UTC)
    per_day: dict[date, list[float | None]] = {}
    rows = Annotation.objects.filter(
        rater=user.username,
        version=1,
        source__in=[Annotation.Source.WEB, Annotation.Source.API],
        created_at__gte=since,
    ).values_list("created_at", "seconds_on_item")
    for created_at, seconds_on_item in rows.iterator(chunk_size=5000):
        per_day.setdefault(created_at.astimezone(UTC).date(), []).append(seconds_on_item)
    series: list[PaceDay] = []
    all_seconds: list[float] = []
    for offset in range(days):
        day = first_day + timedelta(days=offset)
        answers = per_day.get(day, [])
        seconds = [s for s in answers if s is not None]
        all_seconds.extend(seconds)
        series.append(
            PaceDay(day=day, items=len(answers), median_seconds=statistics.median(seconds) if seconds else None)
        )
    return Pace(
        days=series,
        items=sum(d.items for d in series),
        median_seconds=statistics.median(all_seconds) if all_seconds else None,
    )
