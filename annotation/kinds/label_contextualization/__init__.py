"""IntentGrasp label contextualization (paper 002).

A terse dataset label ("uses") becomes a clause-like intent statement ("To use data, methods, etc.,
from the cited paper."), or is flagged as impossible to contextualize. A second person reviews a
statement and accepts it or asks for a revision.
"""

from collections.abc import Hashable, Iterable, Iterator, Sequence
from typing import Any

from jsonschema import Draft202012Validator
from jsonschema.exceptions import ValidationError as SchemaError

from annotation.errors import FieldError
from annotation.kinds.base import (
    META,
    OPTIONAL_TEXT,
    TEXT,
    TEXT_LIST,
    RatingDimension,
    TaskKind,
    ValueLine,
    described,
    object_schema,
    without_none,
)

STATEMENT_PREFIX = "To "
STATEMENT_STARTS_WITH_TO = "an intent statement starts with 'To ' (e.g. 'To use data from the cited paper.')"
STATEMENT_ENDS_WITH_PERIOD = "an intent statement ends with a period"
REVISE_NEEDS_NOTE = "a 'revise' verdict needs a note saying what to change"

WRITE = object_schema(
    {
        "action": {"const": "write"},
        "statement": described(TEXT, "the intent statement: clause-like, starts with 'To ', ends with a period"),
        "comment": described(OPTIONAL_TEXT, "a free note"),
    },
    required=["action", "statement"],
)
CANNOT = object_schema(
    {
        "action": {"const": "cannot_contextualize"},
        "reason": described(TEXT, "why the label cannot become an intent statement"),
    },
    required=["action", "reason"],
)
REVIEW = object_schema(
    {
        "action": {"const": "review"},
        "statement": described(TEXT, "the statement under review, as its author wrote it"),
        "author": described(TEXT, "who wrote the statement under review"),
        "verdict": {
            "type": "string",
            "enum": ["accept", "revise"],
            "description": "`accept`, or `revise` to send it back",
        },
        "note": described(OPTIONAL_TEXT, "what to change (needed with `revise`)"),
    },
    required=["action", "statement", "author", "verdict"],
)
FORM_FIELDS = {
    "write": ("statement", "comment"),
    "cannot_contextualize": ("reason",),
    "review": ("statement", "author", "verdict", "note"),
}
ACTIONS = {"write": WRITE, "cannot_contextualize": CANNOT, "review": REVIEW}
ACTION_NAMES = {
    "write": "wrote a statement",
    "cannot_contextualize": "cannot be contextualized",
    "review": "reviewed a statement",
}
#: The value's fields as an expert reads them side by side (value_lines).
LINE_FIELDS = (
    ("statement", "Statement"),
    ("author", "Statement by"),
    ("verdict", "Review verdict"),
    ("reason", "Why it cannot be"),
    ("note", "Note"),
    ("comment", "Comment"),
)


def statement_problems(statement: str) -> list[str]:
    """The style rules of an IntentGrasp statement, shared by the form's inline checks."""
    problems = []
    if not statement.startswith(STATEMENT_PREFIX):
        problems.append(STATEMENT_STARTS_WITH_TO)
    if not statement.rstrip().endswith("."):
        problems.append(STATEMENT_ENDS_WITH_PERIOD)
    return problems


#: The demo project's guidelines (Markdown).
DEMO_GUIDELINES = """\
# IntentGrasp: label contextualization

Rewrite the terse dataset label as an **intent statement**: a clause saying what the speaker or
writer intends, readable without knowing the dataset.

- It starts with **"To "** and ends with **a period**.
- It covers what the label covers, and no more: use the examples and the other labels of the
  dataset to find the boundary.
- Example: ACL-ARC `Uses` → "To use data, methods, etc., from the cited paper."

If the label cannot be stated as an intent (it names a topic, or is a catch-all), flag it and
say why. When reviewing someone else's statement, accept it or ask for a revision with a note.
"""


class LabelContextualization(TaskKind):
    name = "label_contextualization"
    label = "IntentGrasp label contextualization"
    description = "Rewrite a terse intent label as a clause-like intent statement, or review one."
    review_template = "label_contextualization/reviews.html"
    # Reviews are the ratings: the unit is (item, reviewed statement), so reviews of one statement pair up.
    rating_dimensions = (
        RatingDimension("review_verdict", "nominal", "Review verdict", ("accept", "revise"), ("accept", "revise")),
    )
    value_rules_need_payload = False
    demo_project = {
        **{"slug": "demo-labels", "title": "Demo: IntentGrasp label contextualization", "overlap": 2, "seed": 7},
        "guidelines": DEMO_GUIDELINES,
    }
    payload_schema = object_schema(
        {
            "dataset": described(TEXT, "the source dataset of the label"),
            "domain": described(TEXT, "the dataset's domain"),
            "label": described(TEXT, "the terse label to rewrite"),
            "guideline": described(OPTIONAL_TEXT, "the dataset's annotation guideline text for this label"),
            "examples": described(TEXT_LIST, "example texts that carry the label"),
            "other_labels": described(TEXT_LIST, "the dataset's other labels, for contrast"),
            "meta": META,
        },
        required=["dataset", "domain", "label"],
    )
    # Blinding. The form shows the label and everything the dataset says about it. A model's draft
    # statement (kept in ``meta.draft`` by the statement-drafting generation step) reaches a person only
    # as a suggestion, under the project's suggestion exposure, which records whether it was visible.
    rater_fields = ("dataset", "domain", "label", "guideline", "examples", "other_labels")
    hidden_fields = {
        "meta": "provenance, and the model's draft statement (`meta.draft`): shown raw it would anchor every "
        "writer, outside the suggestion exposure that the anchoring measures rely on",
    }
    # The action decides which fields apply; the schema names the action in each branch.
    value_schema = {
        "type": "object",
        "required": ["action"],
        "oneOf": list(ACTIONS.values()),
    }
    value_rule_notes = (
        f"`write` and `review`: {STATEMENT_STARTS_WITH_TO}",
        f"`write` and `review`: {STATEMENT_ENDS_WITH_PERIOD}",
        REVISE_NEEDS_NOTE,
    )

    def explain_value(self, value: Any) -> Iterable[SchemaError]:
        # oneOf errors say only "matched none"; report against the branch the action names.
        action: Any = value.get("action") if isinstance(value, dict) else None  # any JSON value
        branch = ACTIONS.get(action)
        if branch is None:
            yield SchemaError(
                f"must be one of {', '.join(map(repr, ACTIONS))}, got {action!r}",
                validator="enum",
                validator_value=list(ACTIONS),
                instance=action,
                path=["action"],
            )
            return
        yield from Draft202012Validator(branch).iter_errors(value)

    def value_rules(self, value: dict, payload: dict) -> Iterator[FieldError]:
        if value["action"] in ("write", "review"):
            for problem in statement_problems(value["statement"]):
                yield FieldError("statement", problem)
        if value["action"] == "review" and value["verdict"] == "revise" and not value.get("note", "").strip():
            yield FieldError("note", REVISE_NEEDS_NOTE)

    def value_ratings(self, value: dict, payload: dict | None) -> Iterator[tuple[str, str, Any]]:
        if value["action"] == "review":
            yield value["statement"], "review_verdict", value["verdict"]

    def rating_number(self, dimension: RatingDimension, rating: Any) -> float | None:
        # Estimates report the share of statements reviewers accept.
        return {"accept": 1.0, "revise": 0.0}.get(rating)

    def draft_text(self, value: dict) -> str | None:
        return value["statement"] if value.get("action") == "write" else None

    def consensus(self, values: Sequence[dict], *, keys: Sequence[Hashable] | None = None) -> dict | None:
        """A statement is gold once reviewers accepted it and nobody asked for a revision; a label
        that the majority calls impossible to contextualize is gold as such."""
        reviews: dict[str, list[str]] = {}
        for value in values:
            if value["action"] == "review":
                reviews.setdefault(value["statement"], []).append(value["verdict"])
        accepted = [s for s, verdicts in reviews.items() if "revise" not in verdicts and "accept" in verdicts]
        if len(accepted) == 1:
            return {"action": "write", "statement": accepted[0]}
        if accepted:
            return None  # two statements both accepted: an expert picks one
        cannot = [v for v in values if v["action"] == "cannot_contextualize"]
        return cannot[0] if cannot and len(cannot) * 2 > len(values) else None

    def statement_of(self, value: dict) -> str | None:
        """The intent statement a gold value approves (None when the label cannot be contextualized)."""
        return value.get("statement") if value.get("action") == "write" else None

    def benchmark_record(self, *, external_id: str, payload: dict, gold: dict) -> dict:
        return {
            "id": external_id,
            "dataset": payload["dataset"],
            "domain": payload["domain"],
            "label": payload["label"],
            "statement": gold.get("statement"),
            "contextualizable": gold["action"] != "cannot_contextualize",
        }

    field_words = {"statement": "Intent statement", "reason": "Why it cannot be contextualized", "note": "Note"}
    field_prompts = {
        "statement": "write the intent statement, or choose “This label cannot be contextualized”",
        "reason": "say why this label cannot be contextualized",
        "verdict": "choose Accept or Ask for revision",
    }

    def value_from_form(self, data: Any, *, payload: dict, presentation: dict | None = None) -> dict:
        action: Any = data.get("action") or None
        fields = FORM_FIELDS.get(action, ())
        return without_none({"action": action, **{name: data.get(name) or None for name in fields}})

    def form_context(
        self, *, payload: dict, value: dict | None, peers: list[dict], presentation: dict | None = None
    ) -> dict:
        statements = [
            {"author": peer["rater"], "statement": peer["value"]["statement"]}
            for peer in peers
            if peer["value"].get("action") == "write"
        ]
        return {"peer_statements": statements, "action": (value or {}).get("action", "write")}

    def value_lines(self, value: dict, payload: dict) -> list[ValueLine]:
        lines = [ValueLine("action", "Action", ACTION_NAMES.get(value.get("action", ""), str(value.get("action"))))]
        for name, label in LINE_FIELDS:
            if value.get(name):
                lines.append(ValueLine(name, label, str(value[name]), free_text=name in self.free_text_fields))
        return lines

    def peers_visible_to(self, roles: set[str]) -> bool:
        return "expert" in roles  # reviewers accept or revise other people's statements

    def roles_for_value(self, value: dict) -> frozenset[str]:
        # An accepted review makes a statement gold: only experts review.
        return frozenset({"expert"}) if value.get("action") == "review" else frozenset()

    def gold_score(self, value: dict, gold: dict) -> float:
        def normal(v: dict) -> tuple:
            return (v.get("action"), " ".join(v.get("statement", "").lower().split()))

        return float(normal(value) == normal(gold))

    def example_payload(self) -> dict:
        return {
            "dataset": "ACL-ARC",
            "domain": "writing/citation",
            "label": "Uses",
            "guideline": "The citing paper uses the methodology or tools created by the cited paper.",
            "examples": [],
            "other_labels": ["Background", "CompareOrContrast", "Extends", "Future", "Motivation"],
        }

    def example_value(self) -> dict:
        return {"action": "write", "statement": "To use data, methods, etc., from the cited paper."}

    def example_values_needing_roles(self) -> list[dict]:
        return [{**self.example_value(), "action": "review", "author": "annotator1", "verdict": "accept"}]
