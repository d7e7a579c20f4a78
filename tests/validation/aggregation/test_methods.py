"""Aggregation by crowd-kit's models: a simulated panel with a spammer, and equality with crowd-kit
called directly on the same ``task, worker, label`` frame."""

import numpy as np
import pandas as pd
import pytest
from crowdkit.aggregation import GLAD, MACE, DawidSkene, MajorityVote, Wawa

from validation.aggregation.methods import METHOD_PARAMETERS, aggregate_question, fit_model

CLASSES = (0, 1, 2)


def simulated_panel(n_items: int, seed: int) -> tuple[pd.DataFrame, np.ndarray]:
    """Two good annotators with known confusion matrices and a spammer answering uniformly at random."""
    rng = np.random.default_rng(seed)
    truth = rng.integers(0, 3, n_items)
    confusions = {
        "ann": np.array([[0.85, 0.1, 0.05], [0.1, 0.8, 0.1], [0.05, 0.15, 0.8]]),
        "bob": np.array([[0.8, 0.15, 0.05], [0.1, 0.75, 0.15], [0.05, 0.1, 0.85]]),
        "spammer": np.full((3, 3), 1 / 3),
    }
    rows = []
    for worker, confusion in confusions.items():
        for task, true in enumerate(truth):
            rows.append((task, worker, int(rng.choice(CLASSES, p=confusion[true]))))
    return pd.DataFrame(rows, columns=["task", "worker", "label"]), truth


class SpammerPanelTests:
    def test_dawid_skene_finds_the_spammer_and_recovers_more_true_labels_than_the_majority(self):
        frame, truth = simulated_panel(400, seed=11)
        ds = aggregate_question(frame, method="dawid_skene", seed=0)
        majority = aggregate_question(frame, method="majority", seed=0)
        competence = {a.rater: a.competence for a in ds.annotators}
        assert min(competence, key=competence.get) == "spammer"
        assert competence["spammer"] < 0.5 < min(competence["ann"], competence["bob"])
        recovered_ds = int(np.sum(np.asarray(ds.labels) == truth))
        recovered_majority = sum(m is not None and m == t for m, t in zip(majority.labels, truth, strict=True))
        # Even against crowd-kit's vote, which breaks ties by the first label rather than leaving them.
        recovered_vote = int(np.sum(MajorityVote().fit_predict(frame).sort_index().to_numpy() == truth))
        assert recovered_ds > recovered_majority
        assert recovered_ds > recovered_vote
        assert ds.flips > 0 and majority.flips == 0

    def test_mace_and_glad_rank_the_spammer_last(self):
        frame, _ = simulated_panel(150, seed=3)
        mace = aggregate_question(frame, method="mace", seed=0)
        spamming = {a.rater: a.spamming for a in mace.annotators}
        assert max(spamming, key=spamming.get) == "spammer"
        glad = aggregate_question(frame, method="glad", seed=0)
        ability = {a.rater: a.competence for a in glad.annotators}
        assert min(ability, key=ability.get) == "spammer"

    def test_a_tie_has_no_majority_and_is_no_flip(self):
        frame = pd.DataFrame({"task": [0, 0, 1, 1], "worker": ["a", "b", "a", "b"], "label": [0, 1, 1, 1]})
        result = aggregate_question(frame, method="majority")
        assert result.majority == (None, 1) and result.ties == 1 and result.flips == 0


class CrowdKitEqualityTests:
    @pytest.mark.parametrize("method", ["dawid_skene", "mace", "glad", "wawa", "majority"])
    def test_labels_posteriors_and_competence_equal_crowd_kit_called_directly(self, method):
        frame, _ = simulated_panel(60, seed=5)
        ours = aggregate_question(frame, method=method, seed=4)
        parameters = dict(METHOD_PARAMETERS[method])
        if method == "dawid_skene":
            model = DawidSkene(**parameters)
            probas = model.fit_predict_proba(frame)
            # Accuracy: the diagonal of each worker's confusion matrix weighted by the class priors.
            expected = {
                w: sum(model.priors_[k] * model.errors_.at[(w, k), k] for k in model.priors_.index)
                for w in ("ann", "bob", "spammer")
            }
        elif method == "mace":
            model = MACE(**parameters, random_state=4)
            probas = model.fit_predict_proba(frame)
            workers = pd.factorize(frame["worker"])[1]
            expected = dict(zip(workers, model.spamming_[:, 1], strict=True))
            assert {a.rater: a.spamming for a in ours.annotators} == pytest.approx(
                dict(zip(workers, model.spamming_[:, 0], strict=True)), abs=0
            )
        elif method == "glad":
            model = GLAD(**parameters)
            probas = model.fit_predict_proba(frame)
            expected = model.alphas_.to_dict()
        elif method == "wawa":
            model = Wawa().fit(frame)
            vote = MajorityVote()
            probas = vote.fit_predict_proba(frame, skills=model.skills_)
            expected = model.skills_.to_dict()
        else:
            model = MajorityVote()
            probas = model.fit_predict_proba(frame)
            expected = model.skills_.to_dict()
        # The accuracy sums the diagonal in its own order: equal up to rounding, the rest exactly.
        tolerance = 1e-12 if method == "dawid_skene" else 0
        assert {a.rater: a.competence for a in ours.annotators} == pytest.approx(expected, rel=tolerance, abs=0)
        probas = probas.sort_index()
        tied = (probas.eq(probas.max(axis=1), axis=0).sum(axis=1) > 1).to_numpy()
        if method == "majority":
            # Concord leaves a tied vote without a label (an expert decides); its share is the top share.
            assert [x for x, t in zip(ours.labels, tied, strict=True) if not t] == list(probas.idxmax(axis=1)[~tied])
            assert list(ours.probability) == list(probas.max(axis=1))
        else:
            assert list(ours.labels) == list(probas.idxmax(axis=1))
            assert list(ours.probability) == [
                probas.at[t, label] for t, label in zip(ours.tasks, ours.labels, strict=True)
            ]
            assert list(ours.probability) == list(probas.max(axis=1))

    def test_ten_mace_restarts_from_an_integer_seed_give_what_one_gives(self):
        frame, _ = simulated_panel(20, seed=5)
        one = fit_model(frame, method="mace", seed=9)
        ten = MACE(n_restarts=10, random_state=9).fit(frame)
        assert np.array_equal(one.probas.to_numpy(), ten.probas_.to_numpy())

    def test_competence_intervals_are_seeded_and_hold_the_estimate(self):
        # Wawa refits in milliseconds; Dawid–Skene takes ~100 EM iterations on this panel.
        frame, _ = simulated_panel(120, seed=2)
        first = aggregate_question(frame, method="wawa", seed=1, bootstrap=40)
        again = aggregate_question(frame, method="wawa", seed=1, bootstrap=40)
        other = aggregate_question(frame, method="wawa", seed=2, bootstrap=40)
        assert first.annotators == again.annotators
        assert first.annotators != other.annotators
        for annotator in first.annotators:
            low, high = annotator.confidence_interval
            assert low <= annotator.competence <= high and annotator.n_resamples == 40

    def test_one_annotator_is_no_model_but_a_named_reason(self):
        frame = pd.DataFrame({"task": [0, 1], "worker": ["a", "a"], "label": [0, 1]})
        result = aggregate_question(frame, method="dawid_skene")
        assert result.reason and result.annotators[0].competence is None and result.flips == 0
