// Keyboard-first annotation. Each kind's keys act on the focused row; nothing here decides what is
// valid: the server checks every submission with the same rules.
(function () {
  "use strict";

  function form() { return document.getElementById("annotation-form"); }
  function typing(target) {
    return target && (target.tagName === "TEXTAREA" || (target.tagName === "INPUT" && target.type === "text") ||
      (target.tagName === "INPUT" && !target.type));
  }
  function submit() {
    var button = document.getElementById("submit-button");
    if (button) button.click();
  }
  // Focus lands on the first control without scrolling: the item's text stays at the top of the page,
  // read first. Errors are the exception: they are brought into view.
  function focusFirst(root) {
    var target = (root || document).querySelector("#form-errors, [data-row] input, [data-question] input, input[name=verdict], .mcq input, [data-action-choice] input:checked, textarea, input:not([type=hidden])");
    if (target) target.focus({ preventScroll: target.id !== "form-errors" });
  }

  // CoPA: 0-2 score the focused row and move to the next; Enter submits once all six are set.
  function likertKey(event) {
    var row = event.target.closest("[data-row]");
    if (!row || !/^[0-2]$/.test(event.key)) return false;
    var radio = row.querySelector('input[value="' + event.key + '"]');
    radio.checked = true;
    var rows = Array.prototype.slice.call(document.querySelectorAll("[data-row]"));
    var next = rows[rows.indexOf(row) + 1];
    (next ? (next.querySelector("input:checked") || next.querySelector("input")) : document.getElementById("submit-button")).focus();
    return true;
  }
  function likertComplete() {
    var rows = document.querySelectorAll("[data-row]");
    return rows.length > 0 && Array.prototype.every.call(rows, function (r) { return r.querySelector("input:checked"); });
  }

  // IPQA: Y / N answer the focused question and move to the next one.
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

  // MCQ: 1-9 and 0 toggle the first ten options.
  function mcqKey(event) {
    var box = document.querySelector('.mcq input[data-key="' + event.key + '"]');
    if (!box) return false;
    box.checked = !box.checked;
    box.focus();
    return true;
  }

  // Rationale: P / F set the verdict; 1-3 toggle failure reasons.
  function rationaleKey(event) {
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
  }

  // Label statements: the style rules, checked as the annotator types (the server checks them too).
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

  // CoPA's Enter submits only once all six factors are scored.
  function copaKey(event) {
    if (likertKey(event)) return true;
    if (event.key === "Enter" && likertComplete()) { submit(); return true; }
    return false;
  }
  var KEY_HANDLERS = {
    copa_likert: copaKey,
    ipqa_core_intent: yesNoKey,
    intent_mcq: mcqKey,
    rationale_inspection: rationaleKey,
  };

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
    var item = document.querySelector("[data-kind]");
    var handler = item && KEY_HANDLERS[item.dataset.kind];
    var handled = handler ? handler(event) : false;
    if (handled) event.preventDefault();
  });

  // Label contextualization: only the box of the chosen action shows (statement, or why it cannot be).
  function syncAction() {
    var chosen = document.querySelector("[data-action-choice] input:checked");
    if (!chosen) return;
    Array.prototype.forEach.call(document.querySelectorAll("[data-when-action]"), function (box) {
      box.hidden = box.getAttribute("data-when-action") !== chosen.value;
    });
  }

  document.addEventListener("change", function (event) {
    var row = event.target.closest("[data-intent-row]");
    if (row) syncCore(row);
    if (event.target.closest("[data-action-choice]")) syncAction();
  });
  document.addEventListener("input", function (event) {
    if (event.target.matches("[data-statement]")) checkStatement(event.target);
  });

  function ready(root) {
    Array.prototype.forEach.call(document.querySelectorAll("[data-intent-row]"), syncCore);
    syncAction();
    var area = document.querySelector("[data-statement]");
    if (area) checkStatement(area);
    focusFirst(root);
  }
  document.addEventListener("DOMContentLoaded", function () { ready(document); });
  document.body && document.body.addEventListener("htmx:afterSwap", function (event) { ready(event.detail.target); });
})();
