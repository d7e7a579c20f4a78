"""Checks the browser tests run on any page: TeX left untypeset, words broken inside table cells."""

#: Math spans (annotation/templatetags/concord.py) that KaTeX has not drawn, nor shown as source.
UNTYPESET_MATH = """() => Array.from(document.querySelectorAll("[data-math]"))
  .filter(span => !span.querySelector(".katex") && !span.classList.contains("math-source"))
  .map(span => span.textContent.slice(0, 40))"""

#: Words (runs of two or more letters or digits) that a table cell lays out over two lines or more,
#: as "cell: word", at most ``limit`` of them. Hidden text and controls are left out.
BROKEN_WORDS = """limit => {
  const broken = [];
  for (const cell of document.querySelectorAll("td, th")) {
    if (!cell.getClientRects().length) continue;
    const walker = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      if (node.parentElement.closest(".katex, .visually-hidden, button, select, option, progress")) continue;
      const word = /[\\p{L}\\p{N}]{2,}/gu;
      for (let match = word.exec(node.data); match; match = word.exec(node.data)) {
        const range = document.createRange();
        range.setStart(node, match.index);
        range.setEnd(node, match.index + match[0].length);
        const lines = new Set(Array.from(range.getClientRects()).filter(r => r.width > 0).map(r => Math.round(r.top)));
        if (lines.size > 1) broken.push(cell.tagName.toLowerCase() + ": " + match[0]);
        if (broken.length >= limit) return broken;
      }
    }
  }
  return broken;
}"""


def untypeset_math(page) -> list[str]:
    return page.evaluate(UNTYPESET_MATH)


def broken_words(page, limit: int = 5) -> list[str]:
    return page.evaluate(BROKEN_WORDS, limit)
