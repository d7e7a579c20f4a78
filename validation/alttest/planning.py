"""How many items does the test need? The authors' simulation (their Appendix C) as a planner.

Per simulated data set: category priors drawn from a flat Dirichlet, a gold label per item from
the priors, and each of ``pool_raters`` annotators' label (and the model's) drawn from
``noise · priors + (1 − noise) · [gold]``: with noise 0 a rater always gives the gold label, with
noise 1 a label from the priors alone. For every size, ``boots`` times: that many items and
``raters`` annotators drawn without replacement, and the test run on them (accuracy, ε, q). The
plan gives, per size, the share of simulations the model passed (winning rate ≥ 0.5), with the
mean winning rate and advantage probability, so a team sees before annotating whether 50 items
are enough. As in the authors' code: 500 items and 6 annotators per data set, 30 items per
annotator at least. Draws come from one ``numpy.random.default_rng(seed)``.

The authors' README maps annotator noise to inter-annotator agreement (Cohen's kappa): 0.1 → 0.80,
0.2 → 0.63, 0.3 → 0.48, 0.4 → 0.36.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from validation.alttest.statistics import (
    DEFAULT_MIN_ITEMS,
    DEFAULT_Q,
    POOLED,
    AltTestBlock,
    AltTestOptions,
    alt_test,
)
from validation.evaluations.base import Evaluation, current_versions, inputs_digest
from validation.reports.tables import Cell, Row, Table

__all__ = [
    "MAX_REQUEST_SIMULATIONS",
    "MAX_SIMULATIONS",
    "PlanParameters",
    "PlanPoint",
    "alt_test_plan_evaluation",
    "parse_sizes",
    "plan_json",
    "plan_table",
    "simulate_plan",
]

#: Items and annotators of each simulated data set (the authors' ``max_items``, ``max_annotators``).
POOL_ITEMS = 500
POOL_RATERS = 6
MAX_CATEGORIES = 50
MAX_RATERS = 20
MAX_DATASETS = 200
MAX_BOOTS = 100
MAX_SIZES = 100
#: Tests run in one plan, at most (datasets x boots x sizes): about a minute of work.
MAX_SIMULATIONS = 50_000
#: Tests one page or API request runs itself, at most (a few seconds); the command runs more.
MAX_REQUEST_SIMULATIONS = 2_000
BAD_SIZES = "sizes must be FROM:TO:STEP (integers, e.g. 30:200:10) or a comma-separated list; got {text!r}"
SIZE_RANGE = f"every size must be from {DEFAULT_MIN_ITEMS} (items an annotator needs) to {POOL_ITEMS}; got {{size}}"
TOO_MANY_SIZES = f"at most {MAX_SIZES} sizes; got {{n}}"
TOO_MANY_SIMULATIONS = f"datasets x boots x sizes is at most {MAX_SIMULATIONS:,}; got {{n:,}}"
BAD_INTEGER = "{name} must be an integer from {low} to {high}; got {value!r}"
BAD_NOISE = "{name} must be a number from 0 to 1; got {value!r}"


def parse_sizes(text: str) -> tuple[int, ...]:
    """``30:200:10`` (both ends included, as the authors' ``range(30, 201, 10)``) or ``30,50,100``."""
    try:
        if ":" in text:
            start, stop, step = (int(part) for part in text.split(":"))
            if step <= 0 or stop < start:
                raise ValueError
            return tuple(range(start, stop + 1, step))
        return tuple(int(part) for part in text.split(","))
    except ValueError:
        raise ValueError(BAD_SIZES.format(text=text[:100])) from None


@dataclass(frozen=True, kw_only=True)
class PlanParameters:
    """The simulated study: categories, annotators, noises, ε, sizes and the simulation's effort."""

    categories: int
    raters: int
    rater_noise: float
    model_noise: float
    epsilon: float
    sizes: tuple[int, ...]
    datasets: int = 20
    boots: int = 10
    seed: int = 0
    q: float = DEFAULT_Q

    def check(self) -> None:
        """The caps, as a ValueError naming the bad one."""
        for name, value, low, high in (
            ("categories", self.categories, 2, MAX_CATEGORIES),
            ("raters", self.raters, 2, MAX_RATERS),
            ("datasets", self.datasets, 1, MAX_DATASETS),
            ("boots", self.boots, 1, MAX_BOOTS),
            ("seed", self.seed, 0, 2**32 - 1),
        ):
            if not isinstance(value, int) or isinstance(value, bool) or not low <= value <= high:
                raise ValueError(BAD_INTEGER.format(name=name, low=low, high=high, value=value))
        for name, noise in (("rater_noise", self.rater_noise), ("model_noise", self.model_noise)):
            if isinstance(noise, bool) or not isinstance(noise, int | float) or not 0 <= noise <= 1:
                raise ValueError(BAD_NOISE.format(name=name, value=noise))
        AltTestOptions(epsilon=self.epsilon, q=self.q).check()
        if not self.sizes or len(self.sizes) > MAX_SIZES:
            raise ValueError(TOO_MANY_SIZES.format(n=len(self.sizes)))
        for size in self.sizes:
            if not DEFAULT_MIN_ITEMS <= size <= POOL_ITEMS:
                raise ValueError(SIZE_RANGE.format(size=size))
        if self.n_simulations > MAX_SIMULATIONS:
            raise ValueError(TOO_MANY_SIMULATIONS.format(n=self.n_simulations))

    @property
    def n_simulations(self) -> int:
        return self.datasets * self.boots * len(self.sizes)

    @classmethod
    def from_json_dict(cls, data: dict[str, Any]) -> PlanParameters:
        fields = ("categories", "raters", "rater_noise", "model_noise", "epsilon", "datasets", "boots", "seed", "q")
        return cls(sizes=tuple(data["sizes"]), **{name: data[name] for name in fields})

    def to_json_dict(self) -> dict[str, Any]:
        return {
            "categories": self.categories,
            "raters": self.raters,
            "rater_noise": self.rater_noise,
            "model_noise": self.model_noise,
            "epsilon": self.epsilon,
            "q": self.q,
            "sizes": list(self.sizes),
            "datasets": self.datasets,
            "boots": self.boots,
            "seed": self.seed,
        }


@dataclass(frozen=True, kw_only=True)
class PlanPoint:
    """One size: the share of simulations passed, and the mean winning rate and advantage probability."""

    size: int
    n_simulations: int
    pass_share: float
    mean_winning_rate: float
    mean_advantage_probability: float

    def to_json_dict(self) -> dict[str, Any]:
        return {
            "size": self.size,
            "n_simulations": self.n_simulations,
            "pass_share": self.pass_share,
            "mean_winning_rate": self.mean_winning_rate,
            "mean_advantage_probability": self.mean_advantage_probability,
        }


def _noisy_labels(
    rng: np.random.Generator, priors: npt.NDArray[np.float64], gold: npt.NDArray[np.intp], noise: float, n: int
) -> npt.NDArray[np.intp]:
    """``n`` labels per item, each drawn from ``noise · priors + (1 − noise) · [gold]``."""
    k = len(priors)
    probabilities = noise * priors[None, :] + (1 - noise) * np.eye(k)[gold]
    cumulative = np.cumsum(probabilities / probabilities.sum(axis=1, keepdims=True), axis=1)
    draws = rng.random((len(gold), n))
    return np.minimum((draws[:, :, None] > cumulative[:, None, :]).sum(axis=2), k - 1)


def simulate_plan(parameters: PlanParameters) -> list[PlanPoint]:
    """The share of simulated studies the model passes, per size (see the module's docstring)."""
    parameters.check()
    rng = np.random.default_rng(parameters.seed)
    options = AltTestOptions(epsilon=parameters.epsilon, q=parameters.q, metric="accuracy", scope="pooled")
    pool_raters = max(POOL_RATERS, parameters.raters)
    names = [f"annotator_{j + 1}" for j in range(parameters.raters)]
    outcomes: dict[int, list[tuple[bool, float, float]]] = {size: [] for size in parameters.sizes}
    for _ in range(parameters.datasets):
        priors = rng.dirichlet(np.ones(parameters.categories))
        gold = rng.choice(parameters.categories, size=POOL_ITEMS, p=priors)
        people = _noisy_labels(rng, priors, gold, parameters.rater_noise, pool_raters).astype(float)
        model = _noisy_labels(rng, priors, gold, parameters.model_noise, 1)[:, 0].astype(float)
        for size in parameters.sizes:
            for _ in range(parameters.boots):
                items = rng.choice(POOL_ITEMS, size=size, replace=False)
                raters = rng.choice(pool_raters, size=parameters.raters, replace=False)
                block = AltTestBlock(
                    name="simulated", level="nominal", people=people[np.ix_(items, raters)], models={"m": model[items]}
                )
                scope = alt_test([block], names, options=options)[0].scope(POOLED)
                outcomes[size].append(
                    (scope.passed, scope.winning_rate or 0.0, scope.advantage_probability or float("nan"))
                )
    return [
        PlanPoint(
            size=size,
            n_simulations=len(runs),
            pass_share=float(np.mean([passed for passed, _, _ in runs])),
            mean_winning_rate=float(np.mean([rate for _, rate, _ in runs])),
            mean_advantage_probability=float(np.nanmean([a for _, _, a in runs])),
        )
        for size, runs in outcomes.items()
    ]


def plan_table(parameters: PlanParameters, points: list[PlanPoint]) -> Table:
    """The plan as a table (Markdown, LaTeX, CSV)."""
    return Table(
        key="alt_test_plan",
        title="How many items does the Alternative Annotator Test need?",
        caption=(
            f"Simulated studies ({parameters.datasets} data sets x {parameters.boots} draws per size): "
            f"{parameters.categories} categories, {parameters.raters} annotators with noise "
            f"{parameters.rater_noise:g}, "
            f"a model with noise {parameters.model_noise:g}, ε = {parameters.epsilon:g}, q = {parameters.q:g}, "
            f"seed {parameters.seed}."
        ),
        columns=("Items", "Simulations", "Passed (share)", "Mean winning rate", "Mean advantage prob."),
        latex_columns=("$n$", "Simulations", "Passed", r"$\bar\omega$", r"$\bar\rho$"),
        rows=tuple(
            Row(
                str(p.size),
                (
                    Cell.count(p.n_simulations),
                    Cell(value=p.pass_share, format="percent"),
                    Cell(value=p.mean_winning_rate),
                    Cell(value=p.mean_advantage_probability),
                ),
            )
            for p in points
        ),
    )


def plan_json(parameters: PlanParameters, points: list[PlanPoint]) -> dict[str, Any]:
    """The command's JSON: the parameters and, per size, the share passed."""
    return {"parameters": parameters.to_json_dict(), "sizes": [p.to_json_dict() for p in points]}


def alt_test_plan_evaluation(*, project: Any, parameters: PlanParameters) -> Evaluation:
    """The plan as an evaluation (its page, the API, a snapshot); it reads nothing of the project."""
    points = simulate_plan(parameters)
    return Evaluation(
        name="alt_test_plan",
        project=project.slug,
        title="How many items does the Alternative Annotator Test need?",
        parameters=parameters.to_json_dict(),
        inputs_sha256=inputs_digest(parameters.to_json_dict()),
        library_versions=current_versions(),
        result=plan_json(parameters, points),
        tables=(plan_table(parameters, points),),
    )
