"""Reading JSON that people send: one parser for import lines, CSV cells holding JSON and API bodies.

The standard parser accepts what later steps cannot handle, so each of these is refused here with
the path of the field it sits in:

* nesting deeper than ``CONCORD_MAX_JSON_DEPTH``: the parsers recurse (10,000 levels exhaust the
  stack), so the depth of text with more brackets than the cap is measured before any parser sees it;
* non-finite numbers (``NaN``, ``Infinity``, ``1e999``): JSON has none, and the database's JSON
  check refuses them when the row is written;
* unpaired surrogates (``"\\ud800"``): such text cannot be encoded as UTF-8, so it cannot be stored;
* NUL characters (``"\\u0000"``) in text or keys: PostgreSQL stores none, in text or JSON columns.

Well-formed input costs one pass of orjson plus two counts over the text: the walk that names the
bad field runs only when the text could hold one of these.
"""

from __future__ import annotations

import contextlib
import json
import math
import re
from typing import Any

import orjson
from django.conf import settings

NOT_JSON = "not valid JSON: {msg} (column {column})"
NOT_UTF8 = "not UTF-8 text ({reason})"
TOO_DEEP = "nested more than {depth} levels deep"
NOT_FINITE = "{text} is not a finite number (JSON has no NaN or Infinity)"
SURROGATE = "contains an unpaired surrogate (\\u{code:04x}); text must be valid Unicode"
NUL_CHARACTER = "contains a NUL character (\\u0000), which cannot be stored"
BAD_NUMBER = "a number that cannot be read: {reason}"
TOO_LARGE = "is {size:,} bytes as JSON; the limit is {limit:,} (CONCORD_MAX_ANSWER_BYTES)"

# A surrogate escaped in JSON text (\ud800 to \udfff). Text decoded from UTF-8 cannot hold a raw
# one, so only escapes need looking for; the walk also checks raw ones in strings built elsewhere.
_ESCAPED_SURROGATE = re.compile(r"\\u[dD][89a-fA-F]")
_SURROGATE = re.compile("[\ud800-\udfff]")
# JSON text escapes a NUL (a raw one is not JSON); the walk then finds it in the string it decodes to.
_ESCAPED_NUL = "\\u0000"
# A run of 19 digits may be an integer beyond 64 bits, which orjson reads as a float. Found by
# mapping every byte but a digit to a space: several times faster than a regular expression.
_DIGITS_ONLY = bytes(0x30 if 0x30 <= byte <= 0x39 else 0x20 for byte in range(256))
_LONG_DIGIT_RUN = b"0" * 19
# JSON strings (their brackets are text) and the brackets that nest, for measuring depth unparsed.
_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"')
_BRACKET = re.compile(r"[\[\]{}]")
# orjson refuses nesting past 1,024 levels itself, without exhausting the stack: text deeper than the
# cap but within this is parsed by it, so the error can name the field that goes too deep.
_NAMEABLE_DEPTH = 1000


class UnsafeJSON(ValueError):
    """JSON that is refused. ``path`` names the field (``""`` for the document itself)."""

    def __init__(self, message: str, path: str = "") -> None:
        super().__init__(f"{path}: {message}" if path else message)
        self.message = message
        self.path = path


class NotJSON(UnsafeJSON):
    """Text that is not JSON at all; ``msg``, ``pos`` and ``column`` are the parser's."""

    def __init__(self, msg: str, pos: int, column: int, path: str = "") -> None:
        super().__init__(NOT_JSON.format(msg=msg, column=column), path)
        self.msg, self.pos, self.column = msg, pos, column


class _NonFinite(float):
    """A NaN or infinite number as parsed, keeping its text for the error message."""

    text: str

    def __new__(cls, text: str) -> _NonFinite:
        number = super().__new__(cls, text)
        number.text = text
        return number


class _NonFiniteFound(Exception):
    pass


def _finite_float(literal: str) -> float:
    value = float(literal)
    if math.isfinite(value):
        return value
    raise _NonFiniteFound


def _refuse_constant(literal: str) -> float:
    raise _NonFiniteFound


# Built once: json.loads with options builds a decoder per call. The strict decoder stops at the
# first non-finite number; the document is then read again keeping them, to name the field.
_STRICT = json.JSONDecoder(parse_float=_finite_float, parse_constant=_refuse_constant)
_KEEPING = json.JSONDecoder(parse_float=lambda literal: _NonFinite(literal), parse_constant=_NonFinite)


def max_depth() -> int:
    return settings.CONCORD_MAX_JSON_DEPTH


def nesting_depth(text: str) -> int:
    """How deep the brackets of JSON ``text`` nest, measured without parsing (brackets inside strings
    are text). Unbalanced text is measured as far as it goes."""
    level = deepest = 0
    for bracket in _BRACKET.findall(_STRING.sub("", text)):
        if bracket in "[{":
            level += 1
            deepest = max(deepest, level)
        else:
            level -= 1
    return deepest


def _refuse_deep(text: str, *, path: str, limit: int) -> None:
    """Raise UnsafeJSON when ``text`` nests deeper than ``limit``, before a recursive parser reads it."""
    deepest = nesting_depth(text)
    if deepest <= limit:
        return
    if deepest <= _NAMEABLE_DEPTH:
        with contextlib.suppress(orjson.JSONDecodeError):  # not JSON: the depth is the first refusal
            check_tree(orjson.loads(text), path=path, depth=limit)  # raises, naming the field
    raise UnsafeJSON(TOO_DEEP.format(depth=limit), path)


def argument(text: str) -> Any:
    """An ``argparse`` type for a command's JSON option: refused JSON is a usage error (exit 2)."""
    import argparse

    try:
        return loads(text)
    except UnsafeJSON as exc:
        raise argparse.ArgumentTypeError(exc.message) from None


class Decoder(json.JSONDecoder):
    """For Django's ``forms.JSONField(decoder=Decoder)``: refused JSON is the field's form error."""

    def decode(self, s: str, _w: Any = None) -> Any:  # noqa: ARG002 - the signature json.loads calls
        try:
            return loads(s)
        except UnsafeJSON as exc:
            raise json.JSONDecodeError(exc.message, s, 0) from None


def loads(text: str | bytes, *, path: str = "", depth: int | None = None) -> Any:
    """Parse ``text`` as JSON, refusing what the module docstring lists. Raises UnsafeJSON.

    ``path`` prefixes the field named in errors (e.g. ``"value"`` for a CSV cell of that column).
    """
    if isinstance(text, bytes | bytearray):
        try:
            text = text.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise UnsafeJSON(NOT_UTF8.format(reason=exc.reason), path) from None
    limit = max_depth() if depth is None else depth
    if text.count("[") + text.count("{") > limit:  # only text with that many brackets can be too deep
        _refuse_deep(text, path=path, limit=limit)
    walk = False
    try:
        # orjson refuses every non-finite number and unpaired surrogate, and reads all else as the
        # standard parser does, at a fifth of the time, except integers beyond 64 bits (as floats):
        # text with a long digit run, and everything orjson refuses, goes the standard way.
        if _LONG_DIGIT_RUN not in text.encode("utf-8", "surrogatepass").translate(_DIGITS_ONLY):
            data = orjson.loads(text)
            if _ESCAPED_NUL in text:
                check_tree(data, path=path, depth=limit)
            return data
    except orjson.JSONDecodeError:
        pass
    try:
        try:
            data = _STRICT.decode(text)
        except _NonFiniteFound:
            data, walk = _KEEPING.decode(text), True
    except json.JSONDecodeError as exc:
        raise NotJSON(exc.msg, exc.pos, exc.colno, path) from None
    except ValueError as exc:  # an integer longer than Python converts (4,300 digits)
        raise UnsafeJSON(BAD_NUMBER.format(reason=exc), path) from None
    # Only text that could hold a non-finite number, a surrogate or a NUL is walked.
    if walk or ("\\u" in text and (_ESCAPED_SURROGATE.search(text) or _ESCAPED_NUL in text)):
        check_tree(data, path=path, depth=limit)
    return data


def _child(path: str, key: Any) -> str:
    if isinstance(key, int):
        return f"{path}[{key}]"
    return f"{path}.{key}" if path else str(key)


def join_path(prefix: str, inside: str) -> str:
    """``value`` and ``scores.CT`` make ``value.scores.CT``; ``[0]`` joins without a dot."""
    if not prefix or not inside:
        return prefix or inside
    return prefix + (inside if inside.startswith("[") else f".{inside}")


def check_tree(data: Any, *, path: str = "", depth: int | None = None) -> None:
    """Walk parsed JSON without recursion; raise UnsafeJSON at the first refused part."""
    limit = max_depth() if depth is None else depth
    stack: list[tuple[Any, int, str]] = [(data, 0, path)]
    while stack:
        node, level, where = stack.pop()
        if isinstance(node, str):
            found = _SURROGATE.search(node)
            if found:
                raise UnsafeJSON(SURROGATE.format(code=ord(found.group())), where)
            if "\x00" in node:
                raise UnsafeJSON(NUL_CHARACTER, where)
        elif isinstance(node, float):
            if not math.isfinite(node):
                raise UnsafeJSON(NOT_FINITE.format(text=getattr(node, "text", repr(node))), where)
        elif isinstance(node, dict | list):
            if level >= limit:
                raise UnsafeJSON(TOO_DEEP.format(depth=limit), where)
            pairs = node.items() if isinstance(node, dict) else enumerate(node)
            children = []
            for key, child in pairs:
                if isinstance(key, str) and (surrogate := _SURROGATE.search(key)):
                    raise UnsafeJSON(SURROGATE.format(code=ord(surrogate.group())), where)
                if isinstance(key, str) and "\x00" in key:
                    raise UnsafeJSON(NUL_CHARACTER, where)
                children.append((child, level + 1, _child(where, key)))
            stack.extend(reversed(children))  # depth first, in document order


def value_problem(value: Any, *, limit: int) -> tuple[str, str] | None:
    """Why a value cannot be stored as one answer, as (path inside the value, message), or None:
    larger than ``limit`` bytes, a non-finite number, or text that is not valid Unicode.

    The compact UTF-8 JSON is what the database stores, so its length is the measure; orjson writes
    it in a fraction of a microsecond and refuses unpaired surrogates. It writes NaN as ``null``, so
    only a value whose JSON shows a ``null`` is walked for non-finite numbers, and only one showing
    an escaped NUL for NUL characters.
    """
    try:
        encoded = orjson.dumps(value, option=orjson.OPT_NON_STR_KEYS)
    except orjson.JSONEncodeError as exc:
        try:
            check_tree(value, depth=10_000)
        except UnsafeJSON as unsafe:
            return unsafe.path, unsafe.message
        return "", f"cannot be stored as JSON ({exc})"
    if b"null" in encoded or b"\\u0000" in encoded:
        try:
            check_tree(value, depth=10_000)
        except UnsafeJSON as unsafe:
            return unsafe.path, unsafe.message
    if len(encoded) > limit:
        return "", TOO_LARGE.format(size=len(encoded), limit=limit)
    return None
