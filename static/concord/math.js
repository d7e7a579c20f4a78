// TeX in item text, rendered with the vendored KaTeX. The server marks each formula as a
// <span data-math> holding its escaped source (annotation/templatetags/concord.py, item_text);
// here each span is rendered once, on page load and whenever htmx brings in a new item.
//
// Item text comes from imports, so a formula may not take over the page: `trust` stays off (no
// \href, \url, \includegraphics, \htmlClass ...), `maxSize` caps every size the TeX asks for
// (\rule, \raisebox, \kern, in em), `maxExpand` bounds macro expansion, and a formula whose drawing
// still reaches far outside its line (negative sizes, thousands of rows) is shown as its source.
(function () {
  "use strict";

  var OPTIONS = { throwOnError: false, trust: false, maxSize: 10, maxExpand: 1000 };
  // How far a drawn formula may reach, in em of its own text: about a tall display equation.
  var MAX_HEIGHT_EM = 16;
  var MAX_OVERHANG_EM = 4;

  function extent(span) {
    // What the formula draws: its own box and every box inside it (raised or kerned parts included),
    // but not KaTeX's MathML copy for screen readers, which is clipped to nothing.
    var box = span.getBoundingClientRect();
    var top = box.top, bottom = box.bottom, left = box.left, right = box.right;
    Array.prototype.forEach.call(span.querySelectorAll("*"), function (part) {
      if (part.closest(".katex-mathml")) return;
      var r = part.getBoundingClientRect();
      if (!r.width && !r.height) return;
      top = Math.min(top, r.top); bottom = Math.max(bottom, r.bottom);
      left = Math.min(left, r.left); right = Math.max(right, r.right);
    });
    return { top: top, bottom: bottom, left: left, right: right };
  }

  function tooLarge(span) {
    var em = parseFloat(window.getComputedStyle(span).fontSize) || 16;
    var drawn = extent(span);
    if (drawn.bottom - drawn.top > MAX_HEIGHT_EM * em) return true;
    if (span.classList.contains("math-display")) return false; // its block scrolls sideways
    var column = (span.closest("p, li, td, div, section") || document.body).getBoundingClientRect();
    var overhang = MAX_OVERHANG_EM * em;
    return drawn.left < column.left - overhang || drawn.right > column.right + overhang;
  }

  function showSource(span, source, why) {
    span.textContent = source; // leave the TeX readable as written
    span.classList.add("math-source");
    span.setAttribute("title", why);
  }

  function render(root) {
    if (!window.katex) return;
    var spans = (root && root.querySelectorAll ? root : document).querySelectorAll("[data-math]:not([data-rendered])");
    Array.prototype.forEach.call(spans, function (span) {
      var source = span.textContent;
      span.setAttribute("data-rendered", "");
      try {
        window.katex.render(source, span, Object.assign({ displayMode: span.classList.contains("math-display") }, OPTIONS));
      } catch (error) {
        showSource(span, source, "This formula could not be drawn: " + error.message);
        return;
      }
      if (tooLarge(span)) {
        showSource(span, source, "This formula would draw outside its place, so it is shown as written.");
        return;
      }
      span.setAttribute("title", source);
    });
  }

  document.addEventListener("DOMContentLoaded", function () { render(document); });
  document.addEventListener("htmx:load", function (event) { render(event.detail.elt); });
})();
