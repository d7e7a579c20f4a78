"""The estimates demo: a sampled project whose estimates can be read, and a rerun that changes nothing."""

import pytest

from annotation.demo import demo_load
from annotation.models import Annotation, Item
from validation.estimates.build import EstimateParameters, project_estimates
from validation.kinds.copa_likert.estimates_demo import DEMO_SLUG, SAMPLE, demo_estimates_load

pytestmark = pytest.mark.django_db


class DemoEstimatesTests:
    def test_the_demo_has_a_sample_a_run_and_estimates_and_reruns_unchanged(self):
        demo_load()
        first = demo_estimates_load()
        assert first.created and first.sampled == SAMPLE
        counts = (Item.objects.count(), Annotation.objects.count())
        again = demo_estimates_load()
        assert not again.created and (Item.objects.count(), Annotation.objects.count()) == counts
        project = Item.objects.filter(project__slug=DEMO_SLUG).first().project
        result = project_estimates(project=project, parameters=EstimateParameters(run=first.run, by="response_source"))
        overall = result.result["estimates"][0]
        assert result.result["sampled_by_concord"] is True and result.result["n_labeled"] == SAMPLE
        assert overall["prediction_powered"]["ci"] is not None
        # The simulated raters score above the baseline: the model-only mean is below the people's.
        assert overall["model_only"]["estimate"] < overall["people_only"]["estimate"]
