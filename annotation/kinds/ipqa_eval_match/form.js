// IPQA-Eval intent matching: M / N answer match / no match and move on to the note; Ctrl+Enter (the
// workspace's key) submits. Loaded after concord/workspace.js.
(function () {
  "use strict";

  window.Concord.keys(function (event) {
    var answer = { m: "match", n: "no_match" }[event.key.toLowerCase()];
    if (answer === undefined) return false;
    var radio = document.querySelector('[data-match] input[value="' + answer + '"]');
    if (!radio) return false;
    radio.checked = true;
    radio.dispatchEvent(new Event("change", { bubbles: true }));
    var note = document.getElementById("note");
    (note || radio).focus();
    return true;
  });
  window.Concord.check(function (form) {
    var first = form.querySelector("[data-match] input");
    if (!first || form.querySelector("[data-match] input:checked")) return [];
    return [{ message: "Choose Match or no match.", focus: first }];
  });
})();
