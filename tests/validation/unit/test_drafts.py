"""validation.drafts: Levenshtein distances (textbook values) and the accepted/edited/rewritten split."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from validation.drafts import draft_acceptance, levenshtein


def textbook_levenshtein(a: str, b: str) -> int:
    """The Wagner-Fischer recurrence cell by cell, to check the row-vectorised version against."""
    table = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        previous, table[0] = table[0], i
        for j, cb in enumerate(b, 1):
            previous, table[j] = table[j], min(table[j] + 1, table[j - 1] + 1, previous + (ca != cb))
    return table[-1]


class LevenshteinTests:
    @pytest.mark.parametrize(
        ("a", "b", "distance"),
        [
            ("kitten", "sitting", 3),  # the classic example (Levenshtein 1966 as taught)
            ("saturday", "sunday", 3),
            ("flaw", "lawn", 2),
            ("", "abc", 3),
            ("abc", "", 3),
            ("same", "same", 0),
            # The shorter is a subsequence of the longer: only insertions, len difference 49 - 12.
            ("To use data.", "To use data, methods, etc., from the cited paper.", 37),
            ("naïve café", "naive cafe", 2),
        ],
    )
    def test_known_distances(self, a, b, distance):
        assert levenshtein(a, b) == distance
        assert levenshtein(b, a) == distance

    def test_agrees_with_the_cell_by_cell_recurrence(self):
        rng = np.random.default_rng(0)
        for _ in range(300):
            a = "".join(rng.choice(list("abcde"), size=rng.integers(0, 9)))
            b = "".join(rng.choice(list("abcde"), size=rng.integers(0, 9)))
            assert levenshtein(a, b) == textbook_levenshtein(a, b)

    def test_all_short_strings_exhaustively(self):
        words = ["".join(p) for n in range(4) for p in itertools.product("ab", repeat=n)]
        for a, b in itertools.product(words, repeat=2):
            assert levenshtein(a, b) == textbook_levenshtein(a, b)


class DraftAcceptanceTests:
    def test_unchanged_light_and_rewritten(self):
        drafts = ["To use data.", "To compare results.", "To ask for help.", "To book a table."]
        finals = ["  To use data. ", "To compare the results.", "To report a lost card.", "To book a table."]
        result = draft_acceptance(drafts, finals, ["a", "b", "c", "d"], light_edit=0.2)
        assert result.n_pairs == 4 and result.n_units == 4
        assert result.shares["unchanged"].statistic == 0.5
        assert result.shares["lightly_edited"].statistic == 0.25
        assert result.shares["rewritten"].statistic == 0.25
        assert result.distances == (0, 4, levenshtein("To ask for help.", "To report a lost card."), 0)
        assert result.quantile(0.5) == pytest.approx(2.0)

    def test_bootstrap_resamples_labels_with_their_pairs(self):
        drafts = ["To x."] * 30
        finals = ["To x."] * 10 + ["To y."] * 10 + ["Something else entirely."] * 10
        units = [i // 3 for i in range(30)]
        result = draft_acceptance(drafts, finals, units, bootstrap=200, seed=1)
        shares = result.shares
        assert sum(shares[n].statistic for n in shares) == pytest.approx(1.0)
        assert shares["unchanged"].confidence_interval.low < 1 / 3 < shares["unchanged"].confidence_interval.high
        assert result == draft_acceptance(drafts, finals, units, bootstrap=200, seed=1)

    def test_no_pairs_is_null_with_a_reason(self):
        result = draft_acceptance([], [], [])
        assert result.shares["unchanged"].statistic is None
        assert result.quantile(0.5) is None and result.mean_normalised is None

    def test_light_edit_threshold_is_checked(self):
        with pytest.raises(ValueError, match="light_edit"):
            draft_acceptance(["a"], ["b"], [1], light_edit=1.5)
