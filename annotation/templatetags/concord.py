"""Template helpers: Markdown rendered safely, and small lookups the kind forms need."""

import functools
import json
import re
import secrets
import threading

import markdown as markdown_lib
import nh3
from django import template
from django.utils.html import escape, format_html
from django.utils.safestring import mark_safe

from annotation.job_events import JOB_ENDED

register = template.Library()

# Tags a guideline may use; everything else (script, style, iframes, event handlers) is stripped.
ALLOWED_TAGS = {
    "p", "br", "hr", "h1", "h2", "h3", "h4", "h5", "h6", "strong", "em", "b", "i", "code", "pre", "blockquote",
    "ul", "ol", "li", "a", "table", "thead", "tbody", "tr", "th", "td", "span", "dl", "dt", "dd",
}  # fmt: skip


# -- item text: Markdown and TeX, as question-and-answer sites show them --------------------------

# Item text may carry a little more than guidelines; never images (a page must not fetch what an item names).
ITEM_TAGS = ALLOWED_TAGS | {"sub", "sup", "del", "s", "kbd", "div"}
# What Markdown must not touch: code (kept as written) and TeX, found in this order at each place.
TEXT_PARTS = re.compile(
    r"(?P<code>```.*?```|`[^`\n]+`)"
    r"|(?P<display>\$\$.+?\$\$|\\\[.+?\\\])"
    r"|(?P<inline>\\\(.+?\\\)|(?<![\\$\w])\$(?=[^\s$])[^$\n]*?(?<=[^\s\\])\$(?![\w$]))",
    re.DOTALL,
)
# Text without any of these is plain: escaped and broken into paragraphs without running Markdown.
MARKUP = re.compile(r"[\\`*_#\[\]<>|&$~]|^\s*(?:[-+=]|\d+[.)])(?:\s|$)", re.MULTILINE)
MATH_SPAN = '<span class="math math-{}" data-math>{}</span>'
ITEM_EXTENSIONS = ["tables", "fenced_code", "sane_lists", "nl2br"]
GUIDELINE_EXTENSIONS = ["tables", "fenced_code", "sane_lists"]
ITEM_TEXT_CACHE = 4096


@register.filter
def item_text(text) -> str:
    """An item's text as its source site shows it: Markdown made safe, TeX left for KaTeX.

    TeX (``$…$``, ``$$…$$``, ``\\(…\\)``, ``\\[…\\]``) is taken out before Markdown, which would
    read its underscores and backslashes as markup, and put back as ``<span data-math>`` holding the
    escaped source; ``concord/math.js`` renders those spans. A single ``$`` opens math only before a
    non-space and closes it only after one, not before a digit, so prices ("$5 and $10") stay text.
    """
    if not isinstance(text, str):
        text = "" if text is None else str(text)
    return mark_safe(_item_text(text))  # noqa: S308 - sanitised by nh3; math spans hold escaped text


_local = threading.local()


def _converter(name: str, extensions: list[str]) -> markdown_lib.Markdown:
    """One converter per thread and use, reset before each use: building one costs more than converting an item."""
    converter = getattr(_local, name, None)
    if converter is None:
        converter = markdown_lib.Markdown(extensions=extensions)
        setattr(_local, name, converter)
    return converter.reset()


@functools.lru_cache(maxsize=ITEM_TEXT_CACHE)  # an item is shown to k annotators, and again on each error
def _item_text(text: str) -> str:
    if not MARKUP.search(text):
        paragraphs = [p for p in re.split(r"\n\s*\n", text.strip()) if p.strip()]
        return "".join(f"<p>{escape(p).replace(chr(10), '<br>')}</p>" for p in paragraphs)
    return _markdown_with_math(text, _converter("item", ITEM_EXTENSIONS), ITEM_TAGS)


def _markdown_with_math(text: str, converter: markdown_lib.Markdown, tags: set[str]) -> str:
    """Markdown made safe by nh3, with each TeX formula kept out of Markdown's way and put back as a
    math span (see item_text)."""
    nonce = secrets.token_hex(6)
    maths: list[tuple[str, str]] = []

    def protect(match: re.Match) -> str:
        if match.group("code"):
            return match.group(0)
        maths.append((_math_span(match), escape(match.group(0))))
        return f"KTX{nonce}N{len(maths) - 1}X"

    html = converter.convert(TEXT_PARTS.sub(protect, text))
    html = nh3.clean(html, tags=tags, link_rel="noopener noreferrer nofollow")
    placeholder = re.compile(f"KTX{nonce}N(\\d+)X")
    # Math becomes a span only in text; inside a tag (a link's address) it goes back as the escaped source.
    out = []
    for part in re.split(r"(<[^>]*>)", html):
        which = 1 if part.startswith("<") else 0
        out.append(placeholder.sub(lambda m, which=which: maths[int(m.group(1))][which], part))
    return "".join(out)


def _math_span(match: re.Match) -> str:
    """The span math.js typesets, holding the formula's escaped source without its delimiters."""
    display = match.group("display") is not None
    source = match.group(0)
    body = source[1:-1] if not display and source.startswith("$") else source[2:-2]
    return MATH_SPAN.format("display" if display else "inline", escape(body))


@register.filter
def markdown_safe(text: str) -> str:
    """Guidelines: Markdown to HTML with anything executable removed (guidelines are written by
    researchers, but a shared project must not let one person's text run script in another's
    browser), and TeX left for KaTeX as in item text."""
    if not text:
        return mark_safe("")
    html = _markdown_with_math(text, _converter("guidelines", GUIDELINE_EXTENSIONS), ALLOWED_TAGS)
    return mark_safe(html)  # noqa: S308 - sanitised by nh3; math spans hold escaped text


@register.filter
def math_text(text) -> str:
    """A short plain text (an answer, an option, a table cell) escaped, its line breaks kept and its
    TeX left for KaTeX; no Markdown, so a value reads exactly as it was stored."""
    if not isinstance(text, str):
        text = "" if text is None else str(text)
    out: list[str] = []
    last = 0
    for match in TEXT_PARTS.finditer(text):
        if match.group("code"):
            continue
        out.append(escape(text[last : match.start()]))
        out.append(_math_span(match))
        last = match.end()
    out.append(escape(text[last:]))
    return mark_safe("".join(out).replace("\n", "<br>"))  # noqa: S308 - every part is escaped


# -- answers as a short line (history) ----------------------------------------------------------

ANSWER_SUMMARY_CHARS = 240


@register.simple_tag
def answer_summary(kind, value, payload, limit: int = ANSWER_SUMMARY_CHARS) -> str:
    """A stored answer on one line, as the kind reads it ("Cognitive Trust: 2 Full · …"), cut at
    ``limit`` characters; options not chosen are left out. Escaped by the template engine."""
    if not isinstance(value, dict):
        return ""
    lines = [f"{line.label}: {line.text}" for line in kind.value_lines(value, payload or {}) if line.text != "—"]
    text = " · ".join(lines)
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


# -- the annotator's pace as a bar chart (no plotting library: a few rectangles) ----------------

PACE_BAR = (
    '<rect x="{x}" y="{y}" width="{w}" height="{h}" class="pace-bar">'
    "<title>{day}: {items} item{plural}{seconds}</title></rect>"
)


@register.simple_tag
def pace_chart(pace, height: int = 120, bar: int = 14, gap: int = 4) -> str:
    """Items per day as an inline SVG bar chart; every bar carries its numbers as a tooltip, and the
    page's table says the same for screen readers."""
    busiest = pace.busiest or 1
    bars = []
    for index, day in enumerate(pace.days):
        h = round(height * day.items / busiest) if day.items else 0
        seconds = f", median {day.median_seconds:.0f} s" if day.median_seconds is not None else ""
        bars.append(
            PACE_BAR.format(
                x=index * (bar + gap),
                y=height - h,
                w=bar,
                h=max(h, 1),
                day=escape(day.day.isoformat()),
                items=day.items,
                plural="" if day.items == 1 else "s",
                seconds=seconds,
            )
        )
    width = len(pace.days) * (bar + gap)
    label = escape(f"Items per day over the last {len(pace.days)} days; the busiest day had {pace.busiest}.")
    return mark_safe(  # noqa: S308 - numbers and escaped text only
        f'<svg class="pace-chart" viewBox="0 0 {width} {height}" width="{width}" height="{height}" '
        f'role="img" aria-label="{label}">{"".join(bars)}</svg>'
    )


@register.filter
def field_text(value) -> str:
    """A payload field as text: strings as they are, anything else as indented JSON."""
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, indent=2)


@register.filter
def get(mapping, key):
    """``mapping|get:key`` for dicts whose keys are not identifiers (factor codes, option numbers)."""
    if isinstance(mapping, dict):
        return mapping.get(key)
    if isinstance(mapping, list | tuple) and isinstance(key, int) and 0 <= key < len(mapping):
        return mapping[key]
    return None


SCALE_CHOICE = '<label class="choice"><input type="radio" name="{}" value="{}"{}> <span><b>{}</b> {}</span></label>'


@register.simple_tag
def scale_choices(name: str, scale: dict, selected) -> str:
    """One radio button per point of a rating scale, ``selected`` checked. Built here rather than in a
    template loop: a CoPA form has eighteen of them, and looped each costs a dozen node renders."""
    return _scale_choices(name, tuple(scale.items()), selected)


@functools.lru_cache(maxsize=1024)  # a handful of scales and names, each shown thousands of times
def _scale_choices(name: str, points: tuple, selected) -> str:
    name = escape(name)
    return mark_safe(  # noqa: S308 - every part is escaped
        "".join(
            SCALE_CHOICE.format(
                name, escape(score), " checked" if score == selected else "", escape(score), escape(label)
            )
            for score, label in points
        )
    )


@register.simple_tag(takes_context=True)
def refreshed_on_job_end(context, element_id: str) -> str:
    """The attributes of a part of the page that depends on a background job: its id, and htmx
    attributes that fetch it again from this page's address when the job ends (annotation/job_events.py)."""
    request = context["request"]
    return format_html(
        'id="{}" hx-get="{}" hx-trigger="{} from:body" hx-select="#{}" hx-swap="outerHTML"',
        element_id,
        request.get_full_path(),
        JOB_ENDED,
        element_id,
    )
