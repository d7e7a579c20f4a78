"""How a problem is named: by line and field where it has them, and plainly where it is about the
whole file (no "record:" in front of "unsupported file type")."""

import pytest

from annotation.errors import FieldError, ImportRejected
from annotation.importing import import_items
from annotation.importing.reading import UNSUPPORTED_FORMAT

pytestmark = pytest.mark.django_db


class FieldErrorTests:
    def test_a_whole_file_problem_is_its_message_alone(self, make_project, tmp_path):
        path = tmp_path / "items.txt"
        path.write_text("x")
        with pytest.raises(ImportRejected) as refused:
            import_items(project=make_project("copa_likert"), path=path)
        assert [str(e) for e in refused.value.errors] == [UNSUPPORTED_FORMAT.format(suffix=".txt")]

    def test_a_line_and_a_field_are_named_where_there_are_some(self):
        assert str(FieldError("", "each line must be a JSON object, got list", 3)) == (
            "line 3, record: each line must be a JSON object, got list"
        )
        assert str(FieldError("question", "must not be empty", 2)) == "line 2, field question: must not be empty"
        assert str(FieldError("question", "must not be empty")) == "field question: must not be empty"
