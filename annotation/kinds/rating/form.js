// A designed rating form: a digit rates the focused dimension with that point (0 is 10 on a scale
// without 0) and moves to the next; Enter submits once every required dimension is rated (or, from a
// row, asks to: the page then names the rows still unrated). Loaded after concord/workspace.js.
(function () {
  "use strict";

  function pointFor(row, key) {
    if (!/^[0-9]$/.test(key)) return null;
    var radio = row.querySelector('input[value="' + key + '"]');
    if (!radio && key === "0") radio = row.querySelector('input[value="10"]');
    return radio;
  }
  function ratingKey(event) {
    var row = event.target.closest("[data-row]");
    if (!row) return false;
    var radio = pointFor(row, event.key);
    if (!radio) return false;
    radio.checked = true;
    var rows = Array.prototype.slice.call(document.querySelectorAll("[data-row]"));
    var next = rows[rows.indexOf(row) + 1];
    (next ? (next.querySelector("input:checked") || next.querySelector("input")) : document.getElementById("submit-button")).focus();
    return true;
  }
  function unrated(form) {
    return Array.prototype.filter.call(form.querySelectorAll("[data-row][data-required]"), function (r) { return !r.querySelector("input:checked"); });
  }

  window.Concord.keys(function (event) {
    if (ratingKey(event)) return true;
    if (event.key === "Enter" && event.target.tagName !== "TEXTAREA" && (!unrated(document).length || event.target.closest("[data-row]"))) { window.Concord.submit(); return true; }
    return false;
  });
  // As the server words it: "Rate Coherence and Fluency."
  window.Concord.check(function (form) {
    var rows = unrated(form);
    if (!rows.length) return [];
    var names = rows.map(function (r) { return r.querySelector("legend strong").textContent; });
    return [{ message: "Rate " + window.Concord.joinWords(names) + ".", focus: rows[0].querySelector("input") }];
  });
})();
