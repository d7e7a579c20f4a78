"""The demo generation runs: one finished run per step, baselines marked as demo content; safe to rerun."""

from __future__ import annotations

import pytest

from judges.generation.demo import demo_generation_load, demo_steps
from judges.generation.steps import step_names
from judges.models import GenerationRun

pytestmark = pytest.mark.django_db


def test_demo_ships_one_finished_baseline_run_per_step_and_a_rerun_changes_nothing():
    first = demo_generation_load()
    assert {r.step for r in first} == set(step_names()) and all(r.created for r in first)
    runs = GenerationRun.objects.all()
    assert runs.count() == len(demo_steps())
    assert all(r.status == "completed" and r.is_demo and r.is_baseline and r.items_created > 0 for r in runs)
    second = demo_generation_load()
    assert not any(r.created for r in second) and GenerationRun.objects.count() == len(demo_steps())
