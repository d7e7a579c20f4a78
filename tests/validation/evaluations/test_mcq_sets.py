"""IntentGrasp's evaluation sets (the Gem Set, uniform subsets) and runs that cover only a subset."""

from __future__ import annotations

import json
import random
import shutil

import numpy as np
import pytest
from django.core.management.base import CommandError
from django.urls import reverse

from annotation.models import Role
from annotation.services import membership_add
from tests.validation.conftest import suggest
from tests.validation.evaluations.conftest import mcq_item
from tests.validation.evaluations.test_commands import (
    assert_pdflatex_compiles,
    assert_well_formed_booktabs,
    run_command,
)
from validation.kinds.intent_mcq.mcq_sets import (
    REPEATED_SEED,
    downsample_per_domain,
    failed_by_every_run,
    uniform_subsets,
)
from validation.models import ReportSnapshot

NAN = float("nan")


class GemSetStatisticsTests:
    def test_failed_by_every_run_by_hand(self):
        # i0: A right, B wrong; i1: both partly right (F1 < 1); i2: A unreadable, B wrong; i3: B never saw it;
        # i4: both right.
        f1 = [[1.0, 0.5, NAN, 0.0, 1.0], [0.0, 0.5, 0.0, NAN, 1.0]]
        covered = [[True] * 5, [True, True, True, False, True]]
        failed, uncovered = failed_by_every_run(f1, covered)
        assert failed.tolist() == [False, True, True, False, False]
        assert uncovered.tolist() == [False, False, False, True, False]

    def test_each_domain_keeps_at_most_the_cap_drawn_by_numpy_from_the_seed(self):
        domains = ["b", "a", "a", "c", "a", "c"]
        kept = downsample_per_domain(domains, per_domain=2, seed=5)
        # Domains in sorted order from one generator: only "a" (positions 1, 2, 4) has more than 2.
        drawn = np.random.default_rng(5).choice(np.array([1, 2, 4]), 2, replace=False)
        assert kept.tolist() == sorted([*drawn.tolist(), 0, 3, 5])
        assert downsample_per_domain(domains, per_domain=3, seed=5).tolist() == [0, 1, 2, 3, 4, 5]

    def test_uniform_subsets_are_the_releases_random_sample_one_per_seed(self):
        """The released code's draw, word for word: ``random.seed(s); random.sample(instances, 470)`` on
        an All Set of 1,200 instances picks the same 470 instances per seed."""
        instances = [f"inst-{number:05d}" for number in range(1200)]
        subsets = uniform_subsets(len(instances), size=470, seeds=(42, 43, 44))
        for seed, subset in zip((42, 43, 44), subsets, strict=True):
            random.seed(seed)
            released = random.sample(instances, 470)
            assert [instances[i] for i in subset] == sorted(released)
        with pytest.raises(ValueError, match="draw must be one of"):
            uniform_subsets(10, size=3, seeds=(1,), draw="torch")

    def test_numpy_s_draw_is_kept_as_an_option(self):
        subsets = uniform_subsets(10, size=3, seeds=(42, 43, 44), draw="numpy")
        for seed, subset in zip((42, 43, 44), subsets, strict=True):
            assert subset.tolist() == sorted(np.random.default_rng(seed).choice(10, 3, replace=False).tolist())
        with pytest.raises(ValueError, match="larger than the 10"):
            uniform_subsets(10, size=11, seeds=(1,))
        with pytest.raises(ValueError, match=REPEATED_SEED.format(seed=42)):
            uniform_subsets(10, size=3, seeds=(42, 42))


@pytest.fixture
def all_set(make_project, judge_run):
    """Six instances, two models' first runs: g1, g2, g3 (daily life) and g5 are failed by both;
    g4 is answered right by one; g6 was never given to the second model."""
    project = make_project("intent_mcq", slug="all")
    items = {
        "g1": mcq_item(project, "g1", [0], "SNIPS", "daily life", "query"),
        "g2": mcq_item(project, "g2", [0, 1], "SNIPS", "daily life", "query"),
        "g3": mcq_item(project, "g3", [2], "SNIPS", "daily life", "query"),
        "g4": mcq_item(project, "g4", [1], "SciCite", "writing", "monologue"),
        "g5": mcq_item(project, "g5", [3], "SciCite", "writing", "monologue"),
        "g6": mcq_item(project, "g6", [0], "SciCite", "writing", "monologue"),
    }
    first = judge_run(project, name="model-a", seed=None)
    second = judge_run(project, name="model-b", prompt="intentgrasp_mcq_cot", seed=None)
    for external_id, chosen in (("g1", [1]), ("g2", [0]), ("g3", [0]), ("g4", [1]), ("g5", [0]), ("g6", [1])):
        suggest(first, items[external_id], {"chosen": chosen})
    for external_id, chosen in (("g1", [2]), ("g2", [0, 1, 2]), ("g4", [0]), ("g5", [1])):
        suggest(second, items[external_id], {"chosen": chosen})
    suggest(second, items["g3"], None, failure="no answer")  # unreadable: a failure
    return project, items, first, second


@pytest.mark.django_db
class GemSetCommandTests:
    def test_the_gem_set_by_hand_and_its_item_file(self, all_set, tmp_path):
        project, _, first, second = all_set
        output = tmp_path / "gem.jsonl"
        args = ("mcq_gem_set", "all", "--run", str(first.pk), "--run", str(second.pk), "--per-domain", "2")
        data = json.loads(run_command(*args, "--seed", "3", "-o", str(output)))
        assert (data["n_instances"], data["failed_by_every_run"], data["not_covered_by_every_run"]) == (6, 4, 1)
        by_domain = {d["domain"]: (d["instances"], d["failed_by_every_run"], d["chosen"]) for d in data["domains"]}
        assert by_domain == {"daily life": (3, 3, 2), "writing": (3, 1, 1)}
        # Daily life draws 2 of its 3 candidates (g1, g2, g3) from the seed; writing keeps g5.
        drawn = np.random.default_rng(3).choice(np.array([0, 1, 2]), 2, replace=False)
        assert data["items"] == [*(f"g{i + 1}" for i in sorted(drawn.tolist())), "g5"]
        lines = [json.loads(line) for line in output.read_text().splitlines()]
        assert [line["external_id"] for line in lines] == data["items"]
        assert lines[-1]["answers"] == [3] and lines[-1]["meta"]["domain"] == "writing"
        latex = run_command(*args, "--format", "latex")
        assert_well_formed_booktabs(latex)
        assert r"\label{tab:concord-mcq_gem_set}" in latex

    def test_freeze_and_check_and_bad_input(self, all_set):
        _, _, first, second = all_set
        args = ("mcq_gem_set", "all", "--run", str(first.pk), "--run", str(second.pk))
        frozen = json.loads(run_command(*args, "--freeze"))
        assert ReportSnapshot.objects.get(pk=frozen["snapshot"]).evaluation == "mcq_gem_set"
        check = json.loads(run_command("mcq_gem_set", "all", "--check", str(frozen["snapshot"])))
        assert check["numbers_match"] and check["inputs_match"]
        for bad, message in (
            ((), "first run"),
            (("--run", "999999"), "does not exist"),
            (args[2:] + ("--per-domain", "0"), "at least 1"),
        ):
            with pytest.raises(CommandError, match=message) as caught:
                run_command("mcq_gem_set", "all", *bad)
            assert caught.value.returncode == 1


@pytest.mark.django_db
class SubsetsCommandTests:
    def test_three_seeded_subsets_and_their_item_files(self, all_set, tmp_path):
        data = json.loads(run_command("mcq_subsets", "all", "--size", "2", "-o", str(tmp_path)))
        assert [s["seed"] for s in data["subsets"]] == [42, 43, 44]
        ids = ["g1", "g2", "g3", "g4", "g5", "g6"]
        for subset in data["subsets"]:
            random.seed(subset["seed"])  # the release's draw
            assert subset["items"] == sorted(random.sample(ids, 2))
            numpy = json.loads(run_command("mcq_subsets", "all", "--size", "2", "--seed", str(subset["seed"]),
                                           "--draw", "numpy"))  # fmt: skip
            expected = sorted(np.random.default_rng(subset["seed"]).choice(6, 2, replace=False).tolist())
            assert numpy["subsets"][0]["items"] == [ids[i] for i in expected]
            written = (tmp_path / f"all-sample-{subset['seed']}.jsonl").read_text().splitlines()
            assert [json.loads(line)["external_id"] for line in written] == subset["items"]
        latex = run_command("mcq_subsets", "all", "--size", "2", "--seed", "7", "--format", "latex")
        assert_well_formed_booktabs(latex)
        assert "sample-7" in latex
        with pytest.raises(CommandError, match="larger than the 6") as caught:
            run_command("mcq_subsets", "all", "--size", "7")
        assert caught.value.returncode == 1


@pytest.mark.django_db
class SubsetRunTests:
    def test_a_run_is_scored_on_the_items_it_covers(self, all_set):
        """A run given only some items leaves the others out of both columns, and says its n."""
        project, items, first, second = all_set
        data = json.loads(run_command("mcq_eval", "all", "--run", str(first.pk), "--run", str(second.pk)))
        a, b = data["runs"]
        assert (a["n_instances"], a["n_answered"], a["not_covered"]) == (6, 6, 0)
        # Model b covers g1-g5: F1 g1 0, g2 2·2/(3+2) = 0.8, g3 failed, g4 0, g5 0.
        assert (b["n_instances"], b["n_answered"], b["parse_failures"], b["not_covered"]) == (5, 4, 1, 1)
        assert b["f1"]["failures_scored_zero"] == pytest.approx(0.8 / 5)
        assert b["f1"]["failures_left_out"] == pytest.approx(0.8 / 4)
        writing = next(g for g in data["breakdowns"]["domain"] if g["group"] == "writing")
        # Writing: b saw g4 and g5 only, both wrong; a got g4 right.
        assert writing["runs"][1]["failures_scored_zero"] == 0.0 and writing["runs"][0]["failures_scored_zero"] == 1 / 3
        markdown = run_command("mcq_eval", "all", "--run", str(second.pk), "--format", "md")
        assert "| Run | Instances | Answered | Failed |" in markdown


@pytest.mark.django_db
class SetPagesTests:
    def test_researchers_read_the_gem_set_page_and_the_api_annotators_do_not(self, all_set, make_user, client):
        project, _, first, second = all_set
        query = f"?run={first.pk}&run={second.pk}&per_domain=5&seed=0"
        page = reverse("evaluation", args=[project.slug, "gem-set"])
        api = reverse("api_evaluation", args=[project.slug, "gem-set"])
        annotator = make_user("a")
        membership_add(project=project, user=annotator, role=Role.ANNOTATOR)
        client.force_login(annotator)
        assert client.get(page + query).status_code == 403
        assert client.get(api + query).status_code == 403
        researcher = make_user("r")
        membership_add(project=project, user=researcher, role=Role.RESEARCHER)
        client.force_login(researcher)
        assert page in client.get(reverse("report", args=[project.slug])).content.decode()
        body = client.get(page + query).content.decode()
        assert "IntentGrasp Gem Set by domain" in body and "g5" in body
        data = client.get(api + query).json()
        assert data["items"] == ["g1", "g2", "g3", "g5"]
        refused = client.get(api + f"?run={first.pk}&per_domain=0")
        assert refused.status_code == 400 and "per_domain" in json.dumps(refused.json())

    def test_the_subsets_api_and_a_freeze_from_it(self, all_set, make_user, client):
        project = all_set[0]
        researcher = make_user("r")
        membership_add(project=project, user=researcher, role=Role.RESEARCHER)
        client.force_login(researcher)
        api = reverse("api_evaluation", args=[project.slug, "subsets"])
        data = client.get(api + "?size=3&seeds=42,43").json()
        assert [len(s["items"]) for s in data["subsets"]] == [3, 3]
        assert client.get(api + "?size=3&seeds=42,x").status_code == 400
        frozen = client.post(api, {"size": 3, "seeds": "42 43", "freeze": "true", "title": "subsets"})
        assert frozen.status_code == 201
        assert ReportSnapshot.objects.get(pk=frozen.json()["snapshot"]).evaluation == "mcq_subsets"
        tables = client.get(api + "?size=3&seeds=42&output=md")
        assert tables.status_code == 200 and "| Domain | All Set | sample-42 |" in tables.content.decode()


@pytest.mark.django_db
@pytest.mark.skipif(shutil.which("pdflatex") is None, reason="pdflatex is not installed")
def test_the_set_tables_compile_with_booktabs(all_set, tmp_path):
    _, _, first, second = all_set
    gem = run_command("mcq_gem_set", "all", "--run", str(first.pk), "--run", str(second.pk), "--format", "latex")
    assert_pdflatex_compiles(gem, tmp_path)
    assert_pdflatex_compiles(run_command("mcq_subsets", "all", "--size", "2", "--format", "latex"), tmp_path)
