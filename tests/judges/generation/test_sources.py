"""Source readers: streaming records with line-and-field errors; the asker's history never leaks."""

from __future__ import annotations

import json

import pytest

from annotation.errors import ErrorCollector
from judges.generation.sources.intent_labels import IntentLabelsReader
from judges.generation.sources.stackexchange import HISTORY_LIMIT, NO_ACCEPTED, StackExchangeReader
from tests.judges.generation.conftest import LABELS, sample_threads


def read(reader, path):
    errors = ErrorCollector()
    return list(reader.read(path, errors)), errors


def earlier(question_id: int, date: str) -> dict:
    return {"question_id": question_id, "title": f"earlier {question_id}", "body_text": "b", "creation_date": date}


class StackExchangeReaderTests:
    def test_history_is_the_earlier_questions_oldest_first_cut_to_the_most_recent_fifty(self, tmp_path):
        thread = sample_threads()[0]
        target = thread["creation_date"]
        before = [earlier(1000 + n, f"2001-01-01T00:00:{n % 60:02d}.{n:03d}") for n in range(HISTORY_LIMIT + 10)]
        after = [earlier(5000, "2099-01-01T00:00:00.000"), earlier(5001, target)]
        itself = earlier(thread["question_id"], "2000-01-01T00:00:00.000")
        thread["asker_earlier_questions"] = list(reversed(before)) + after + [itself]
        path = tmp_path / "t.jsonl"
        path.write_text(json.dumps(thread) + "\n")
        (record,), errors = read(StackExchangeReader(), path)
        assert not errors
        history = record.data["history"]
        assert [q["question_id"] for q in history] == [
            q["question_id"] for q in sorted(before, key=lambda q: q["creation_date"])
        ][-HISTORY_LIMIT:]
        assert all(q["creation_date"] < target for q in history)

    def test_a_bad_thread_is_reported_with_its_line_and_field(self, tmp_path):
        good, bad = sample_threads()[:2]
        bad["accepted_answer_id"] = 1
        del bad["title"]
        path = tmp_path / "t.jsonl"
        path.write_text(json.dumps(good) + "\n" + json.dumps(bad) + "\n")
        records, errors = read(StackExchangeReader(), path)
        assert [(e.line, e.field) for e in errors.errors] == [(2, "title")]
        bad["title"] = "back"
        path.write_text(json.dumps(good) + "\n" + json.dumps(bad) + "\n")
        records, errors = read(StackExchangeReader(), path)
        assert [(e.line, e.field, e.message) for e in errors.errors] == [
            (2, "accepted_answer_id", NO_ACCEPTED.format(id=1))
        ]

    def test_a_repeated_thread_is_refused(self, tmp_path):
        thread = sample_threads()[0]
        path = tmp_path / "t.jsonl"
        path.write_text((json.dumps(thread) + "\n") * 2)
        records, errors = read(StackExchangeReader(), path)
        assert len(records) == 1 and [e.line for e in errors.errors] == [2]

    def test_a_file_that_is_not_jsonl_is_refused(self, tmp_path):
        path = tmp_path / "t.csv"
        path.write_text("a,b\n")
        records, errors = read(StackExchangeReader(), path)
        assert records == [] and "JSON Lines" in errors.errors[0].message


class IntentLabelsReaderTests:
    def test_each_label_comes_with_its_examples_and_the_other_labels_of_its_dataset(self):
        records, errors = read(IntentLabelsReader(), LABELS)
        assert not errors and len(records) == 10
        snips = next(r for r in records if r.source_id == "SNIPS:AddToPlaylist")
        assert snips.data["other_labels"] == ["BookRestaurant", "GetWeather", "PlayMusic"]
        assert len(snips.data["examples"]) == 3 and snips.licence == "CC0-1.0"
        multiwoz = next(r for r in records if r.data["dataset"] == "MultiWOZ-2.2")
        assert multiwoz.data["guideline"]  # its schema description

    @pytest.mark.parametrize(("field", "value"), [("examples", "not a list"), ("label", ""), ("license", None)])
    def test_a_bad_label_line_names_the_field(self, tmp_path, field, value):
        line = json.loads(LABELS.read_text().splitlines()[0])
        line[field] = value
        path = tmp_path / "labels.jsonl"
        path.write_text(json.dumps(line) + "\n")
        records, errors = read(IntentLabelsReader(), path)
        assert records == [] and [(e.line, e.field) for e in errors.errors] == [(1, field)]
