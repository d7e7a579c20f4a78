"""The people's validation of an IPQA project by question complexity, by hand and with krippendorff."""

from __future__ import annotations

import json
import shutil

import krippendorff
import numpy as np
import pytest
from django.core.management.base import CommandError
from django.urls import reverse

from annotation.models import Item, Role
from annotation.services import membership_add
from tests.validation.conftest import annotate
from tests.validation.evaluations.test_commands import (
    assert_pdflatex_compiles,
    assert_well_formed_booktabs,
    run_command,
)
from tests.validation.evaluations.test_ipqa_eval import QUESTION, gold

pytestmark = pytest.mark.django_db


@pytest.fixture
def validated(make_project):
    """v1 (2 expressed, 1 core), v2 (1 expressed, 1 core), v3 (1 expressed, 0 core) have known-answer gold;
    v4 has none. Two annotators: they disagree on v1's B (expressed) and v2's C (core)."""
    project = make_project("ipqa_core_intent", slug="ipqa")
    golds = {
        "v1": gold(("A", True, True), ("B", True, False)),
        "v2": gold(("C", True, True)),
        "v3": gold(("D", True, False)),
        "v4": None,
    }
    items = {}
    for external_id, value in golds.items():
        intents = [j["intent"] for j in value["intents"]] if value else ["E"]
        payload = {"question": QUESTION, "selected_answer": "Dry it.", "candidate_intents": intents}
        items[external_id] = Item.objects.create(
            project=project, external_id=external_id, payload=payload, gold_value=value
        )
    answers = {
        "ann1": {"v1": (("A", 1, 1), ("B", 1, 0)), "v2": (("C", 1, 1),), "v3": (("D", 1, 0),)},
        "ann2": {"v1": (("A", 1, 1), ("B", 0, 0)), "v2": (("C", 1, 0),), "v3": (("D", 1, 0),)},
    }
    for rater, by_item in answers.items():
        for external_id, intents in by_item.items():
            annotate(project, items[external_id], rater, gold(*((i, bool(e), bool(c)) for i, e, c in intents)))
    return project


def _groups(data, key):
    return {g["n"]: g for g in data["by_complexity"][key]}


class IpqaValidationCommandTests:
    def test_agreement_per_complexity_by_hand(self, validated):
        data = json.loads(run_command("ipqa_validation", "ipqa", "--bootstrap", "0"))
        assert data["items_without_gold"] == 1 and data["raters"] == ["ann1", "ann2"]
        expressed = _groups(data, "expressed_intents")
        # 1 expressed intent: v2 (C) and v3 (D): both agree on expressed; on core C differs, D agrees.
        assert (expressed[1]["n_items"], expressed[1]["n_units"]) == (2, 2)
        assert expressed[1]["expressed"]["percent_agreement"]["statistic"] == 1.0
        assert expressed[1]["expressed"]["krippendorff_alpha"]["statistic"] is None  # every rating "yes"
        assert expressed[1]["core"]["percent_agreement"]["statistic"] == 0.5
        # 2 expressed intents: v1 (A, B): B differs on expressed; both agree on core.
        assert expressed[2]["expressed"]["percent_agreement"]["statistic"] == 0.5
        assert expressed[2]["core"]["percent_agreement"]["statistic"] == 1.0
        core = _groups(data, "core_intents")
        assert (core[0]["n_items"], core[1]["n_items"], core[1]["n_units"]) == (1, 2, 3)
        # 1 core intent: v1 (A, B) and v2 (C): expressed A=, B≠, C=; core A=, B=, C≠.
        assert core[1]["expressed"]["percent_agreement"]["statistic"] == pytest.approx(2 / 3)
        assert core[1]["core"]["percent_agreement"]["statistic"] == pytest.approx(2 / 3)
        by_library = krippendorff.alpha(np.array([[1, 0, 1], [1, 0, 0]], dtype=float), level_of_measurement="nominal")
        assert core[1]["core"]["krippendorff_alpha"]["statistic"] == pytest.approx(by_library)

    def test_latex_freeze_check_and_bad_input(self, validated, make_project):
        latex = run_command("ipqa_validation", "ipqa", "--bootstrap", "0", "--format", "latex")
        assert_well_formed_booktabs(latex)
        assert r"\label{tab:concord-ipqa_validation_by_complexity}" in latex
        # People's intervals resample the items (each with all its intents); the units' interval is beside it.
        resampled = json.loads(run_command("ipqa_validation", "ipqa", "--bootstrap", "50"))
        agreement = resampled["by_complexity"]["expressed_intents"][0]["expressed"]["percent_agreement"]
        assert agreement["resampled"] == "items" and "confidence_interval_units" in agreement
        assert "resample the items" in run_command("ipqa_validation", "ipqa", "--bootstrap", "50", "--format", "md")
        frozen = json.loads(run_command("ipqa_validation", "ipqa", "--bootstrap", "20", "--freeze"))
        check = json.loads(run_command("ipqa_validation", "ipqa", "--check", str(frozen["snapshot"])))
        assert check["numbers_match"] and check["inputs_match"]
        make_project("copa_likert", slug="copa")
        for args, message in ((("copa",), "ipqa_core_intent projects"), (("ipqa", "--judge-run", "99999"), "99999")):
            with pytest.raises(CommandError, match=message) as caught:
                run_command("ipqa_validation", *args)
            assert caught.value.returncode == 1


class IpqaValidationPageTests:
    def test_the_page_and_the_api_show_the_table_to_researchers(self, validated, make_user, client):
        researcher = make_user("r")
        membership_add(project=validated, user=researcher, role=Role.RESEARCHER)
        client.force_login(researcher)
        page = reverse("evaluation", args=[validated.slug, "validation-complexity"])
        assert page in client.get(reverse("report", args=[validated.slug])).content.decode()
        body = client.get(page + "?bootstrap=0&seed=0").content.decode()
        assert "IPQA human validation by question complexity" in body and "2 expressed intents" in body
        api = reverse("api_evaluation", args=[validated.slug, "validation-complexity"])
        data = client.get(api + "?bootstrap=0").json()
        assert _groups(data, "core_intents")[1]["n_units"] == 3
        assert client.get(api + "?judge_run=99999").status_code == 400


@pytest.mark.skipif(shutil.which("pdflatex") is None, reason="pdflatex is not installed")
def test_the_complexity_table_compiles_with_booktabs(validated, tmp_path):
    assert_pdflatex_compiles(run_command("ipqa_validation", "ipqa", "--bootstrap", "0", "--format", "latex"), tmp_path)
