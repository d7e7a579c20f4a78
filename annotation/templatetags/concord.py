"""Template helpers: Markdown rendered safely, and small lookups the kind forms need."""

import functools

import markdown as markdown_lib
import nh3
from django import template
from django.utils.html import escape
from django.utils.safestring import mark_safe

register = template.Library()

# Tags a guideline may use; everything else (script, style, iframes, event handlers) is stripped.
ALLOWED_TAGS = {
    "p", "br", "hr", "h1", "h2", "h3", "h4", "h5", "h6", "strong", "em", "b", "i", "code", "pre", "blockquote",
    "ul", "ol", "li", "a", "table", "thead", "tbody", "tr", "th", "td", "span", "dl", "dt", "dd",
}  # fmt: skip


@register.filter
def markdown_safe(text: str) -> str:
    """Markdown to HTML with anything executable removed (guidelines are written by researchers,
    but a shared project must not let one person's text run script in another's browser)."""
    html = markdown_lib.markdown(text or "", extensions=["tables", "fenced_code", "sane_lists"])
    return mark_safe(nh3.clean(html, tags=ALLOWED_TAGS, link_rel="noopener noreferrer nofollow"))  # noqa: S308


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
