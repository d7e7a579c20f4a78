"""The JSON reader people's files and bodies go through reads what the standard parser reads and
refuses what the stored rows cannot hold, whichever of its two parsers takes a document."""

import json

import pytest

from annotation import jsonsafe


class LoadsTests:
    @pytest.mark.parametrize(
        "text",
        [
            '{"a": [1, 2.5, -0, -0.0, 1e2, 1E-2, true, null, "\\u00e9\\ud83d\\ude00"], "a": "last wins"}',
            '{"big": 123456789012345678901234567890, "edge": -9223372036854775809, "u64": 18446744073709551616}',
            '{"id": "0000000000000000000000", "n": 9007199254740993, "f": 0.30000000000000004}',
            "[1.7976931348623157e308, 5e-324, 123456789.123456789123]",
        ],
    )
    def test_reads_as_the_standard_parser(self, text):
        parsed = jsonsafe.loads(text)
        assert parsed == json.loads(text)
        assert json.dumps(parsed) == json.dumps(json.loads(text))  # same types: an int stays an int

    def test_an_integer_beyond_64_bits_stays_exact(self):
        assert jsonsafe.loads('{"n": 123456789012345678901234567890}')["n"] == 123456789012345678901234567890

    @pytest.mark.parametrize(
        ("text", "path", "message"),
        [
            ('{"value": {"x": 1e999}}', "value.x", "1e999 is not a finite number"),
            ('{"value": [NaN]}', "value[0]", "NaN is not a finite number"),
            ('{"note": "\\ud800"}', "note", "unpaired surrogate"),
            ('{"raw_output": "a\\u0000b"}', "raw_output", jsonsafe.NUL_CHARACTER),
            ('{"value": {"tags": ["ok", "\\u0000"]}}', "value.tags[1]", jsonsafe.NUL_CHARACTER),
            ('{"value": {"a\\u0000": 1}}', "value", jsonsafe.NUL_CHARACTER),
            # The standard parser's path (a long digit run) refuses it as well.
            ('{"n": 12345678901234567890123, "note": "\\u0000"}', "note", jsonsafe.NUL_CHARACTER),
        ],
    )
    def test_refused_parts_are_named(self, text, path, message):
        with pytest.raises(jsonsafe.UnsafeJSON) as caught:
            jsonsafe.loads(text)
        assert caught.value.path == path
        assert message in caught.value.message

    def test_an_escaped_backslash_before_u0000_is_text_not_a_nul(self):
        assert jsonsafe.loads('{"note": "\\\\u0000"}') == {"note": "\\u0000"}

    def test_nesting_beyond_the_limit_is_refused(self):
        with pytest.raises(jsonsafe.UnsafeJSON) as caught:
            jsonsafe.loads("[" * 5 + "]" * 5, depth=4)
        assert "nested more than 4 levels deep" in caught.value.message

    def test_text_that_is_not_json_names_the_column(self):
        with pytest.raises(jsonsafe.NotJSON) as caught:
            jsonsafe.loads('{"a": 1,}')
        assert caught.value.column == 9


class ValueProblemTests:
    def test_a_nul_character_in_a_built_value_is_named(self):
        assert jsonsafe.value_problem({"comment": "a\x00b"}, limit=1000) == ("comment", jsonsafe.NUL_CHARACTER)

    def test_text_showing_a_backslash_u0000_is_stored(self):
        assert jsonsafe.value_problem({"comment": "see \\u0000 in the log"}, limit=1000) is None
