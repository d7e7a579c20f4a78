"""The public per-measure functions on ratings arrays: percent agreement, Cohen's, Fleiss' kappa,
Krippendorff's alpha and the rank correlations, each with its formula and source.

They check their arguments, code the ratings and call the estimator of ``validation.agreement.estimators``.
"""

from __future__ import annotations

from typing import cast

import numpy as np
import numpy.typing as npt

from validation.agreement.coding import Coded, coded_from_array, level_iv
from validation.agreement.estimators import (
    alpha_coded,
    cohen_coded,
    correlation_coded,
    fleiss_coded,
    percent_agreement_coded,
)
from validation.agreement.measures import (
    CORRELATION_METHODS,
    FLEISS_KAPPA,
    KRIPPENDORFF_ALPHA,
    PERCENT_AGREEMENT,
    WEIGHTINGS,
    CorrelationMethod,
    Level,
    Weighting,
    cohen_key,
    measure,
)
from validation.agreement.results import (
    AgreementResult,
    CorrelationResult,
)

# -- public per-measure functions on ratings arrays ----------------------------------------------


def percent_agreement(ratings: npt.ArrayLike) -> AgreementResult:
    """Mean pairwise percent agreement over units with at least two ratings.

    For unit *i* with :math:`n_i \\ge 2` ratings, of which :math:`n_{ij}` are in category *j*, the
    share of agreeing rater pairs is :math:`P_i = \\sum_j n_{ij}(n_{ij}-1) / (n_i(n_i-1))`; the result
    is the unweighted mean of :math:`P_i` over those units. Agreement means identical values, at
    every level. With complete data this is Fleiss' (1971) :math:`\\bar P`, and with
    two raters the share of units on which they agree.

    Parameters
    ----------
    ratings : array_like, shape (n_units, n_raters)
        Ratings (strings or numbers); None or NaN for a missing rating.

    Returns
    -------
    AgreementResult
        ``statistic`` in [0, 1], or None when no unit has two ratings.

    References
    ----------
    Fleiss, J. L. (1971). Measuring nominal scale agreement among many raters. *Psychological
    Bulletin*, 76(5), 378-382.
    """
    statistic, n_units, reason = percent_agreement_coded(coded_from_array(ratings, "nominal"))
    return AgreementResult(
        statistic=statistic, n_units=n_units, method=measure(PERCENT_AGREEMENT).method, reason=reason
    )


def _cohen_kappa_iv(ratings: npt.ArrayLike, weights: object, level: object) -> tuple[Coded, Weighting]:
    level = level_iv(level)
    if weights not in WEIGHTINGS:
        raise ValueError(f"weights must be one of {', '.join(WEIGHTINGS)}; got {weights!r}")
    if weights != "unweighted" and level == "nominal":
        raise ValueError(f"{weights} weights need level 'ordinal' or 'interval'")
    coded = coded_from_array(ratings, level)
    if coded.codes.shape[1] != 2:
        raise ValueError(f"Cohen's kappa needs exactly 2 raters (columns); got {coded.codes.shape[1]}")
    return coded, cast(Weighting, weights)  # one of WEIGHTINGS


def cohen_kappa(
    ratings: npt.ArrayLike, *, weights: Weighting = "unweighted", level: Level = "nominal"
) -> AgreementResult:
    """Cohen's kappa for two raters, unweighted or with linear or quadratic weights.

    Computed by ``statsmodels.stats.inter_rater.cohens_kappa`` on the two raters' contingency table
    over the units both rated: :math:`\\kappa_w = 1 - \\sum w_{ij} p_{ij} / \\sum w_{ij} e_{ij}` with
    disagreement weights :math:`w_{ij} = |s_i - s_j| / (s_{max} - s_{min})` (linear,
    Cicchetti-Allison) or its square (quadratic, Fleiss-Cohen). The category scores :math:`s` are the
    ranks of the observed values at the ordinal level and the values themselves at the interval level.

    Parameters
    ----------
    ratings : array_like, shape (n_units, 2)
        Ratings of the two raters; None or NaN for a missing rating.
    weights : {'unweighted', 'linear', 'quadratic'}
    level : {'nominal', 'ordinal', 'interval'}
        Weighted kappa needs ``'ordinal'`` or ``'interval'``.

    Returns
    -------
    AgreementResult
        None with a reason when no unit has both ratings or both raters used one and the same
        category throughout.

    References
    ----------
    Cohen, J. (1960). A coefficient of agreement for nominal scales. *Educational and Psychological
    Measurement*, 20(1), 37-46.
    Cohen, J. (1968). Weighted kappa. *Psychological Bulletin*, 70(4), 213-220.
    Fleiss, J. L., & Cohen, J. (1973). The equivalence of weighted kappa and the intraclass
    correlation coefficient as measures of reliability. *Educational and Psychological Measurement*,
    33(3), 613-619.
    """
    coded, weighting = _cohen_kappa_iv(ratings, weights, level)
    statistic, n_units, reason = cohen_coded(coded, weighting)
    return AgreementResult(
        statistic=statistic, n_units=n_units, method=measure(cohen_key(weighting)).method, reason=reason
    )


def fleiss_kappa(ratings: npt.ArrayLike) -> AgreementResult:
    """Fleiss' kappa for two or more raters, on complete data.

    Computed by ``statsmodels.stats.inter_rater.fleiss_kappa`` (``method='fleiss'``) on the
    units x categories counts from ``aggregate_raters``: :math:`\\kappa = (\\bar P - \\bar P_e) /
    (1 - \\bar P_e)` with :math:`\\bar P_e = \\sum_j p_j^2` (Fleiss 1971).

    Parameters
    ----------
    ratings : array_like, shape (n_units, n_raters)
        Ratings; None or NaN for a missing rating.

    Returns
    -------
    AgreementResult
        None with a reason when fewer than two raters, when any unit lacks a rating from some rater
        (Fleiss' formula assumes the same number of ratings per unit), or when every rating is in
        one category.

    References
    ----------
    Fleiss, J. L. (1971). Measuring nominal scale agreement among many raters. *Psychological
    Bulletin*, 76(5), 378-382.
    """
    statistic, n_units, reason = fleiss_coded(coded_from_array(ratings, "nominal"))
    return AgreementResult(statistic=statistic, n_units=n_units, method=measure(FLEISS_KAPPA).method, reason=reason)


def krippendorff_alpha(ratings: npt.ArrayLike, *, level: Level) -> AgreementResult:
    """Krippendorff's alpha at the nominal, ordinal or interval level; missing ratings allowed.

    Computed by ``krippendorff.alpha`` from the raters x units reliability data:
    :math:`\\alpha = 1 - D_o / D_e` over the coincidence matrix of pairable values (Krippendorff 2011).
    Strings are coded as categories (nominal only); the ordinal metric uses the
    ranks of the sorted observed values and their frequencies, the interval metric the values.

    Parameters
    ----------
    ratings : array_like, shape (n_units, n_raters)
        Ratings; None or NaN for a missing rating.
    level : {'nominal', 'ordinal', 'interval'}

    Returns
    -------
    AgreementResult
        ``n_units`` counts pairable units (two or more ratings). None with a reason when no unit is
        pairable or every pairable rating is in one category.

    References
    ----------
    Krippendorff, K. (2011). Computing Krippendorff's alpha-reliability. Annenberg School for
    Communication Departmental Papers 43, University of Pennsylvania.
    """
    level = level_iv(level)
    statistic, n_units, reason = alpha_coded(coded_from_array(ratings, level))
    return AgreementResult(
        statistic=statistic, n_units=n_units, method=measure(KRIPPENDORFF_ALPHA).method_for(level), reason=reason
    )


def rank_correlation(
    ratings: npt.ArrayLike, *, reference: int, method: CorrelationMethod = "spearman"
) -> CorrelationResult:
    """Rank correlation between the mean of the other raters and a reference rater.

    Over units rated by the reference and by at least one other rater, correlates the mean of the
    other raters' values with the reference's value: Spearman's rho (``scipy.stats.spearmanr``;
    p-value from the t distribution with n - 2 df) or Kendall's tau-b (``scipy.stats.kendalltau``,
    which corrects for ties; exact p-value for small samples without ties, else the normal
    approximation).

    Parameters
    ----------
    ratings : array_like, shape (n_units, n_raters)
        Numeric ratings; None or NaN for a missing rating.
    reference : int
        Column of the reference rater (e.g. an LLM judge).
    method : {'spearman', 'kendall'}

    Returns
    -------
    CorrelationResult
        None with a reason for fewer than 3 paired units or a constant side.

    References
    ----------
    Spearman, C. (1904). The proof and measurement of association between two things. *American
    Journal of Psychology*, 15(1), 72-101.
    Kendall, M. G. (1945). The treatment of ties in ranking problems. *Biometrika*, 33(3), 239-251.
    """
    if method not in CORRELATION_METHODS:
        raise ValueError(f"method must be one of {', '.join(CORRELATION_METHODS)}; got {method!r}")
    coded = coded_from_array(ratings, "interval")
    if not isinstance(reference, int | np.integer) or not 0 <= reference < coded.codes.shape[1]:
        raise ValueError(f"reference must be a column index in [0, {coded.codes.shape[1]}); got {reference!r}")
    has_rating = not np.isnan(coded.codes[:, reference]).all()
    statistic, pvalue, n, reason = correlation_coded(
        coded, int(reference) if has_rating else None, method, reference_name=int(reference)
    )
    return CorrelationResult(
        statistic=statistic, pvalue=pvalue, n_units=n, method=measure(method).method, reason=reason
    )
