// TeX in item text, rendered with the vendored KaTeX. The server marks each formula as a
// <span data-math> holding its escaped source (annotation/templatetags/concord.py, item_text);
// here each span is rendered once, on page load and whenever htmx brings in a new item.
(function () {
  "use strict";

  function render(root) {
    if (!window.katex) return;
    var spans = (root && root.querySelectorAll ? root : document).querySelectorAll("[data-math]:not([data-rendered])");
    Array.prototype.forEach.call(spans, function (span) {
      var source = span.textContent;
      try {
        window.katex.render(source, span, {
          displayMode: span.classList.contains("math-display"),
          throwOnError: false,
          trust: false,
          maxExpand: 1000,
        });
        span.setAttribute("data-rendered", "");
        span.setAttribute("title", source);
      } catch (error) {
        span.textContent = source; // leave the TeX readable as written
      }
    });
  }

  document.addEventListener("DOMContentLoaded", function () { render(document); });
  document.addEventListener("htmx:load", function (event) { render(event.detail.elt); });
})();
