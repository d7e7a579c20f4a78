// Keyboard-first annotation: the keys every form shares. A task kind's own keys and live checks are in
// its folder's form.js (annotation/kinds/<kind>/form.js), which the page loads after this file and
// which registers with window.Concord. Nothing here decides what is valid: the server checks every
// submission with the same rules. What the page checks first is only completeness (every row
// answered, a reason to skip), so a missing answer is named at once and the keys keep working: focus
// goes to the first thing missing, never to the message.
(function () {
  "use strict";

  // Kinds register here: keys(event) returns true when it handled the key; ready(root) runs on page
  // load and after every htmx swap of the item; check(form) returns what is missing, as a list of
  // {message, focus} (the sentence the server would say, the control to answer it with).
  var Concord = window.Concord = window.Concord || {};
  Concord.keyHandlers = Concord.keyHandlers || [];
  Concord.readyHandlers = Concord.readyHandlers || [];
  Concord.checkHandlers = Concord.checkHandlers || [];
  Concord.keys = function (handler) { Concord.keyHandlers.push(handler); };
  Concord.ready = function (handler) { Concord.readyHandlers.push(handler); };
  Concord.check = function (handler) { Concord.checkHandlers.push(handler); };
  // "a", "a and b", "a, b and c": as the server's messages list names.
  Concord.joinWords = function (words) {
    return words.length < 2 ? words.join("") : words.slice(0, -1).join(", ") + " and " + words[words.length - 1];
  };
  var SKIP_NEEDS_REASON = "Say why you skip this item.";
  var lastSubmitted = null; // "skip" or "answer": where focus goes when the server sends the form back

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
  function firstControl(scope) { return scope && scope.querySelector("textarea, input:not([type=hidden]):not([disabled])"); }

  function problemsOf(submitted) {
    if (submitted.classList.contains("skip")) {
      var reason = submitted.querySelector("[name=reason]");
      return reason && !reason.value.trim() ? [{ message: SKIP_NEEDS_REASON, focus: reason }] : [];
    }
    return Concord.checkHandlers.reduce(function (found, handler) { return found.concat(handler(submitted) || []); }, []);
  }

  // The same box the server fills, just before the form it is about.
  function showProblems(submitted, problems) {
    var id = submitted.classList.contains("skip") ? "skip-errors" : "form-errors";
    var box = document.getElementById(id);
    if (!box) {
      box = document.createElement("div");
      box.className = "error-box";
      box.id = id;
      box.setAttribute("role", "alert");
      box.setAttribute("tabindex", "-1");
      submitted.parentNode.insertBefore(box, submitted);
    }
    box.textContent = "";
    var title = document.createElement("strong");
    title.textContent = "Not saved — please fix:";
    var list = document.createElement("ul");
    problems.forEach(function (problem) {
      var line = document.createElement("li");
      line.textContent = problem.message;
      list.appendChild(line);
    });
    box.appendChild(title);
    box.appendChild(list);
    return box;
  }

  // The message and the control it asks for come into view together where the window allows it.
  function focusProblem(box, target) {
    box.scrollIntoView({ block: "nearest" });
    var rect = target.getBoundingClientRect();
    var inView = rect.top >= 0 && rect.bottom <= window.innerHeight;
    target.focus({ preventScroll: inView });
    if (!inView) target.scrollIntoView({ block: "nearest" }); // already focused: focus() alone would not scroll
  }

  // Before anything is sent (htmx or a plain POST): capture runs ahead of htmx's own submit listener.
  document.addEventListener("submit", function (event) {
    var submitted = event.target;
    if (submitted.id !== "annotation-form" && !submitted.classList.contains("skip")) return;
    lastSubmitted = submitted.classList.contains("skip") ? "skip" : "answer";
    var problems = problemsOf(submitted);
    if (!problems.length) return;
    event.preventDefault();
    event.stopPropagation();
    focusProblem(showProblems(submitted, problems), problems[0].focus);
  }, true);

  // Focus lands on the first control without scrolling: the item's text stays at the top of the page,
  // read first. After the server refused an answer, focus goes where the next key answers it: the
  // first thing missing, the skip reason, or else the form's first control (the message is announced
  // as an alert, so it need not hold focus).
  function focusFirst(root) {
    var scope = root || document;
    var errors = scope.querySelector("#form-errors");
    var answer = form();
    if (!errors || !answer) {
      var target = firstControl(scope);
      if (target) target.focus({ preventScroll: true });
      return;
    }
    var reason = document.getElementById("skip-reason");
    var missing = problemsOf(answer);
    var next = (lastSubmitted === "skip" && reason) || (missing.length && missing[0].focus) || firstControl(answer) || errors;
    focusProblem(errors, next);
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

  // The guidelines panel keeps the annotator's open/closed choice, per project. With no choice yet it
  // starts open beside the item, but closed on a narrow screen, where it would push the item down.
  function rememberGuidelines() {
    var panel = document.getElementById("guidelines-panel");
    var summary = panel && panel.querySelector("summary");
    if (!summary) return;
    var key = "concord:guidelines-open:" + panel.getAttribute("data-project");
    var stored = null;
    try { stored = window.localStorage.getItem(key); } catch (e) { /* storage off: no memory */ }
    if (stored !== null) panel.open = stored === "1";
    else if (window.matchMedia("(max-width: 900px)").matches) panel.open = false;
    // Only a person's click (or Enter/Space on the summary) is a choice, not the default above.
    summary.addEventListener("click", function () {
      try { window.localStorage.setItem(key, panel.open ? "0" : "1"); } catch (e) { /* storage off */ }
    });
  }

  function ready(root) {
    Concord.readyHandlers.forEach(function (handler) { handler(root); });
    focusFirst(root);
  }
  document.addEventListener("DOMContentLoaded", function () { rememberGuidelines(); ready(document); });
  document.body && document.body.addEventListener("htmx:afterSwap", function (event) { ready(event.detail.target); });
})();
