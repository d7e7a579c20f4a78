"""IntentGrasp's printed Avg.(Std) rows recomputed from the runs the paper prints beside them.

The paper uses two standard deviations (paper 002): Table 8's All Set block the sample std (ddof 1),
Table 8's Gem Set block, Table 9 and Table 2 the population std (ddof 0). Each printed run is rounded
to two decimals, so a recomputed value may differ from the printed one by one in the last digit; the
two ddofs differ by far more than that on every row below, so each row tells which one the paper used.
"""

from __future__ import annotations

import pytest

from validation.kinds.intent_mcq.mcq_eval import STD_DDOF, average_over_models, spread_over_runs

#: The printed last digit, plus what rounding the four printed runs can move.
PRINTED = 0.0101

# Table 8, open models: (no shuffle, shuffle-7, shuffle-42, shuffle-365, printed avg, printed std).
TABLE_8_ALL = {
    "Llama3-70B": (42.69, 44.08, 44.36, 44.55, 43.92, 0.84),
    "Llama3-8B": (20.23, 31.06, 31.20, 30.94, 28.36, 5.42),
    "Llama3-3B": (26.01, 27.47, 27.71, 27.28, 27.12, 0.76),
    "Qwen3-32B": (43.40, 44.27, 44.62, 44.61, 44.22, 0.57),
    "Qwen3-8B": (30.18, 40.04, 40.80, 39.91, 37.73, 5.05),
    "Qwen3-4B": (36.50, 38.42, 39.13, 38.52, 38.14, 1.14),
    "Olmo3-32B": (41.82, 43.33, 44.26, 43.95, 43.34, 1.09),
    "Olmo3-7B": (31.67, 33.07, 32.82, 32.72, 32.57, 0.62),
    "Gemma4-31B": (48.73, 49.88, 49.45, 49.35, 49.35, 0.48),
    "Gemma4-E4B": (45.13, 46.01, 46.13, 46.20, 45.87, 0.50),
    "Gemma4-E2B": (39.81, 40.45, 40.96, 40.86, 40.52, 0.52),
}
TABLE_8_GEM = {
    "Llama3-70B": (0.00, 5.95, 5.17, 5.26, 4.10, 2.38),
    "Llama3-8B": (3.33, 4.33, 4.15, 5.14, 4.24, 0.64),
    "Llama3-3B": (2.98, 5.39, 3.30, 5.04, 4.18, 1.05),
    "Qwen3-32B": (1.28, 5.69, 3.83, 4.50, 3.83, 1.61),
    "Qwen3-8B": (3.89, 7.16, 6.30, 8.89, 6.56, 1.80),
    "Qwen3-4B": (4.40, 6.29, 6.56, 7.28, 6.13, 1.06),
    "Olmo3-32B": (0.43, 6.15, 4.00, 4.45, 3.76, 2.08),
    "Olmo3-7B": (0.21, 8.38, 6.81, 6.03, 5.36, 3.09),
    "Gemma4-31B": (0.50, 3.75, 3.54, 3.99, 2.95, 1.42),
    "Gemma4-E4B": (0.71, 4.82, 2.73, 2.73, 2.75, 1.45),
    "Gemma4-E2B": (0.25, 4.36, 3.44, 3.94, 3.00, 1.61),
}
# Table 9, proprietary models: All Set subsets sample-42, -43, -44; Gem Set's four sessions.
TABLE_9_ALL = {
    "GPT-5.4": (47.71, 51.18, 53.17, 50.69, 2.26),
    "GPT-5.4-mini": (40.68, 45.32, 46.13, 44.04, 2.40),
    "GPT-5.4-nano": (38.77, 38.58, 43.70, 40.35, 2.37),
    "Gemini-3.1-Pro": (56.96, 61.68, 60.41, 59.68, 1.99),
    "Gemini-3-Flash": (53.57, 55.55, 57.08, 55.40, 1.44),
    "Gemini-3.1-Flash-Lite": (48.38, 52.45, 52.14, 50.99, 1.85),
    "Claude-Opus-4.7": (53.44, 58.41, 60.07, 57.31, 2.82),
    "Claude-Sonnet-4.6": (47.59, 53.20, 50.35, 50.38, 2.29),
    "Claude-Haiku-4.5": (42.12, 48.35, 49.25, 46.57, 3.17),
}
TABLE_9_GEM = {
    "GPT-5.4": (10.79, 11.40, 12.75, 11.89, 11.71, 0.71),
    "GPT-5.4-mini": (6.17, 6.70, 6.88, 8.55, 7.08, 0.89),
    "GPT-5.4-nano": (8.63, 8.62, 8.98, 8.47, 8.68, 0.19),
    "Gemini-3.1-Pro": (21.54, 22.14, 21.84, 20.51, 21.51, 0.61),
    "Gemini-3-Flash": (24.99, 24.98, 24.95, 23.75, 24.67, 0.53),
    "Gemini-3.1-Flash-Lite": (11.66, 11.62, 12.12, 11.67, 11.77, 0.20),
    "Claude-Opus-4.7": (16.23, 16.14, 18.01, 15.81, 16.55, 0.86),
    "Claude-Sonnet-4.6": (7.66, 11.84, 12.38, 11.74, 10.91, 1.89),
    "Claude-Haiku-4.5": (4.54, 5.40, 7.23, 5.85, 5.76, 0.97),
}
# Table 2, DA column (All Set): Table 8's runs of Qwen3-4B and -8B, printed with the population std.
TABLE_2_DA_ALL = {"Qwen3-4B": (38.14, 0.99), "Qwen3-8B": (37.73, 4.37)}


def _check(runs: tuple[float, ...], mean: float, std: float, used: str) -> None:
    spread = spread_over_runs(list(runs), ddof=STD_DDOF[used])
    assert spread.mean == pytest.approx(mean, abs=PRINTED)
    assert spread.std == pytest.approx(std, abs=PRINTED)
    assert spread.two_sigma == pytest.approx(2 * spread.std)
    other = next(name for name in STD_DDOF if name != used)
    assert spread_over_runs(list(runs), ddof=STD_DDOF[other]).std != pytest.approx(std, abs=PRINTED)


class PaperStdTests:
    @pytest.mark.parametrize("model", TABLE_8_ALL)
    def test_table_8_all_set_prints_the_sample_std(self, model):
        *runs, mean, std = TABLE_8_ALL[model]
        _check(tuple(runs), mean, std, "sample")

    @pytest.mark.parametrize("model", TABLE_8_GEM)
    def test_table_8_gem_set_prints_the_population_std(self, model):
        *runs, mean, std = TABLE_8_GEM[model]
        _check(tuple(runs), mean, std, "population")

    @pytest.mark.parametrize("model", TABLE_9_ALL)
    def test_table_9_all_set_subsets_print_the_population_std(self, model):
        *runs, mean, std = TABLE_9_ALL[model]
        _check(tuple(runs), mean, std, "population")

    @pytest.mark.parametrize("model", TABLE_9_GEM)
    def test_table_9_gem_set_prints_the_population_std(self, model):
        *runs, mean, std = TABLE_9_GEM[model]
        _check(tuple(runs), mean, std, "population")

    @pytest.mark.parametrize("model", TABLE_2_DA_ALL)
    def test_table_2_prints_table_8_s_runs_with_the_population_std(self, model):
        mean, std = TABLE_2_DA_ALL[model]
        *runs, table_8_mean, _ = TABLE_8_ALL[model]
        assert table_8_mean == mean
        _check(tuple(runs), mean, std, "population")

    def test_two_sigma_error_bar_and_bad_ddof(self):
        spread = spread_over_runs([0.2, 0.4], ddof=0)
        assert (spread.std, spread.ddof) == (pytest.approx(0.1), 0)
        assert spread.error_bar == (pytest.approx(0.1), pytest.approx(0.5))
        assert spread_over_runs([0.2]).error_bar is None
        with pytest.raises(ValueError, match="unknown standard deviation"):
            spread_over_runs([0.2, 0.4], ddof=2)


# Table 10, open models (All Set): Overall and the twelve domains; the last row is the paper's
# "Avg. over Models", the mean of the eleven models' values in each column.
TABLE_10_OPEN = (
    (43.92, 56.97, 33.05, 44.11, 33.06, 59.65, 30.01, 25.80, 22.53, 49.13, 19.98, 48.25, 34.52),
    (28.36, 42.00, 20.90, 29.29, 11.41, 50.31, 13.62, 0.80, 13.64, 29.21, 13.79, 24.51, 25.26),
    (27.12, 35.88, 19.92, 24.48, 21.14, 43.01, 11.25, 6.88, 16.47, 14.67, 9.19, 27.00, 21.22),
    (44.22, 58.60, 31.30, 50.50, 26.59, 59.99, 28.41, 18.66, 23.26, 47.62, 23.11, 45.24, 24.93),
    (37.73, 53.73, 27.92, 38.97, 18.71, 59.08, 21.60, 18.51, 17.03, 43.16, 19.96, 37.61, 16.62),
    (38.14, 50.27, 30.63, 42.31, 23.94, 53.56, 23.53, 20.42, 18.45, 31.18, 19.74, 37.68, 24.98),
    (43.34, 59.69, 36.63, 48.10, 32.23, 66.46, 23.94, 13.50, 25.08, 24.63, 24.73, 39.83, 34.44),
    (32.57, 41.85, 17.90, 37.24, 27.57, 47.69, 17.78, 10.86, 21.29, 16.71, 19.52, 30.11, 26.75),
    (49.35, 64.82, 43.33, 55.41, 33.44, 69.87, 25.55, 8.57, 28.38, 58.65, 30.34, 43.12, 39.82),
    (45.87, 60.98, 35.78, 49.94, 27.41, 62.50, 29.58, 13.10, 24.66, 56.87, 25.51, 42.85, 30.57),
    (40.52, 53.72, 28.22, 47.35, 23.36, 53.95, 26.20, 2.96, 25.93, 36.80, 19.58, 44.74, 26.69),
)
TABLE_10_OPEN_AVG = (39.19, 52.32, 29.60, 42.52, 25.35, 56.92, 22.95, 12.73, 21.52, 37.15, 20.49, 38.27, 27.80)
# Table 11, proprietary models (Gem Set): Overall, Query, Dialogue, Monologue, Single, Multiple,
# Synthetic yes / no, Sensitive yes / no.
TABLE_11_PROPRIETARY = (
    (11.71, 13.82, 13.09, 7.18, 10.24, 22.98, 10.50, 11.85, 7.51, 12.34),
    (7.08, 11.12, 3.90, 4.48, 6.50, 11.50, 2.00, 7.68, 4.57, 7.46),
    (8.68, 12.22, 6.74, 5.52, 8.38, 10.97, 5.83, 9.01, 6.92, 8.94),
    (21.51, 26.03, 22.12, 14.25, 21.54, 21.28, 43.00, 18.95, 14.01, 22.65),
    (24.67, 23.11, 33.23, 18.02, 23.57, 33.15, 39.67, 22.88, 8.56, 27.12),
    (11.77, 9.19, 17.52, 9.52, 10.76, 19.52, 26.08, 10.06, 7.30, 12.45),
    (16.55, 18.69, 18.65, 11.17, 16.03, 20.56, 33.50, 14.53, 13.80, 16.97),
    (10.91, 12.10, 9.02, 11.13, 9.82, 19.29, 9.33, 11.09, 15.12, 10.26),
    (5.76, 5.31, 6.50, 5.62, 4.85, 12.75, 12.50, 4.95, 9.60, 5.17),
)
TABLE_11_PROPRIETARY_AVG = (13.18, 14.62, 14.53, 9.65, 12.41, 19.11, 20.26, 12.33, 9.71, 13.70)


#: Table 10's open-model columns whose printed average is not the mean of the column: DL (mean 52.59,
#: printed 52.32) and EC (mean 22.86, printed 22.95); its eleven other columns are.
TABLE_10_MISPRINTED = {1: 52.59, 6: 22.86}


class AvgOverModelsTests:
    @pytest.mark.parametrize(
        ("rows", "printed", "misprinted"),
        [
            (TABLE_10_OPEN, TABLE_10_OPEN_AVG, TABLE_10_MISPRINTED),
            (TABLE_11_PROPRIETARY, TABLE_11_PROPRIETARY_AVG, {}),
        ],
        ids=["table-10-open", "table-11-proprietary"],
    )
    def test_the_printed_avg_over_models_rows(self, rows, printed, misprinted):
        for column, value in enumerate(printed):
            average = average_over_models([row[column] for row in rows])
            if column in misprinted:
                assert average == pytest.approx(misprinted[column], abs=0.005) != pytest.approx(value, abs=PRINTED)
            else:
                assert average == pytest.approx(value, abs=PRINTED)

    def test_models_without_a_value_are_left_out(self):
        assert average_over_models([0.2, None, 0.4]) == pytest.approx(0.3)
        assert average_over_models([None]) is None
