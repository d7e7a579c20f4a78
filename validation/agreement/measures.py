"""The measures, once: each one's key (its path in the JSON), method, labels and cell format.

Every place that names a measure (the result objects, the bootstrap, the ``agreement_stats`` table,
the reports' tables) reads it from :data:`MEASURES`, so a key string is written here only.

Labels come in two lengths: ``label``/``latex`` head a report's column (``{ref}`` stands for what
the reference rater is called there, e.g. "LLM" or "baseline"), ``short``/``short_latex`` head the
compact one-row-per-dimension table of ``agreement`` and ``agreement_stats``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, get_args

__all__ = [
    "CORRELATION_METHODS",
    "LEVELS",
    "MAJORITY_KEYS",
    "MEASURES",
    "REFERENCE_KEYS",
    "WEIGHTINGS",
    "CorrelationMethod",
    "Level",
    "Measure",
    "Weighting",
    "cohen_key",
    "majority_kappa_key",
    "measure",
]

Level = Literal["nominal", "ordinal", "interval"]
LEVELS: tuple[str, ...] = get_args(Level)
Weighting = Literal["unweighted", "linear", "quadratic"]
WEIGHTINGS: tuple[str, ...] = get_args(Weighting)
CorrelationMethod = Literal["spearman", "kendall"]
CORRELATION_METHODS: tuple[str, ...] = get_args(CorrelationMethod)
CellFormat = Literal["number", "percent", "count", "text"]

#: What a label calls the reference rater until a report names it.
REF = "{ref}"

PERCENT_AGREEMENT = "percent_agreement"
FLEISS_KAPPA = "fleiss_kappa"
KRIPPENDORFF_ALPHA = "krippendorff_alpha"
#: The JSON object under which the majority of the other raters is compared with the reference.
MAJORITY = "majority_vs_reference"
MAJORITY_PERCENT_AGREEMENT = f"{MAJORITY}.{PERCENT_AGREEMENT}"


def cohen_key(weighting: str) -> str:
    """``cohen_kappa.<weighting>``: the path of one of the Cohen's kappas."""
    return f"cohen_kappa.{weighting}"


def majority_kappa_key(weighting: str) -> str:
    """The path of a Cohen's kappa between the other raters' majority and the reference."""
    return f"{MAJORITY}.{cohen_key(weighting)}"


@dataclass(frozen=True, kw_only=True)
class Measure:
    """One measure: where it sits in the JSON, how it is computed, how a table heads it.

    Attributes
    ----------
    key : str
        The dotted path in the ``agreement_stats`` JSON and in ``DimensionAgreement.measures()``.
    method : str
        The result's ``method`` (``{level}`` is filled in with the level of measurement).
    label, latex : str
        A report's column header, plain and LaTeX; ``{ref}`` is the reference rater's name.
    short, short_latex : str
        The header in the compact per-dimension table.
    format : {'number', 'percent'}
        How a report's cell shows it.
    csv_name : str
        The column of the per-dimension CSV.
    reference : bool
        Whether it compares raters with a reference rater (so exists only with one).
    """

    key: str
    method: str
    label: str
    latex: str
    short: str
    short_latex: str
    format: CellFormat = "number"
    csv_name: str
    reference: bool = False

    def method_for(self, level: str) -> str:
        return self.method.format(level=level)

    def label_for(self, reference: str) -> str:
        return self.label.replace(REF, reference)

    def latex_for(self, reference: str) -> str:
        return self.latex.replace(REF, reference)


_KAPPA_HEADERS = {
    "unweighted": ("Cohen's κ", r"$\kappa$", "κ", r"$\kappa$"),
    "linear": ("κ_w linear", r"$\kappa_{\mathrm{lin}}$", "κ lin.", r"$\kappa_{\mathrm{lin}}$"),
    "quadratic": ("κ_w quadratic", r"$\kappa_{\mathrm{quad}}$", "κ quad.", r"$\kappa_{\mathrm{quad}}$"),
}
_KAPPA_METHODS = {
    "unweighted": "Cohen's kappa (statsmodels.stats.inter_rater.cohens_kappa)",
    "linear": "Cohen's weighted kappa, linear weights (statsmodels.stats.inter_rater.cohens_kappa)",
    "quadratic": "Cohen's weighted kappa, quadratic weights (statsmodels.stats.inter_rater.cohens_kappa)",
}
_MAJORITY_KAPPA_HEADERS = {
    "unweighted": ("κ (majority vs {ref})", r"$\kappa$ (maj.--{ref})"),
    "linear": ("κ_w lin. (maj. vs {ref})", r"$\kappa_{\mathrm{lin}}$ (maj.--{ref})"),
    "quadratic": ("κ_w quad. (maj. vs {ref})", r"$\kappa_{\mathrm{quad}}$ (maj.--{ref})"),
}
_MAJORITY_KAPPA_METHODS = {
    "unweighted": "Cohen's kappa, majority of the other raters vs the reference (statsmodels cohens_kappa)",
    "linear": "Cohen's weighted kappa, linear weights, majority of the other raters vs the reference",
    "quadratic": "Cohen's weighted kappa, quadratic weights, majority of the other raters vs the reference",
}

#: Every measure, in the order tables show them: among the raters, then against the reference.
MEASURES: tuple[Measure, ...] = (
    Measure(
        key=PERCENT_AGREEMENT,
        method="mean pairwise percent agreement over units with >= 2 ratings",
        label="% agreement",
        latex=r"\% agr.",
        short="% agr.",
        short_latex=r"\% agr.",
        format="percent",
        csv_name="percent_agreement",
    ),
    *(
        Measure(
            key=cohen_key(w),
            method=_KAPPA_METHODS[w],
            label=_KAPPA_HEADERS[w][0],
            latex=_KAPPA_HEADERS[w][1],
            short=_KAPPA_HEADERS[w][2],
            short_latex=_KAPPA_HEADERS[w][3],
            csv_name=f"cohen_kappa_{w}",
        )
        for w in WEIGHTINGS
    ),
    Measure(
        key=FLEISS_KAPPA,
        method="Fleiss' kappa (statsmodels.stats.inter_rater.fleiss_kappa on aggregate_raters)",
        label="Fleiss' κ",
        latex=r"Fleiss' $\kappa$",
        short="Fleiss κ",
        short_latex=r"Fleiss $\kappa$",
        csv_name="fleiss_kappa",
    ),
    Measure(
        key=KRIPPENDORFF_ALPHA,
        method="Krippendorff's alpha, {level} metric (krippendorff.alpha)",
        label="Krippendorff's α",
        latex=r"$\alpha$",
        short="α",
        short_latex=r"$\alpha$",
        csv_name="krippendorff_alpha",
    ),
    Measure(
        key="spearman",
        method="Spearman's rho, mean of the other raters vs the reference (scipy.stats.spearmanr)",
        label="ρ (mean vs {ref})",
        latex=r"$\rho$ (mean--{ref})",
        short="ρ",
        short_latex=r"$\rho$",
        csv_name="spearman_rho",
        reference=True,
    ),
    Measure(
        key="kendall",
        method="Kendall's tau-b, mean of the other raters vs the reference (scipy.stats.kendalltau)",
        label="τ (mean vs {ref})",
        latex=r"$\tau$ (mean--{ref})",
        short="τ",
        short_latex=r"$\tau$",
        csv_name="kendall_tau",
        reference=True,
    ),
    Measure(
        key=MAJORITY_PERCENT_AGREEMENT,
        method="percent agreement, majority of the other raters vs the reference (units where they tie left out)",
        label="% agr. (majority vs {ref})",
        latex=r"\% agr.\ (maj.--{ref})",
        short="% agr. maj.–ref.",
        short_latex=r"\% agr.\ maj.--ref.",
        format="percent",
        csv_name="majority_percent_agreement",
        reference=True,
    ),
    *(
        Measure(
            key=majority_kappa_key(w),
            method=_MAJORITY_KAPPA_METHODS[w],
            label=_MAJORITY_KAPPA_HEADERS[w][0],
            latex=_MAJORITY_KAPPA_HEADERS[w][1],
            short=f"{_KAPPA_HEADERS[w][2]} maj.–ref.",
            short_latex=f"{_KAPPA_HEADERS[w][3]} maj.--ref.",
            csv_name=f"majority_cohen_kappa_{w}",
            reference=True,
        )
        for w in WEIGHTINGS
    ),
)

_BY_KEY = {m.key: m for m in MEASURES}
MAJORITY_KEYS: tuple[str, ...] = (MAJORITY_PERCENT_AGREEMENT, *(majority_kappa_key(w) for w in WEIGHTINGS))
REFERENCE_KEYS: tuple[str, ...] = tuple(m.key for m in MEASURES if m.reference)


def measure(key: str) -> Measure:
    """The measure under ``key`` (KeyError for none)."""
    return _BY_KEY[key]
