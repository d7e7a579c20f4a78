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

  // "My own rules" starts from the chosen kind's rules (not "any disagreement"), until the
  // researcher changes one of them.
  function rulesFollowKind(form) {
    var custom = document.getElementById("custom-rules");
    if (!custom) return;
    // A form sent back with its own rules (or a project that has them) keeps them.
    var edited = !!form.querySelector("input[name=adjudication][value=custom]:checked");
    custom.addEventListener("change", function () { edited = true; });
    custom.addEventListener("input", function () { edited = true; });
    function fill() {
      var kind = form.querySelector("input[name=kind]:checked");
      if (edited || !kind || !kind.dataset.rules) return;
      var rules = JSON.parse(kind.dataset.rules);
      var unanimous = form.querySelector("input[name=adj_unanimous]");
      var llm = form.querySelector("input[name=adj_llm_majority]");
      var distance = form.querySelector("input[name=adj_ordinal_distance]");
      if (unanimous) unanimous.checked = !!rules.unanimous;
      if (llm) llm.checked = !!rules.llm_majority;
      if (distance) distance.value = rules.ordinal_distance === null ? "" : String(rules.ordinal_distance);
    }
    Array.prototype.forEach.call(form.querySelectorAll("input[name=kind], input[name=adjudication]"), function (radio) {
      radio.addEventListener("change", fill);
    });
  }

  function init() {
    var form = document.getElementById("project-form");
    if (!form) return;
    followTitle(form);
    showWith(form, "suggestion_exposure", "randomised", "probability-field");
    showWith(form, "adjudication", "custom", "custom-rules");
    rulesFollowKind(form);
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", init);
  else init();
})();
