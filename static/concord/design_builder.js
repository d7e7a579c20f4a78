// The design builder of the New project and Settings pages. One design, two views: the builder's rows
// (shown fields, dimensions or questions) and the JSON in the "design" textarea, which is what the
// form submits. Editing either rewrites the other (page -> JSON -> page keeps every key, those the
// builder has no control for included), and each change asks the server for the preview: the kind's
// own form on an example item, exactly as annotators get it, or the design's problems at their paths.
// Nothing here decides what is valid: the server checks the design again on save.
(function () {
  "use strict";

  var fieldset, textarea, builder, preview, examples, locked, timer;
  var asked = 0; // previews asked for: an answer to an older request is dropped

  function chosenKind() {
    if (fieldset.hasAttribute("data-kind")) return fieldset.getAttribute("data-kind");
    var checked = document.querySelector("#project-form input[name=kind]:checked");
    return checked ? checked.value : "";
  }
  function designed(kind) { return Object.prototype.hasOwnProperty.call(examples, kind); }
  function listKey(kind) { return examples[kind] && examples[kind].dimensions ? "dimensions" : "questions"; }

  function el(tag, attrs, children) {
    var node = document.createElement(tag);
    Object.keys(attrs || {}).forEach(function (name) {
      if (name === "text") node.textContent = attrs[name];
      else if (name === "checked" || name === "disabled") node[name] = !!attrs[name];
      else node.setAttribute(name, attrs[name]);
    });
    (children || []).forEach(function (child) { if (child) node.appendChild(child); });
    return node;
  }
  function labelled(text, control, inline) {
    return inline ? el("label", { "class": "inline" }, [control, el("span", { text: text })])
      : el("label", {}, [el("span", { text: text }), control]);
  }

  // -- text forms of the small maps the builder edits as lines --------------------------------------
  function pointsText(points) {
    return Object.keys(points || {}).map(function (p) { return p + ": " + points[p]; }).join("\n");
  }
  function pointsFrom(text) {
    var points = {};
    text.split("\n").forEach(function (line) {
      var at = line.indexOf(":");
      if (at > 0 && line.slice(at + 1).trim()) points[line.slice(0, at).trim()] = line.slice(at + 1).trim();
    });
    return points;
  }
  function labelsText(labels) {
    return (labels || []).map(function (l) { return l.value + ": " + l.text; }).join("\n");
  }
  function labelsFrom(text) {
    return text.split("\n").filter(function (line) { return line.trim(); }).map(function (line) {
      var at = line.indexOf(":");
      var value = (at > 0 ? line.slice(0, at) : line).trim();
      return { value: value, text: (at > 0 ? line.slice(at + 1) : line).trim() || value };
    });
  }

  // -- the builder, drawn from the design ----------------------------------------------------------
  function input(entry, key, type, onChange, attrs) {
    var control = el("input", Object.assign({ type: type }, attrs || {}));
    control.value = entry[key] === undefined ? "" : entry[key];
    control.disabled = locked;
    control.addEventListener("input", function () {
      var value = type === "number" ? (control.value === "" ? undefined : Number(control.value)) : control.value;
      if (value === undefined || (value === "" && key !== "name")) delete entry[key]; else entry[key] = value;
      onChange();
    });
    return control;
  }
  function flag(entry, key, whenAbsent, text, onChange) {
    var box = el("input", { type: "checkbox", checked: entry[key] === undefined ? whenAbsent : entry[key], disabled: locked });
    box.addEventListener("change", function () {
      if (box.checked === whenAbsent && entry[key] === undefined) return;
      entry[key] = box.checked;
      onChange();
    });
    return labelled(text, box, true);
  }
  function lines(entry, key, toText, fromText, text, onChange) {
    var area = el("textarea", { rows: "3", disabled: locked });
    area.value = toText(entry[key]);
    area.addEventListener("input", function () {
      var value = fromText(area.value);
      if (Array.isArray(value) ? false : !Object.keys(value).length) delete entry[key]; else entry[key] = value;
      onChange();
    });
    return labelled(text, area);
  }
  function removeButton(list, index, what, redraw) {
    var button = el("button", { type: "button", "class": "small", text: "Remove", "aria-label": "Remove " + what + " " + (index + 1), disabled: locked });
    button.addEventListener("click", function () { list.splice(index, 1); redraw(); });
    return button;
  }
  function addButton(text, onClick) {
    var button = el("button", { type: "button", "class": "small", text: text, disabled: locked });
    button.addEventListener("click", onClick);
    return button;
  }

  function draw(design, kind) {
    var changed = function () { writeJson(design); };
    var redraw = function () { writeJson(design); draw(design, kind); };
    builder.textContent = "";
    design.fields = design.fields || [];
    var fields = el("section", { "aria-label": "Shown fields" }, [el("h4", { text: "Shown fields (in order, Markdown + TeX)" })]);
    design.fields.forEach(function (field, i) {
      fields.appendChild(el("div", { "class": "design-entry", "data-entry": "field" }, [el("div", { "class": "design-row" }, [
        labelled("Name", input(field, "name", "text", changed, { "aria-label": "Field " + (i + 1) + " name", pattern: "[a-z][a-z0-9_]*" })),
        labelled("Title", input(field, "title", "text", changed, { "aria-label": "Field " + (i + 1) + " title" })),
        removeButton(design.fields, i, "field", redraw),
      ])]));
    });
    fields.appendChild(addButton("Add a shown field", function () { design.fields.push({ name: "field_" + (design.fields.length + 1) }); redraw(); }));
    builder.appendChild(fields);

    var key = listKey(kind);
    design[key] = design[key] || [];
    var rated = key === "dimensions";
    var section = el("section", { "aria-label": rated ? "Dimensions" : "Questions" }, [el("h4", { text: rated ? "Dimensions (integer scales)" : "Questions (label sets)" })]);
    design[key].forEach(function (entry, i) {
      var what = (rated ? "Dimension " : "Question ") + (i + 1);
      var row = [
        labelled("Name", input(entry, "name", "text", changed, { "aria-label": what + " name" })),
        labelled("Title", input(entry, "title", "text", changed, { "aria-label": what + " title" })),
      ];
      if (rated) {
        row.push(labelled("Min", input(entry, "min", "number", changed, { "aria-label": what + " min" })));
        row.push(labelled("Max", input(entry, "max", "number", changed, { "aria-label": what + " max" })));
        var level = el("select", { "aria-label": what + " level", disabled: locked }, [el("option", { value: "ordinal", text: "ordinal" }), el("option", { value: "interval", text: "interval" })]);
        level.value = entry.level || "ordinal";
        level.addEventListener("change", function () { if (level.value === "ordinal" && entry.level === undefined) return; entry.level = level.value; changed(); });
        row.push(labelled("Level", level));
      } else {
        row.push(flag(entry, "multiple", false, "Several labels", changed));
      }
      row.push(flag(entry, "required", true, "Required", changed));
      row.push(removeButton(design[key], i, rated ? "dimension" : "question", redraw));
      var texts = rated ? lines(entry, "points", pointsText, pointsFrom, "Point texts (one per line, 1: text)", changed)
        : lines(entry, "labels", labelsText, labelsFrom, "Labels (one per line, value: text; keys 1-9, 0)", changed);
      section.appendChild(el("div", { "class": "design-entry", "data-entry": rated ? "dimension" : "question" }, [
        el("div", { "class": "design-row" }, row), texts,
      ]));
    });
    section.appendChild(addButton(rated ? "Add a dimension" : "Add a question", function () {
      var n = design[key].length + 1;
      design[key].push(rated ? { name: "dimension_" + n, min: 1, max: 5 }
        : { name: "question_" + n, labels: [{ value: "yes", text: "Yes" }, { value: "no", text: "No" }] });
      redraw();
    }));
    builder.appendChild(section);
    builder.appendChild(flag(design, "comment", false, "A free comment box", changed));
  }

  // -- JSON <-> builder <-> preview ------------------------------------------------------------------
  function writeJson(design) {
    textarea.value = JSON.stringify(design, null, 2);
    schedulePreview();
  }
  function readJson() {
    try { return JSON.parse(textarea.value); } catch (e) { return null; }
  }
  function schedulePreview() {
    window.clearTimeout(timer);
    timer = window.setTimeout(showPreview, 250);
  }
  function showPreview() {
    var body = new FormData();
    body.append("kind", chosenKind());
    body.append("design", textarea.value);
    var token = document.querySelector("#project-form [name=csrfmiddlewaretoken]");
    if (token) body.append("csrfmiddlewaretoken", token.value);
    var mine = ++asked;
    fetch(fieldset.getAttribute("data-preview-url"), { method: "POST", body: body, credentials: "same-origin" })
      .then(function (response) { return response.text(); })
      .then(function (html) { if (mine === asked) preview.innerHTML = html; });
  }

  function kindChanged() {
    var kind = chosenKind();
    var on = designed(kind);
    fieldset.hidden = !on;
    textarea.disabled = !on || locked; // a disabled textarea is not submitted: other kinds take no design
    if (!on) return;
    var design = readJson();
    var wrongShape = design && typeof design === "object" && !design[listKey(kind)];
    if (!design || wrongShape) {
      design = JSON.parse(JSON.stringify(examples[kind]));
      textarea.value = JSON.stringify(design, null, 2);
    }
    draw(design, kind);
    showPreview();
  }

  function init() {
    fieldset = document.getElementById("design-fieldset");
    var data = document.getElementById("design-examples");
    if (!fieldset || !data) return;
    examples = JSON.parse(data.textContent);
    textarea = fieldset.querySelector("textarea[name=design]");
    builder = document.getElementById("design-builder");
    preview = document.getElementById("design-preview");
    locked = fieldset.hasAttribute("data-locked");
    if (locked) textarea.readOnly = true;
    // The preview is a form only to look like the annotator's: it is never sent (no inline handler, the CSP forbids them).
    preview.addEventListener("submit", function (event) { event.preventDefault(); });
    textarea.addEventListener("input", function () {
      var design = readJson();
      if (design && typeof design === "object" && !Array.isArray(design)) draw(design, chosenKind());
      schedulePreview();
    });
    Array.prototype.forEach.call(document.querySelectorAll("#project-form input[name=kind]"), function (radio) {
      radio.addEventListener("change", kindChanged);
    });
    kindChanged();
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", init);
  else init();
})();
