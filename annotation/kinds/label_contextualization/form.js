// Label contextualization: only the box of the chosen action shows (statement, or why it cannot be),
// and the statement's style rules are checked as the annotator types (the server checks them too).
// Loaded after concord/workspace.js.
(function () {
  "use strict";

  function checkStatement(area) {
    var list = document.getElementById("statement-checks");
    if (!list) return;
    var text = area.value.trim();
    var problems = [];
    if (text && text.indexOf("To ") !== 0) problems.push("Start with “To ”.");
    if (text && text.charAt(text.length - 1) !== ".") problems.push("End with a period.");
    list.innerHTML = "";
    problems.forEach(function (p) { var li = document.createElement("li"); li.textContent = p; list.appendChild(li); });
  }
  function syncAction() {
    var chosen = document.querySelector("[data-action-choice] input:checked");
    if (!chosen) return;
    Array.prototype.forEach.call(document.querySelectorAll("[data-when-action]"), function (box) {
      box.hidden = box.getAttribute("data-when-action") !== chosen.value;
    });
  }

  // The chosen action's box must be filled in (the statement's style is the server's to judge).
  window.Concord.check(function (form) {
    var chosen = form.querySelector("[data-action-choice] input:checked");
    if (!chosen) return [];
    var box = chosen.value === "write" ? form.querySelector("[data-statement]") : form.querySelector("#reason");
    if (!box || box.value.trim()) return [];
    var message = chosen.value === "write"
      ? "Intent statement: write the intent statement, or choose “This label cannot be contextualized”."
      : "Why it cannot be contextualized: say why this label cannot be contextualized.";
    return [{ message: message, focus: box }];
  });

  window.Concord.ready(function () {
    syncAction();
    var area = document.querySelector("[data-statement]");
    if (area) checkStatement(area);
  });
  document.addEventListener("change", function (event) {
    if (event.target.closest("[data-action-choice]")) syncAction();
  });
  document.addEventListener("input", function (event) {
    if (event.target.matches("[data-statement]")) checkStatement(event.target);
  });
})();
