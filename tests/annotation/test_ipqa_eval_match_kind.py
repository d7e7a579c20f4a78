"""The ipqa_eval_match kind's own rules: the form's two answers, refused values, ratings as numbers."""

from django.http import QueryDict

from annotation.kinds import get_kind

KIND = get_kind("ipqa_eval_match")
PAYLOAD = KIND.example_payload()


def form(text: str) -> dict:
    return KIND.value_from_form(QueryDict(text), payload=PAYLOAD)


def test_the_form_s_answers_are_match_and_no_match_with_an_optional_note():
    assert form("match=match") == {"match": True}
    assert form("match=no_match&note=narrower") == {"match": False, "note": "narrower"}


def test_a_form_without_an_answer_or_with_a_crafted_one_is_refused_by_name():
    for crafted in ("", "match=maybe", "match=1"):
        errors = KIND.check_value(form(crafted), payload=PAYLOAD)
        assert [e.field for e in errors] == ["value"] and "missing required field 'match'" in errors[0].message
        assert KIND.friendly_error(errors[0]) == "Choose Match or no match."


def test_match_must_be_a_boolean_and_unknown_fields_are_named():
    assert "must be of type boolean" in str(KIND.check_value({"match": 1}, payload=PAYLOAD)[0])
    assert "unknown field 'score'" in str(KIND.check_value({"match": True, "score": 1}, payload=PAYLOAD)[0])


def test_ratings_are_zero_or_one_never_booleans_and_notes_never_disagree():
    assert list(KIND.value_ratings({"match": True}, None)) == [("", "match", 1)]
    assert list(KIND.value_ratings({"match": False}, None)) == [("", "match", 0)]
    assert KIND.decision_key({"match": True, "note": "a"}) == KIND.decision_key({"match": True})


def test_a_pair_needs_both_intents():
    errors = KIND.check_payload({"question": "q", "predicted_intent": "To x"})
    assert [str(e) for e in errors] == ["missing required field 'gold_intent'"]
