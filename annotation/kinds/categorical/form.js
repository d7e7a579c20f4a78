// A designed label form: a number key chooses that label of the focused question (the first question
// when none has focus) and moves to the next one; where several labels may be chosen it toggles and
// stays. Enter submits once every required question is answered. Loaded after concord/workspace.js.
(function () {
  "use strict";

  function questions() { return Array.prototype.slice.call(document.querySelectorAll("[data-question]")); }
  function labelKey(event) {
    if (!/^[0-9]$/.test(event.key)) return false;
    var question = event.target.closest("[data-question]") || questions()[0];
    if (!question) return false;
    var input = question.querySelector('input[data-key="' + event.key + '"]');
    if (!input) return false;
    if (question.hasAttribute("data-multiple")) { input.checked = !input.checked; input.focus(); return true; }
    input.checked = true;
    var all = questions();
    var next = all[all.indexOf(question) + 1];
    (next ? (next.querySelector("input:checked") || next.querySelector("input")) : document.getElementById("submit-button")).focus();
    return true;
  }
  function unanswered(root) {
    return Array.prototype.filter.call(root.querySelectorAll("[data-question][data-required]"), function (q) { return !q.querySelector("input:checked"); });
  }

  window.Concord.keys(function (event) {
    if (labelKey(event)) return true;
    if (event.key === "Enter" && (!unanswered(document).length || event.target.closest("[data-question]"))) { window.Concord.submit(); return true; }
    return false;
  });
  window.Concord.check(function (form) {
    var left = unanswered(form);
    if (!left.length) return [];
    var names = left.map(function (q) { return q.querySelector("legend strong").textContent; });
    return [{ message: "Choose " + window.Concord.joinWords(names) + ".", focus: left[0].querySelector("input") }];
  });
})();
