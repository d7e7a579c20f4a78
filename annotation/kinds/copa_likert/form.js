// CoPA six-factor form: 0-2 score the focused row and move to the next; Enter submits once all six are
// set (or, from a row, asks to: the page then names the rows still unscored and focuses the first).
// Loaded after concord/workspace.js, which calls the handler for keys it does not take itself.
(function () {
  "use strict";

  function likertKey(event) {
    var row = event.target.closest("[data-row]");
    if (!row || !/^[0-2]$/.test(event.key)) return false;
    var radio = row.querySelector('input[value="' + event.key + '"]');
    radio.checked = true;
    var rows = Array.prototype.slice.call(document.querySelectorAll("[data-row]"));
    var next = rows[rows.indexOf(row) + 1];
    (next ? (next.querySelector("input:checked") || next.querySelector("input")) : document.getElementById("submit-button")).focus();
    return true;
  }
  function likertComplete() {
    var rows = document.querySelectorAll("[data-row]");
    return rows.length > 0 && Array.prototype.every.call(rows, function (r) { return r.querySelector("input:checked"); });
  }

  function unscored(form) {
    return Array.prototype.filter.call(form.querySelectorAll("[data-row]"), function (r) { return !r.querySelector("input:checked"); });
  }

  window.Concord.keys(function (event) {
    if (likertKey(event)) return true;
    if (event.key === "Enter" && (likertComplete() || event.target.closest("[data-row]"))) { window.Concord.submit(); return true; }
    return false;
  });
  // As the server words it: "Score Schema Consistency (SC) and Metacognitive Scaffolding (MS)."
  window.Concord.check(function (form) {
    var rows = unscored(form);
    if (!rows.length) return [];
    var names = rows.map(function (r) { return r.querySelector("legend strong").textContent + " (" + r.getAttribute("data-row") + ")"; });
    return [{ message: "Score " + window.Concord.joinWords(names) + ".", focus: rows[0].querySelector("input") }];
  });
})();
