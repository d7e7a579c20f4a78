"""The contract every task kind implements.

A task kind owns the rules of one kind of human judgement: the item payload it imports, the
annotation value it stores, and the checks between the two. Views, services and importers call
these methods and never branch on a kind's name (Django's backend pattern: one base class, one
module per implementation).

Shape checks are JSON Schemas (``payload_schema``, ``value_schema``); they double as the
structured-output schema given to LLM judges. Rules that span fields live in ``payload_rules`` and
``value_rules``. Validation runs a compiled schema first (fast path for large imports) and only
walks the full error list when a record is bad, so messages stay complete and imports stay quick.

For agreement, a kind says which *dimensions* its values are rated on (``rating_dimensions``, each
with a level of measurement) and turns one value into ratings (``value_ratings``): a unit is an item,
or an item plus a suffix when one value rates several things (IPQA rates each candidate intent).
"""

from __future__ import annotations

import inspect
import json
import re
from collections.abc import Hashable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any, ClassVar, Literal

import jsonschema_rs
import numpy as np
from django.conf import settings
from jsonschema import Draft202012Validator
from jsonschema.exceptions import ValidationError as SchemaError

from annotation import csvcells, jsonsafe
from annotation.errors import FieldError
from annotation.kinds import blinding
from annotation.kinds.wording import (
    MISSING_FIELDS,
    describe_schema_error,
    field_path,
    join_words,
    sentence,
    value_path,
)

#: A kind's form script in its folder (``TaskKind.folder``), served by annotation.kinds.finders under the prefix.
KIND_SCRIPT = "form.js"
KIND_SCRIPT_PREFIX = "kinds"

TEXT = {"type": "string", "minLength": 1}
OPTIONAL_TEXT = {"type": "string"}
TEXT_LIST = {"type": "array", "items": TEXT}
# Free-form provenance (source URL, licence, dataset split): kept with the item, never validated further.
META = {
    "type": "object",
    "description": "free-form provenance (source, licence, split); stored with the item, not validated",
}


def object_schema(properties: dict, *, required: Iterable[str] = (), **extra: Any) -> dict:
    """A closed JSON object: unknown keys are errors, since they are nearly always typos."""
    return {
        "type": "object",
        "properties": properties,
        "required": list(required),
        "additionalProperties": False,
        **extra,
    }


def form_int(text: str | None) -> Any:
    """A form field read as a whole number; other text is kept as is so the schema names the problem."""
    if text is None or text == "":
        return None
    try:
        return int(text)
    except ValueError:
        return text


def described(spec: dict, meaning: str) -> dict:
    """``spec`` with its field's meaning as the schema ``description`` (what the format docs print)."""
    return {**spec, "description": meaning}


def without_none(mapping: dict) -> dict:
    """Absent form fields stay absent (the schema then says which one is missing)."""
    return {key: value for key, value in mapping.items() if value is not None}


@dataclass(frozen=True)
class RatingDimension:
    """One dimension agreement is measured on: a CoPA factor, an IPQA label, a verdict.

    ``level`` is ``'nominal'``, ``'ordinal'`` or ``'interval'``. ``categories`` lists the possible
    values in scale order (empty for a continuous score) and ``category_labels`` their display names.
    """

    name: str
    level: Literal["nominal", "ordinal", "interval"]
    label: str = ""
    categories: tuple[Any, ...] = ()
    category_labels: tuple[str, ...] = ()

    @property
    def title(self) -> str:
        return self.label or self.name

    def category_label(self, value: Any) -> str:
        if value in self.categories and len(self.category_labels) == len(self.categories):
            return self.category_labels[self.categories.index(value)]
        return str(value)


@dataclass(frozen=True)
class DimensionColumn:
    """Ratings of one dimension from a batch of values, as parallel columns.

    ``rows[i]`` indexes the value (in the batch given to ``ratings_columns``) that gave rating
    ``values[i]``; ``suffixes[i]`` names the part of the item it rates, or ``suffixes`` is None when
    every rating is of the whole item.
    """

    rows: Sequence[int] | np.ndarray
    values: Sequence[Any] | np.ndarray
    suffixes: Sequence[str] | None = None


@dataclass(frozen=True)
class ValueLine:
    """One judgement in a value, as a person reads it (a row when raters are shown side by side).

    ``key`` names the judgement, so the same judgement in two raters' values lines up; free text
    (comments, notes) is shown but never makes raters differ.
    """

    key: str
    label: str
    text: str
    free_text: bool = False


class TaskKind:
    """Base class of a task kind. Subclasses set the class attributes and may add rules.

    A kind is a folder, ``annotation/kinds/<name>/``, found by its name: the class in ``__init__.py``
    (listed once in settings.CONCORD_TASK_KINDS), its form partial ``form.html``, and, when the form
    has keys or live checks, ``form.js`` (served as static ``kinds/<name>/form.js``). Every extension
    point a page, a service or the docs read is declared here with its default, so callers call it
    and never ask whether a kind has it (a capability a kind lacks raises NotImplementedError, which
    the caller that offers it catches, as Django's ``clearsessions`` does with ``clear_expired``).

    What a minimal kind must define
    -------------------------------
    ``name``, ``label``, ``payload_schema``, ``value_schema``, ``rating_dimensions``,
    ``value_ratings``, ``value_from_form``, ``example_payload``, ``example_value``, the blinding
    split of its payload (``rater_fields`` / ``hidden_fields``), and the ``form.html`` in its folder.
    Everything else has a default that fits a kind whose value is one judgement of the whole item.

    Facets (the members, by what they serve)
    ----------------------------------------
    identity
        ``name``, ``label``, ``description``, ``hub_task_categories``.
    schema (imports, the API, LLM structured output, docs/formats.md)
        ``payload_schema``, ``value_schema``, ``payload_rules``, ``value_rules``,
        ``payload_rule_notes``, ``value_rule_notes``, ``value_rules_need_payload``, ``value_rules_payload_keys``,
        ``explain_value``, ``check_payload``, ``check_value``, ``payload_fields``, ``decode_csv_cell``.
    ratings (agreement, reports, estimates)
        ``rating_dimensions``, ``value_ratings``, ``ratings_need_payload``, ``ratings_columns``,
        ``estimate_dimensions``, ``rating_number``, ``estimate_numbers``, ``estimate_columns``,
        ``draft_text``.
    gold (adjudication, gold sets, exports)
        ``default_adjudication_rules``, ``free_text_fields``, ``presentation_fields``,
        ``decision_key``, ``consensus``, ``benchmark_record``, ``value_lines``, ``gold_score``,
        ``statement_of``.
    blinding (what of an item a rater sees)
        ``rater_fields``, ``hidden_fields``, ``revealable_fields``, ``rater_payload``,
        ``hidden_values``, ``undeclared_payload_fields``.
    form (the annotator's workspace)
        ``form_template``, ``form_script``, ``review_template``, ``shortcut_help``, ``presentation``,
        ``form_context``, ``value_from_form``, ``field_words``, ``field_prompts``, ``missing_verb``,
        ``field_label``, ``friendly_error``, ``peers_visible_to``, ``roles_for_value``.
    design (kinds whose questions a project declares: annotation.kinds.designs)
        ``design_schema``, ``design``, ``check_design``, ``with_design``.
    docs and demos
        ``example_payload``, ``example_value``, ``example_values_needing_roles``, ``demo_project``.

    The other layers add to a kind by folder, never through this class: ``judges/kinds/<name>/``
    (prompts, baselines, generation steps), ``validation/kinds/<name>/`` (paper evaluations) and
    ``validation/reports/<name>.py`` (the report's layout).
    """

    name: ClassVar[str]
    label: ClassVar[str]
    description: ClassVar[str] = ""
    hub_task_categories: ClassVar[tuple[str, ...]] = ("text-classification",)  # the Hub's, for a data release
    #: JSON Schemas of an item's payload and of a value. Each property's ``description`` is the field's
    #: meaning; docs/build_formats.py writes docs/formats.md from them (a field without one stops it).
    payload_schema: ClassVar[dict]
    value_schema: ClassVar[dict]
    #: Rules across fields that the schemas cannot state, in the kind's own error wording, as the
    #: import-format docs list them ("Also checked").
    payload_rule_notes: ClassVar[tuple[str, ...]] = ()
    value_rule_notes: ClassVar[tuple[str, ...]] = ()
    #: A partial shown under the form in the workspace (e.g. other raters' statements to review); "" for none.
    review_template: ClassVar[str] = ""
    #: Keys the kind's form adds, shown with the workspace's own keys; "" when the form says them itself.
    shortcut_help: ClassVar[str] = ""
    #: What agreement is measured on, in report order (DESIGN section 1).
    rating_dimensions: ClassVar[tuple[RatingDimension, ...]] = ()
    #: Whether ``value_ratings`` reads the item payload; loading payloads costs time on large projects.
    ratings_need_payload: ClassVar[bool] = False
    #: Where each dimension's rating sits in a value, for a kind whose every rating is one number at a
    #: fixed key path (no suffix, no payload): ``{"CT": ("scores", "CT"), ...}``. The database then
    #: reads the ratings of 100,000s of values at those paths, and no value is decoded. What it reads
    #: must be what ``value_ratings`` gives (a test compares them); empty: the values are decoded.
    rating_paths: ClassVar[dict[str, tuple[str, ...]]] = {}
    #: Whether ``value_rules`` reads the item payload. Imports of many values (a model's run) skip
    #: loading the items' payloads for a kind that sets this to False.
    value_rules_need_payload: ClassVar[bool] = True
    #: The payload fields ``value_rules`` reads, where it reads only some (e.g. the options): an
    #: import of many values then loads only those fields of each item. Empty: the whole payload.
    value_rules_payload_keys: ClassVar[tuple[str, ...]] = ()

    @property
    def form_template(self) -> str:
        """The annotator's form partial (rendered by the workspace, item pages and adjudication):
        ``annotation/kinds/<name>/form.html``, found by name (the folder is a template directory)."""
        return f"{self.name}/form.html"

    @property
    def folder(self) -> Path:
        """The kind's folder: where the module defining its class lives (``annotation/kinds/<name>/``
        for the kinds of this repository), as prompts find their template files beside their module."""
        return Path(inspect.getfile(type(self))).resolve().parent

    @cached_property
    def form_script(self) -> str:
        """The static path of the form's script (keys, live checks), ``kinds/<name>/form.js``; ""
        when the kind's folder has none. Pages load it after ``concord/workspace.js``."""
        return f"{KIND_SCRIPT_PREFIX}/{self.name}/{KIND_SCRIPT}" if (self.folder / KIND_SCRIPT).is_file() else ""

    # -- validation ---------------------------------------------------------------------------
    # A compiled validator answers "valid?" in about a microsecond (imports check every line of a
    # 100,000-line file); only a refused value is walked again by jsonschema, which says why.
    @cached_property
    def _payload_fast(self) -> jsonschema_rs.Validator:
        return jsonschema_rs.validator_for(self.payload_schema)

    @cached_property
    def _value_fast(self) -> jsonschema_rs.Validator:
        return jsonschema_rs.validator_for(self.value_schema)

    @cached_property
    def _payload_full(self) -> Draft202012Validator:
        return Draft202012Validator(self.payload_schema)

    @cached_property
    def _value_full(self) -> Draft202012Validator:
        return Draft202012Validator(self.value_schema)

    @staticmethod
    def _schema_errors(fast, explain, data: Any, prefix: str) -> list[FieldError]:
        try:
            if fast.is_valid(data):
                return []
        except (ValueError, TypeError):  # not a JSON document (e.g. a tuple): jsonschema says what is wrong
            pass
        errors = sorted(explain(data), key=lambda e: list(map(str, e.absolute_path)))
        # A value of the wrong type is reported once, as that: not also as outside the enum or range.
        wrong_type = {tuple(e.absolute_path) for e in errors if e.validator == "type"}
        errors = [e for e in errors if e.validator == "type" or tuple(e.absolute_path) not in wrong_type]
        # jsonschema reports each missing field of one object apart; one message lists them all, so dedupe.
        return list(
            dict.fromkeys(FieldError(field_path(e.absolute_path, prefix), describe_schema_error(e)) for e in errors)
        )

    def explain_value(self, value: Any) -> Iterable[SchemaError]:
        """The schema errors of a bad value; kinds with alternative shapes narrow this down."""
        return self._value_full.iter_errors(value)

    def check_payload(self, payload: Any) -> list[FieldError]:
        """Every problem with an item payload; an empty list means it is valid."""
        errors = self._schema_errors(self._payload_fast, self._payload_full.iter_errors, payload, "")
        return errors or list(self.payload_rules(payload))

    def check_value(self, value: Any, *, payload: dict, prefix: str = "value") -> list[FieldError]:
        """Every problem with an annotation value given its item's payload."""
        # One answer's size and JSON safety first (CONCORD_MAX_ANSWER_BYTES): shared by web, API and imports.
        unsafe = jsonsafe.value_problem(value, limit=settings.CONCORD_MAX_ANSWER_BYTES)
        if unsafe is not None:
            inside, message = unsafe
            return [FieldError(jsonsafe.join_path(prefix, inside), message)]
        errors = self._schema_errors(self._value_fast, self.explain_value, value, prefix)
        return errors or [
            FieldError(field_path([e.field] if e.field else [], prefix), e.message)
            for e in self.value_rules(value, payload)
        ]

    def payload_rules(self, payload: dict) -> Iterator[FieldError]:
        """Rules across payload fields that a schema cannot say. Yields errors."""
        return iter(())

    def value_rules(self, value: dict, payload: dict) -> Iterator[FieldError]:
        """Rules tying a value to its item (e.g. one judgement per candidate). Yields errors."""
        return iter(())

    # -- import formats -----------------------------------------------------------------------
    @property
    def payload_fields(self) -> list[str]:
        return list(self.payload_schema["properties"])

    def decode_csv_cell(self, field: str, cell: str) -> Any:
        """Read one CSV cell by the field's schema type (``annotation.csvcells``: lists and objects are
        JSON in the cell). Raises ValueError with a message a person can act on."""
        return csvcells.schema_cell(cell, field=field, schema=self.payload_schema["properties"].get(field, {}))

    # -- ratings for agreement ------------------------------------------------------------------
    def value_ratings(self, value: dict, payload: dict | None) -> Iterator[tuple[str, str, Any]]:
        """The ratings in one valid value: ``(unit suffix, dimension name, rating)`` triples.

        The suffix is ``""`` for a rating of the whole item. Ratings are numbers or strings, never
        booleans (True would merge with the category 1). ``payload`` is None unless
        ``ratings_need_payload`` is set.
        """
        raise NotImplementedError("subclasses of TaskKind must provide value_ratings()")

    def ratings_columns(self, values: Sequence[dict], payloads: Sequence[dict | None]) -> dict[str, DimensionColumn]:
        """Ratings of many values at once, per dimension. Kinds may override this with a faster
        equivalent of looping ``value_ratings``; the result must be the same."""
        columns: dict[str, tuple[list[int], list[Any], list[str]]] = {
            d.name: ([], [], []) for d in self.rating_dimensions
        }
        for row, (value, payload) in enumerate(zip(values, payloads, strict=True)):
            for suffix, dimension, rating in self.value_ratings(value, payload):
                rows, ratings, suffixes = columns[dimension]
                rows.append(row)
                ratings.append(rating)
                suffixes.append(suffix)
        return {
            name: DimensionColumn(rows=rows, values=ratings, suffixes=suffixes if any(suffixes) else None)
            for name, (rows, ratings, suffixes) in columns.items()
        }

    # -- estimates (validation.estimates) -----------------------------------------------------------
    def estimate_dimensions(self) -> tuple[tuple[str, str], ...]:
        """The quantities estimates report, as (name, title): every rating dimension, plus what a
        kind derives from them (CoPA's overall S)."""
        return tuple((d.name, d.title) for d in self.rating_dimensions)

    def rating_number(self, dimension: RatingDimension, rating: Any) -> float | None:
        """One rating as the number whose mean a benchmark reports: a binary rating is 0/1 and an
        ordinal or interval one its value, as stored. None: the dimension has no such number (a
        kind with text categories says how they count by overriding this)."""
        if isinstance(rating, (int, float)) and not isinstance(rating, bool):
            return float(rating)
        return None

    def estimate_numbers(self, value: dict, payload: dict | None) -> dict[str, float]:
        """One value's number on each estimated dimension: the mean of its ratings there (a value
        that rates several parts of an item, IPQA's intents, gives the share over those parts).
        Dimensions the value does not rate are absent."""
        dimensions = {d.name: d for d in self.rating_dimensions}
        sums: dict[str, list[float]] = {}
        for _suffix, name, rating in self.value_ratings(value, payload):
            number = self.rating_number(dimensions[name], rating)
            if number is not None:
                total = sums.setdefault(name, [0.0, 0.0])
                total[0] += number
                total[1] += 1
        return {name: total / count for name, (total, count) in sums.items()}

    def estimate_columns(self, values: Sequence[dict], payloads: Sequence[dict | None]) -> dict[str, Any]:
        """``estimate_numbers`` of many values at once: per estimated dimension, a float array with NaN
        where a value has no number. Kinds may override this with a faster equivalent."""
        columns = {name: np.full(len(values), np.nan) for name, _title in self.estimate_dimensions()}
        for row, (value, payload) in enumerate(zip(values, payloads, strict=True)):
            for name, number in self.estimate_numbers(value, payload).items():
                columns[name][row] = number
        return columns

    def draft_text(self, value: dict) -> str | None:
        """The free text a value proposes (e.g. an intent statement), for measuring how people
        edit LLM drafts; None for kinds or values without one."""
        return None

    # -- adjudication and gold ------------------------------------------------------------------
    #: Which disagreements send an item to an expert unless the project says otherwise
    #: (see validation.adjudication.AdjudicationRules).
    default_adjudication_rules: ClassVar[dict] = {"unanimous": True}
    #: Value fields that carry free text: they never make two judgements disagree.
    free_text_fields: ClassVar[tuple[str, ...]] = ("comment", "note")
    #: Value fields that record how the item was shown to the rater (``presentation``: an order of
    #: options or responses), not what they judged: they never make two judgements disagree either,
    #: and a majority's gold value leaves them out.
    presentation_fields: ClassVar[tuple[str, ...]] = ()

    def decision_key(self, value: dict) -> Hashable:
        """What two raters must share to count as agreeing: the value without its free text and
        without the record of how it was shown."""
        left_out = (*self.free_text_fields, *self.presentation_fields)
        decision = {key: item for key, item in value.items() if key not in left_out}
        return json.dumps(decision, sort_keys=True, ensure_ascii=False)

    def consensus(self, values: Sequence[dict], *, keys: Sequence[Hashable] | None = None) -> dict | None:
        """The value a strict majority of raters gave (by ``decision_key``; pass the keys when they
        are already known), or None: a tie or a split goes to an expert."""
        if not values:
            return None
        keys = list(keys) if keys is not None else [self.decision_key(value) for value in values]
        top = max(set(keys), key=keys.count)
        if keys.count(top) * 2 <= len(keys):
            return None
        chosen = values[keys.index(top)]
        if not self.presentation_fields:
            return chosen
        # The majority's judgement, without how the item happened to be shown to the rater it came from.
        return {key: item for key, item in chosen.items() if key not in self.presentation_fields}

    def benchmark_record(self, *, external_id: str, payload: dict, gold: dict) -> dict:
        """The item and its gold value in the benchmark's own published shape."""
        return {"id": external_id, **payload, "gold": gold}

    def value_lines(self, value: dict, payload: dict) -> list[ValueLine]:
        """A value as a person reads it, one line per judgement: what experts compare side by side.

        Default: each rating named by its dimension (and the part of the item it rates), with the
        category's name, then the free-text fields. Kinds whose ratings do not tell the whole value
        (chosen options, a written statement) say it their own way.
        """
        dimensions = {d.name: d for d in self.rating_dimensions}
        lines = []
        for suffix, name, rating in self.value_ratings(value, payload):
            dimension = dimensions.get(name)
            title = dimension.title if dimension else name
            text = dimension.category_label(rating) if dimension else str(rating)
            if dimension and dimension.level == "ordinal" and text != str(rating):
                text = f"{rating} {text}"  # an ordered scale reads with its number, as the form shows it
            lines.append(ValueLine(f"{name}:{suffix}", f"{suffix} · {title}" if suffix else title, text))
        for name in self.free_text_fields:
            if value.get(name):
                lines.append(ValueLine(name, name.replace("_", " ").capitalize(), str(value[name]), free_text=True))
        return lines

    # -- blinding: what of an item a rater sees -----------------------------------------------------
    #: The payload paths the kind's form shows (``a``, ``a.b``, ``a[].b``; see annotation.kinds.blinding).
    #: The annotator's payload, on every page and API response a rater reaches, holds these and nothing else.
    rater_fields: ClassVar[tuple[str, ...]] = ()
    #: Payload paths for researchers only, each with the reason raters must not see it: they never
    #: reach a rater unless the project reveals one on purpose (``Project.revealed_fields``). Every
    #: field of ``payload_schema`` is either shown (``rater_fields``) or hidden here, with its reason.
    hidden_fields: ClassVar[dict[str, str]] = {}

    @property
    def revealable_fields(self) -> list[str]:
        """Hidden fields a project may show to its raters on purpose: the top-level ones."""
        return [path for path in self.hidden_fields if "." not in path and blinding.EACH not in path]

    @cached_property
    def _rater_tree(self) -> blinding.PathTree:
        return blinding.path_tree(self.rater_fields)

    def rater_payload(self, payload: dict, *, revealed: Iterable[str] = ()) -> dict:
        """The payload as a rater may see it: the shown fields only, plus the hidden top-level fields
        the project reveals on purpose (names not in ``revealable_fields`` are ignored)."""
        shown = blinding.keep_paths(payload, self._rater_tree) if isinstance(payload, dict) else {}
        for name in revealed:
            if name in self.revealable_fields and name in payload:
                shown[name] = payload[name]
        return shown

    def hidden_values(self, payload: dict) -> list[tuple[str, str, Any]]:
        """(path, reason, value) of each hidden field the payload has: what researchers and experts
        see beside the form on the item page and in adjudication."""
        reasons = self.hidden_fields
        return [(path, reasons[path], value) for path, value in blinding.hidden_values(payload, reasons)]

    def undeclared_payload_fields(self) -> list[str]:
        """Payload fields neither shown nor hidden (the kind has not decided): should be empty."""
        declared = [*self.rater_fields, *self.hidden_fields]
        return [
            field
            for field in blinding.schema_leaves(self.payload_schema)
            if not any(blinding.covers(path, field) for path in declared)
        ]

    # -- the annotator's form ---------------------------------------------------------------------
    #: How the form names the value's fields ("verdict": "Pass or Fail"); others read as their names.
    field_words: ClassVar[dict[str, str]] = {}
    #: What to ask of a person who left a field out, where "choose ..." does not fit.
    field_prompts: ClassVar[dict[str, str]] = {}
    #: The verb for choices left out ("choose Expressed and Core"; CoPA "score ...").
    missing_verb: ClassVar[str] = "choose"

    def field_label(self, path: Sequence[str | int]) -> str:
        """How the form names the field at ``path`` (see ``value_path``); '' for the whole answer."""
        words: list[str] = []
        for part in path:
            if isinstance(part, int):
                words[-1:] = [f"{words[-1] if words else 'Entry'} {part + 1}"]
            else:
                words.append(self.field_words.get(part, part.replace("_", " ").capitalize()))
        return ", ".join(words)

    def friendly_error(self, error: FieldError) -> str:
        """One problem with a submitted form in the annotator's words ("Intent 2: choose Expressed
        and Core."), for pages only: the API and imports keep the precise ``str(error)``."""
        path = value_path(error.field)
        if path is None:
            return sentence(error.message)
        where = self.field_label(path)
        missing = MISSING_FIELDS.match(error.message)
        if missing:
            names = re.findall(r"'([^']*)'", missing.group(1))
            chosen = [self.field_label([*path, n]).rsplit(", ", 1)[-1] for n in names if n not in self.field_prompts]
            asks = [f"{self.missing_verb} {join_words(chosen)}"] if chosen else []
            asks += [self.field_prompts[n] for n in names if n in self.field_prompts]
            problem = join_words(asks)
        elif error.message == "must not be empty":
            problem = self.field_prompts.get(str(path[-1]) if path else "", "fill this in")
        elif error.message.startswith("needs at least"):
            problem = "choose at least one"
        elif error.message.startswith(("must be one of", "must be of type", "must be at ")):
            problem = "choose one of the answers offered"
        else:
            problem = error.message
        return sentence(f"{where}: {problem}" if where else problem)

    def presentation(self, *, payload: dict, seed: int) -> dict | None:
        """How this item is shown to one annotator (an order of its options or responses, JSON), drawn
        from ``seed``: the workspace passes ``annotation.assignments.presentation_seed`` of the item and
        the annotator, the same on every visit and edit and different across annotators. None (the
        default): every rater sees the item as imported. The workspace gives the result to
        ``form_context`` and ``value_from_form``; a kind records what of it the answer needs in its
        value (declared in ``presentation_fields``), in the item's own terms beside it."""
        return None

    def value_from_form(self, data: Any, *, payload: dict, presentation: dict | None = None) -> dict:
        """The value a submitted form (a QueryDict) describes. No checks here: ``check_value`` judges
        it, so a crafted request is refused by the same rules as the form. ``presentation`` is what
        ``presentation`` gave for this rater (None where the form showed the item as imported: the
        adjudication and item pages); it comes from the server, never from the request."""
        raise NotImplementedError("subclasses of TaskKind must provide value_from_form()")

    def form_context(
        self, *, payload: dict, value: dict | None, peers: list[dict], presentation: dict | None = None
    ) -> dict:
        """What the kind's form partial needs beyond the payload (rows, choices, selections), laid out
        as ``presentation`` says (None: as imported)."""
        return {}

    def peers_visible_to(self, roles: set[str]) -> bool:
        """Whether people with these roles see other raters' values (blinding is the default)."""
        return False

    def roles_for_value(self, value: dict) -> frozenset[str]:
        """Project roles of which the rater needs one to submit ``value`` (e.g. a review that only
        experts may give); empty: any annotating member. The form hides such choices; the submit
        service refuses them, so a crafted request gets no further than the form."""
        return frozenset()

    def gold_score(self, value: dict, gold: dict) -> float:
        """Agreement with a qualification item's known answer, from 0 to 1."""
        return float(value == gold)

    def statement_of(self, value: dict) -> str | None:
        """The free-text statement a gold value approves, for building instances from approved
        statements (``build_mcq``); None when this value approves none. Kinds whose values hold no
        statement raise NotImplementedError, and the callers that need statements refuse their projects."""
        raise NotImplementedError("this kind's values approve no statements")

    # -- designs: a project's own questions (annotation.kinds.designs) ---------------------------
    #: The JSON Schema of the design a project of this kind stores, and the design bound; None: no design.
    design_schema: ClassVar[dict | None] = None
    design: ClassVar[dict | None] = None

    def check_design(self, design: Any) -> list[FieldError]:
        """Every problem with a project's design, each at its path (``dimensions[2].max``)."""
        return [] if design is None else [FieldError("", "this task kind takes no design")]

    def with_design(self, design: dict | None) -> TaskKind:
        """This kind bound to a project's (checked) design; a kind without designs is itself."""
        return self

    # -- documentation and demos ----------------------------------------------------------------
    #: The demo project ``demo_load`` creates for this kind, as DemoProjectSpec fields (slug, title,
    #: guidelines, overlap; optionally suggestion_exposure, suggestion_probability, seed); its items
    #: are ``fixtures/demo/<name>.jsonl``. None: the kind has no demo project.
    demo_project: ClassVar[dict[str, Any] | None] = None

    def example_payload(self) -> dict:
        raise NotImplementedError("subclasses of TaskKind must provide example_payload()")

    def example_value(self) -> dict:
        raise NotImplementedError("subclasses of TaskKind must provide example_value()")

    def example_values_needing_roles(self) -> list[dict]:
        """Valid values that ``roles_for_value`` reserves to some roles, one per rule (for docs and tests)."""
        return []
