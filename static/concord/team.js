// The Team page: copy an invitation link or a temporary password with one click, and ask before
// removing someone. A file of its own: the Content-Security-Policy allows no inline script.
(function () {
  "use strict";
  document.addEventListener("click", function (event) {
    const button = event.target.closest("button[data-copy-from]");
    if (!button) return;
    const source = document.getElementById(button.dataset.copyFrom);
    const text = source.value !== undefined ? source.value : source.textContent;
    const done = function () {
      button.textContent = "Copied";
      button.setAttribute("aria-live", "polite");
    };
    if (navigator.clipboard && window.isSecureContext) {
      navigator.clipboard.writeText(text).then(done, function () { source.select(); });
    } else {
      // Plain http (a local demo): select the text and copy it the older way.
      source.select();
      if (document.execCommand("copy")) done();
    }
  });
  document.addEventListener("submit", function (event) {
    const form = event.target.closest("form[data-confirm]");
    if (form && !window.confirm(form.dataset.confirm)) event.preventDefault();
  });
})();
