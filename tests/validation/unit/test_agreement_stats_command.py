"""``manage.py agreement_stats`` and validation.ratings_io: the command-line contract of docs/cli.md.

Exit codes: 0 success, 1 bad input (line and field named on stderr), 2 usage error; machine-readable
output on stdout only. The commands run in-process through ``execute_from_command_line`` (so the
exit codes are the real ones), plus one real subprocess.
"""

from __future__ import annotations

import csv
import io
import json
import subprocess
import sys
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from tests.validation.conftest import run_command
from validation.agreement import Rating
from validation.ratings_io import RatingsFileInvalid, read_ratings

PROJECT_ROOT = Path(__file__).resolve().parents[3]

# Stata [R] kappa, rate.dta (Boyd et al. 1982): radiologist A (rows) x B (columns), categories 1-4.
STATA_RATE_TABLE = [[21, 12, 0, 0], [4, 17, 1, 0], [3, 9, 15, 2], [0, 0, 0, 1]]


def rate_csv(path: Path, *, dimension: str | None = None) -> Path:
    rows = []
    unit = 0
    for i, line in enumerate(STATA_RATE_TABLE):
        for j, count in enumerate(line):
            for _ in range(count):
                unit += 1
                rows += [(f"x{unit}", "rad_a", i + 1), (f"x{unit}", "rad_b", j + 1)]
    with path.open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["unit", "rater", "value"] + (["dimension"] if dimension else []))
        for row in rows:
            writer.writerow([*row, dimension] if dimension else row)
    return path


def write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def run(capsys, *argv: str) -> tuple[int, str, str]:
    return run_command(capsys, "agreement_stats", *argv)


class AgreementStatsCommandTests:
    def test_json_for_a_file_without_dimension_column(self, tmp_path, capsys):
        code, out, err = run(capsys, str(rate_csv(tmp_path / "rate.csv")), "--level", "ordinal")
        assert code == 0, err
        payload = json.loads(out)
        assert list(payload) == ["dimensions"]
        value = payload["dimensions"]["value"]
        assert (value["level"], value["n_units"], value["n_raters"], value["n_ratings"]) == ("ordinal", 85, 2, 170)
        # Stata [R] kappa, rate.dta: 0.4728, wgt(w) 0.5684, wgt(w2) 0.6714; agreement 63.53%.
        assert value["cohen_kappa"]["unweighted"] == pytest.approx(0.4728, abs=5e-5)
        assert value["cohen_kappa"]["linear"] == pytest.approx(0.5684, abs=5e-5)
        assert value["cohen_kappa"]["quadratic"] == pytest.approx(0.6714, abs=5e-5)
        assert value["percent_agreement"] == pytest.approx(0.6353, abs=5e-5)
        assert "spearman" not in value and "ci" not in value

    def test_dimensions_reference_and_bootstrap(self, tmp_path, capsys):
        path = write(
            tmp_path / "copa.csv",
            "dimension,unit,rater,value\n"
            + "".join(
                f"{dim},q{u},{rater},{score}\n"
                for dim in ("CT", "SA")
                for u, (h1, h2, llm) in enumerate([(0, 0, 0), (1, 2, 2), (2, 2, 1), (1, 1, 1), (0, 1, 0), (2, 2, 2)])
                for rater, score in (("h1", h1), ("h2", h2), ("llm", llm))
            ),
        )
        args = [str(path), "--level", "ordinal", "--reference", "llm", "--bootstrap", "100", "--seed", "5"]
        code, out, err = run(capsys, *args)
        assert code == 0, err
        payload = json.loads(out)
        assert list(payload["dimensions"]) == ["CT", "SA"]
        ct = payload["dimensions"]["CT"]
        assert ct["n_raters"] == 3 and ct["cohen_kappa"] is None
        assert ct["notes"]["cohen_kappa"] == "needs exactly 2 raters; found 3"
        assert set(ct["spearman"]) == {"rho", "p", "n"} and ct["spearman"]["n"] == 6
        assert len(ct["ci"]["krippendorff_alpha"]) == 2
        assert ct["bootstrap"] == {
            "n_resamples": 100,
            "seed": 5,
            "confidence_level": 0.95,
            "method": "percentile bootstrap over units (resampled with replacement)",
        }
        # Same seed, same numbers.
        assert run(capsys, *args)[1] == out

    @pytest.mark.parametrize(
        ("fmt", "start"),
        [("md", "| Dimension | Level |"), ("latex", r"\begin{tabular}"), ("csv", "dimension,level,n_units")],
    )
    def test_table_formats(self, tmp_path, capsys, fmt, start):
        code, out, err = run(capsys, str(rate_csv(tmp_path / "rate.csv", dimension="finding")), "--format", fmt)
        assert code == 0, err
        # LaTeX may open with comment lines giving the reasons for empty cells.
        first = next(line for line in out.splitlines() if not line.startswith("%"))
        assert first.startswith(start)
        assert "finding" in out

    def test_missing_values_and_string_categories(self, tmp_path, capsys):
        text = "unit,rater,value\nu1,a,pass\nu1,b,pass\nu2,a,fail\nu2,b,\nu3,a,fail\nu3,b,fail\n"
        path = write(tmp_path / "v.csv", text)
        code, out, err = run(capsys, str(path))
        assert code == 0, err
        value = json.loads(out)["dimensions"]["value"]
        assert (value["n_units"], value["n_ratings"]) == (3, 5)
        assert value["percent_agreement"] == 1.0
        assert value["fleiss_kappa"] is None and "fleiss_kappa" in value["notes"]

    @pytest.mark.parametrize(
        ("text", "expected"),
        [
            ("unit,rater,value\nu1,a,1\nu1,b,high\n", "line 3, field value: 'high' is not a number"),
            ("unit,rater,value\nu1,a,1\nu1,a,2\n", "line 3, field rater: unit 'u1' already has a rating by rater 'a'"),
            ("unit,rater,value\nu1,,1\n", "line 2, field rater: empty"),
            ("unit,rater\nu1,a\n", "line 1, field value: missing from the header"),
            ("unit,rater,value,extra\n", "line 1, field extra: unknown column"),
            ("unit,rater,value\nu1,a\n", "line 2, field value: the row has 2 fields, the header has 3"),
            ("unit,rater,value\nu1,a,nan\n", "line 2, field value: 'nan' is not a finite number"),
            ("", "line 1, record: the file is empty"),
        ],
    )
    def test_bad_input_exits_1_naming_line_and_field(self, tmp_path, capsys, text, expected):
        code, out, err = run(capsys, str(write(tmp_path / "bad.csv", text)), "--level", "interval")
        assert code == 1
        assert out == ""
        assert expected in err

    def test_unreadable_file_exits_1(self, tmp_path, capsys):
        code, out, err = run(capsys, str(tmp_path / "absent.csv"))
        assert code == 1 and out == ""
        assert "cannot open" in err

    def test_unknown_reference_exits_1(self, tmp_path, capsys):
        code, out, err = run(capsys, str(rate_csv(tmp_path / "rate.csv")), "--reference", "nobody")
        assert code == 1 and out == ""
        assert "--reference: rater 'nobody' has no rating" in err

    @pytest.mark.parametrize(
        "args",
        [
            ["--level", "ratio"],
            ["--format", "xlsx"],
            ["--bootstrap", "-1"],
            ["--bootstrap", "many"],
            ["--seed", "-3"],
        ],
    )
    def test_usage_errors_exit_2(self, tmp_path, capsys, args):
        code, out, err = run(capsys, str(rate_csv(tmp_path / "rate.csv")), *args)
        assert code == 2
        assert out == ""
        assert "error:" in err

    def test_missing_file_argument_exits_2(self, capsys):
        code, out, err = run(capsys)
        assert code == 2 and out == ""

    def test_call_command(self, tmp_path):
        buffer = io.StringIO()
        call_command("agreement_stats", str(rate_csv(tmp_path / "rate.csv")), level="ordinal", stdout=buffer)
        assert json.loads(buffer.getvalue())["dimensions"]["value"]["n_units"] == 85
        with pytest.raises(CommandError, match="line 2, field value") as raised:
            bad = write(tmp_path / "bad.csv", "unit,rater,value\nu,a,x\n")
            call_command("agreement_stats", str(bad), level="ordinal")
        assert raised.value.returncode == 1

    def test_real_process_exit_codes(self, tmp_path):
        path = rate_csv(tmp_path / "rate.csv")
        ok = subprocess.run(
            [sys.executable, "manage.py", "agreement_stats", str(path), "--format", "csv"],
            cwd=PROJECT_ROOT,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert ok.returncode == 0, ok.stderr
        assert ok.stdout.startswith("dimension,level,n_units")
        usage = subprocess.run(
            [sys.executable, "manage.py", "agreement_stats", str(path), "--level", "ratio"],
            cwd=PROJECT_ROOT,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert usage.returncode == 2 and usage.stdout == ""


class ReadRatingsTests:
    def test_groups_by_dimension_in_file_order(self, tmp_path):
        path = write(tmp_path / "r.csv", "dimension,unit,rater,value\nB,u1,a,1\nA,u1,a,2\nB,u1,b,\n")
        ratings = read_ratings(path, level="ordinal")
        assert list(ratings) == ["B", "A"]
        assert ratings["B"] == [Rating("u1", "a", 1.0), Rating("u1", "b", None)]

    def test_nominal_keeps_strings_and_numeric_levels_parse_floats(self, tmp_path):
        path = write(tmp_path / "r.csv", "unit,rater,value\nu1,a, 1.5 \n")
        assert read_ratings(path, level="nominal")["value"] == [Rating("u1", "a", "1.5")]
        assert read_ratings(path, level="interval")["value"] == [Rating("u1", "a", 1.5)]

    def test_byte_order_mark_quoted_fields_and_blank_lines(self, tmp_path):
        path = tmp_path / "r.csv"
        path.write_bytes('\ufeffunit,rater,value\n\n"u,1","rater\nwith newline",x\n'.encode())
        assert read_ratings(path, level="nominal")["value"] == [Rating("u,1", "rater\nwith newline", "x")]

    def test_reports_every_error_with_its_line(self, tmp_path):
        path = write(tmp_path / "r.csv", "unit,rater,value\nu1,a,x\nu2,a,1\nu3,,y\n")
        with pytest.raises(RatingsFileInvalid) as raised:
            read_ratings(path, level="ordinal")
        lines = str(raised.value).splitlines()
        assert lines[0].startswith("line 2, field value:")
        assert lines[1].startswith("line 4, field rater:")
        assert lines[2].startswith("line 4, field value:")
        assert raised.value.code == "ratings_file_invalid"

    def test_record_spanning_lines_is_reported_where_it_starts(self, tmp_path):
        path = write(tmp_path / "r.csv", 'unit,rater,value\n"u\n1",a,1\nu2,a,bad\n')
        with pytest.raises(RatingsFileInvalid, match="line 4, field value"):
            read_ratings(path, level="interval")

    def test_header_only_has_no_ratings(self, tmp_path):
        with pytest.raises(RatingsFileInvalid, match="line 2, record: no ratings after the header"):
            read_ratings(write(tmp_path / "r.csv", "unit,rater,value\n"), level="nominal")

    def test_not_utf8(self, tmp_path):
        path = tmp_path / "r.csv"
        path.write_bytes(b"unit,rater,value\nu1,a,\xff\xfe\n")
        with pytest.raises(RatingsFileInvalid, match="not UTF-8"):
            read_ratings(path, level="nominal")

    def test_reads_an_open_stream(self):
        assert read_ratings(io.StringIO("unit,rater,value\nu1,a,b\n"), level="nominal") == {
            "value": [Rating("u1", "a", "b")]
        }

    def test_unknown_level(self):
        with pytest.raises(ValueError, match="level must be one of"):
            read_ratings(io.StringIO(""), level="ratio")  # type: ignore[arg-type]  # a bad level on purpose
