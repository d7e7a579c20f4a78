// IntentGrasp multiple choice: 1-9 and 0 toggle the first ten options. Loaded after concord/workspace.js.
(function () {
  "use strict";

  window.Concord.keys(function (event) {
    var box = document.querySelector('.mcq input[data-key="' + event.key + '"]');
    if (!box) return false;
    box.checked = !box.checked;
    box.focus();
    return true;
  });
  window.Concord.check(function (form) {
    var boxes = form.querySelectorAll(".mcq input[type=checkbox]");
    if (!boxes.length || form.querySelector(".mcq input:checked")) return [];
    return [{ message: "Options: choose at least one.", focus: boxes[0] }];
  });
})();
