// IPQA core-intent form: Y / N answer the focused question and move to the next one; a "no" to
// Expressed answers Core "no" and locks it. Loaded after concord/workspace.js.
(function () {
  "use strict";

  function yesNoKey(event) {
    var question = event.target.closest("[data-question]");
    var key = event.key.toLowerCase();
    if (!question || (key !== "y" && key !== "n")) return false;
    var radio = question.querySelector('input[value="' + (key === "y" ? "yes" : "no") + '"]');
    if (radio.disabled) return true;
    radio.checked = true;
    radio.dispatchEvent(new Event("change", { bubbles: true }));
    var questions = Array.prototype.filter.call(document.querySelectorAll("[data-question]"), function (q) {
      return !q.querySelector("input").disabled;
    });
    var next = questions[questions.indexOf(question) + 1];
    (next ? next.querySelector("input") : document.getElementById("missing_intent")).focus();
    return true;
  }
  // Not expressed means not core: the core question is answered "no" and locked.
  function syncCore(row) {
    var expressedNo = row.querySelector('input[name^="expressed-"][value="no"]');
    var core = row.querySelectorAll('input[name^="core-"]');
    Array.prototype.forEach.call(core, function (input) {
      input.disabled = expressedNo.checked;
      if (expressedNo.checked) input.checked = input.value === "no";
    });
  }

  window.Concord.keys(yesNoKey);
  // Every intent needs Expressed and Core ("Intent 2: choose Core."), as the server says it.
  window.Concord.check(function (form) {
    var found = [];
    Array.prototype.forEach.call(form.querySelectorAll("[data-intent-row]"), function (row, index) {
      var open = Array.prototype.filter.call(row.querySelectorAll("[data-question]"), function (q) {
        return !q.querySelector("input:checked") && !q.querySelector("input").disabled;
      });
      if (!open.length) return;
      var names = open.map(function (q) { return q.hasAttribute("data-core") ? "Core" : "Expressed"; });
      found.push({ message: "Intent " + (index + 1) + ": choose " + window.Concord.joinWords(names) + ".", focus: open[0].querySelector("input") });
    });
    return found;
  });
  window.Concord.ready(function () {
    Array.prototype.forEach.call(document.querySelectorAll("[data-intent-row]"), syncCore);
  });
  document.addEventListener("change", function (event) {
    var row = event.target.closest("[data-intent-row]");
    if (row) syncCore(row);
  });
})();
