// Keyboard-first annotation: the keys every form shares. A task kind's own keys and live checks are in
// its folder's form.js (annotation/kinds/<kind>/form.js), which the page loads after this file and
// which registers with window.Concord. Nothing here decides what is valid: the server checks every
// submission with the same rules.
(function () {
  "use strict";

  // Kinds register here: keys(event) returns true when it handled the key; ready(root) runs on page
  // load and after every htmx swap of the item.
  var Concord = window.Concord = window.Concord || {};
  Concord.keyHandlers = Concord.keyHandlers || [];
  Concord.readyHandlers = Concord.readyHandlers || [];
  Concord.keys = function (handler) { Concord.keyHandlers.push(handler); };
  Concord.ready = function (handler) { Concord.readyHandlers.push(handler); };

  function form() { return document.getElementById("annotation-form"); }
  function typing(target) {
    return target && (target.tagName === "TEXTAREA" || (target.tagName === "INPUT" && target.type === "text") ||
      (target.tagName === "INPUT" && !target.type));
  }
  function submit() {
    var button = document.getElementById("submit-button");
    if (button) button.click();
  }
  Concord.submit = submit;
  // Focus lands on the first control without scrolling: the item's text stays at the top of the page,
  // read first. Errors are the exception: they are brought into view.
  function focusFirst(root) {
    var target = (root || document).querySelector("#form-errors, textarea, input:not([type=hidden])");
    if (target) target.focus({ preventScroll: target.id !== "form-errors" });
  }

  document.addEventListener("keydown", function (event) {
    if (!form()) return;
    if ((event.ctrlKey || event.metaKey) && event.key === "Enter") { event.preventDefault(); submit(); return; }
    if (event.altKey && (event.key === "s" || event.key === "S")) {
      event.preventDefault();
      var reason = document.getElementById("skip-reason");
      if (reason) reason.focus();
      return;
    }
    if (event.altKey && (event.key === "u" || event.key === "U")) {
      var undo = document.getElementById("undo-link");
      if (undo) { event.preventDefault(); undo.click(); }
      return;
    }
    if (typing(event.target) || event.ctrlKey || event.metaKey || event.altKey) return;
    var handled = Concord.keyHandlers.some(function (handler) { return handler(event); });
    if (handled) event.preventDefault();
  });

  function ready(root) {
    Concord.readyHandlers.forEach(function (handler) { handler(root); });
    focusFirst(root);
  }
  document.addEventListener("DOMContentLoaded", function () { ready(document); });
  document.body && document.body.addEventListener("htmx:afterSwap", function (event) { ready(event.detail.target); });
})();
