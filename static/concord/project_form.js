// The New project and Settings forms: the slug follows the title until it is edited by hand, and
// the fields that only matter for one choice (probability p, custom adjudication rules) show with it.
// Nothing here decides what is valid: the server checks every setting again.
(function () {
  "use strict";

  function slugify(text) {
    return text.normalize("NFKD").replace(/[\u0300-\u036f]/g, "").toLowerCase()
      .replace(/[^a-z0-9]+/g, "-").replace(/^-+|-+$/g, "").slice(0, 80).replace(/-+$/, "");
  }

  function followTitle(form) {
    var title = form.querySelector("input[name=title]");
    var slug = form.querySelector("input[name=slug]");
    if (!title || !slug) return;
    var derived = slug.value === "" || slug.value === slugify(title.value);
    slug.addEventListener("input", function () { derived = slug.value === ""; });
    title.addEventListener("input", function () {
      if (derived) slug.value = slugify(title.value);
    });
  }

  function showWith(form, name, wanted, targetId) {
    var target = document.getElementById(targetId);
    var radios = form.querySelectorAll("input[name=" + name + "]");
    if (!target || !radios.length) return;
    function update() {
      var checked = form.querySelector("input[name=" + name + "]:checked");
      target.hidden = !checked || checked.value !== wanted;
    }
    Array.prototype.forEach.call(radios, function (radio) { radio.addEventListener("change", update); });
    update();
  }

  function init() {
    var form = document.getElementById("project-form");
    if (!form) return;
    followTitle(form);
    showWith(form, "suggestion_exposure", "randomised", "probability-field");
    showWith(form, "adjudication", "custom", "custom-rules");
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", init);
  else init();
})();
