// Pairwise preference: 1 / 2 prefer the response shown first / second, T a tie; then the note.
// Ctrl+Enter (the workspace's key) submits. Loaded after concord/workspace.js.
(function () {
  "use strict";

  window.Concord.keys(function (event) {
    var answer = { "1": "first", "2": "second", t: "tie" }[event.key.toLowerCase()];
    if (answer === undefined) return false;
    var radio = document.querySelector('[data-preferred] input[value="' + answer + '"]');
    if (!radio) return false;
    radio.checked = true;
    radio.dispatchEvent(new Event("change", { bubbles: true }));
    var note = document.getElementById("note");
    (note || radio).focus();
    return true;
  });
  window.Concord.check(function (form) {
    var first = form.querySelector("[data-preferred] input");
    if (!first || form.querySelector("[data-preferred] input:checked")) return [];
    return [{ message: "Choose response 1, response 2 or tie.", focus: first }];
  });
})();
