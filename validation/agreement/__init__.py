"""Inter-rater agreement: pure functions over rating arrays and long-format records.

The package, by role: ``coding`` (ratings into category codes), ``estimators`` (each measure on
coded ratings), ``coefficients`` (the public per-measure functions), ``summaries`` (confusion
matrices, means, the random-guess F1, the anchoring comparison), ``dimensions`` (all measures of one
or several dimensions), ``bootstrap`` (the resampler and the percentile interval), ``batched`` (the
bootstrap's fast path over batches of resamples), ``results`` (the result objects and their JSON),
``measures`` (the registry of measure keys, methods and labels). Tables of results are rendered
by ``validation.reports.render``.

Every coefficient comes from a maintained library; this module only shapes the data, guards the
degenerate cases and bootstraps:

- Cohen's kappa (unweighted, linear, quadratic): ``statsmodels.stats.inter_rater.cohens_kappa``.
- Fleiss' kappa: ``statsmodels.stats.inter_rater.fleiss_kappa`` on the subjects x categories table
  that ``aggregate_raters`` builds.
- Krippendorff's alpha (nominal, ordinal, interval; missing values allowed): ``krippendorff.alpha``.
- Spearman's rho and Kendall's tau-b: ``scipy.stats.spearmanr`` and ``scipy.stats.kendalltau``.
- Percent agreement: no library offers it for incomplete data; its one-line definition is in
  :func:`percent_agreement`. Likewise the mean rating (:func:`mean_rating`) and the IntentGrasp
  random-guess F1 (:func:`random_guess_f1`), which are averages.

A coefficient that the data cannot define (a single rater, no unit with two ratings, every rating in
one category ...) is ``None`` with a ``reason``: never NaN, never an exception. Bad *arguments*
(an unknown level, a string rating at the interval level, a duplicate rating) raise ``ValueError``.

Conventions
-----------
- A *ratings array* is 2-D, units in rows and raters in columns; ``None`` or NaN is a missing rating.
- A *record* is ``(unit, rater, value)`` (e.g. :class:`Rating`); ``value`` ``None`` or NaN is missing.
- The scale is the set of observed values, or the categories given (a task kind's fixed scale, so
  that weights and matrices keep categories nobody used). ``ordinal`` and ``interval`` need real
  numbers; ``nominal`` takes strings or numbers (not both in one dimension).
- Units with no rating at all and raters who gave none are left out: they carry no information for
  any coefficient, and counting them would only change what "complete data" means.
- A *reference* rater (an LLM judge) is compared with the others: Spearman and Kendall between the
  mean of the others and the reference, Cohen's kappa between the others' majority and the
  reference. Whether it also counts as a rater in the agreement coefficients is an option.
"""

from validation.agreement.bootstrap import percentile_interval
from validation.agreement.coding import DimensionInput, Rating, Value
from validation.agreement.coefficients import (
    cohen_kappa,
    fleiss_kappa,
    krippendorff_alpha,
    percent_agreement,
    rank_correlation,
)
from validation.agreement.dimensions import dimension_agreement, joint_agreement
from validation.agreement.measures import (
    CORRELATION_METHODS,
    LEVELS,
    MAJORITY_KEYS,
    MEASURES,
    WEIGHTINGS,
    CorrelationMethod,
    Level,
    Measure,
    Weighting,
    measure,
)
from validation.agreement.results import (
    CONSTANT,
    INCOMPLETE,
    NEEDS_RATERS,
    NEEDS_TWO_RATERS,
    NO_EXPOSURE_PAIRS,
    NO_MAJORITY_PAIRS,
    NO_OTHER_RATER,
    NO_PAIRABLE_UNITS,
    NO_RATINGS,
    NO_REFERENCE,
    NO_SHARED_UNITS,
    NOMINAL_CORRELATION,
    NOMINAL_WEIGHTS,
    NOT_IN_CATEGORIES,
    ONE_CATEGORY,
    ONE_CATEGORY_ALPHA,
    PERCENTILE_METHOD,
    TOO_FEW_PAIRS,
    AgreementResult,
    BootstrapSettings,
    CohenKappa,
    ConfidenceInterval,
    ConfusionMatrix,
    CorrelationResult,
    DimensionAgreement,
    ExposureComparison,
    JointAgreement,
    ReferenceAgreement,
)
from validation.agreement.summaries import confusion_matrix, exposure_comparison, mean_rating, random_guess_f1

__all__ = [
    "CONSTANT",
    "CORRELATION_METHODS",
    "INCOMPLETE",
    "LEVELS",
    "MAJORITY_KEYS",
    "MEASURES",
    "NEEDS_RATERS",
    "NEEDS_TWO_RATERS",
    "NOMINAL_CORRELATION",
    "NOMINAL_WEIGHTS",
    "NOT_IN_CATEGORIES",
    "NO_EXPOSURE_PAIRS",
    "NO_MAJORITY_PAIRS",
    "NO_OTHER_RATER",
    "NO_PAIRABLE_UNITS",
    "NO_RATINGS",
    "NO_REFERENCE",
    "NO_SHARED_UNITS",
    "ONE_CATEGORY",
    "ONE_CATEGORY_ALPHA",
    "PERCENTILE_METHOD",
    "TOO_FEW_PAIRS",
    "WEIGHTINGS",
    "AgreementResult",
    "BootstrapSettings",
    "CohenKappa",
    "ConfidenceInterval",
    "ConfusionMatrix",
    "CorrelationMethod",
    "CorrelationResult",
    "DimensionAgreement",
    "DimensionInput",
    "ExposureComparison",
    "JointAgreement",
    "Level",
    "Measure",
    "Rating",
    "ReferenceAgreement",
    "Value",
    "Weighting",
    "cohen_kappa",
    "confusion_matrix",
    "dimension_agreement",
    "exposure_comparison",
    "fleiss_kappa",
    "joint_agreement",
    "krippendorff_alpha",
    "mean_rating",
    "measure",
    "percent_agreement",
    "percentile_interval",
    "random_guess_f1",
    "rank_correlation",
]
