// Rationale inspection: P / F set the verdict; 1-3 toggle failure reasons. Loaded after concord/workspace.js.
(function () {
  "use strict";

  window.Concord.keys(function (event) {
    var key = event.key.toLowerCase();
    var verdict = { p: "1", f: "0" }[key];
    if (verdict !== undefined) {
      var radio = document.querySelector('input[name=verdict][value="' + verdict + '"]');
      if (!radio) return false;
      radio.checked = true;
      radio.focus();
      return true;
    }
    var boxes = document.querySelectorAll("[data-fail-reasons] input");
    var index = parseInt(event.key, 10) - 1;
    if (boxes.length && index >= 0 && index < boxes.length) {
      boxes[index].checked = !boxes[index].checked;
      boxes[index].focus();
      return true;
    }
    return false;
  });
  window.Concord.check(function (form) {
    var verdict = form.querySelector("input[name=verdict]:checked");
    if (!verdict) return [{ message: "Choose Pass or Fail.", focus: form.querySelector("input[name=verdict]") }];
    var reasons = form.querySelectorAll("[data-fail-reasons] input");
    if (verdict.value === "0" && reasons.length && !form.querySelector("[data-fail-reasons] input:checked")) {
      return [{ message: "Why it fails: a Fail verdict needs at least one failure category.", focus: reasons[0] }];
    }
    return [];
  });
})();
