// The layout doctor's access builder: one row of fields per access (kind, vector width, thread layout and how it is
// read, ldmatrix / stmatrix .xN / .trans, wgmma operand, TMA box), written to the advanced JSON field (#s-acc, which the solver
// reads), read back from it when it is edited, and a live preview of the lanes of the access being edited
// (POST /api/solve/access: (row, col), offset, byte address and bank of each lane).
"use strict";
(() => {
  const $ = (id) => document.getElementById(id);
  const raw = $("s-acc"), list = $("b-list"), preview = $("b-preview"), status = $("b-status");
  if (!raw || !list) return;

  function el(tag, attrs, ...kids) {
    const n = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v === null || v === undefined || v === false) continue;
      if (k === "class") n.className = v; else if (k === "checked") n.checked = true; else n.setAttribute(k, v);
    }
    for (const k of kids.flat()) if (k !== null && k !== undefined) n.append(k instanceof Node ? k : String(k));
    return n;
  }
  const KINDS = [["row", "row"], ["column", "column"], ["thread_layout", "thread layout"], ["offsets", "[row, col] per lane"],
    ["ldmatrix", "ldmatrix"], ["stmatrix", "stmatrix"], ["tma", "TMA box"], ["wgmma", "wgmma operand"]];
  const DEFAULTS = {
    row: {kind: "row", index: 0, vector: 1}, column: {kind: "column", index: 0},
    thread_layout: {kind: "thread_layout", layout: "(8,4):(512,1)", vector: 1},
    offsets: {kind: "offsets", offsets: [[0, 0], [1, 0]], vector: 1},
    ldmatrix: {kind: "ldmatrix", index: [0, 0], num: 4}, stmatrix: {kind: "stmatrix", index: [0, 0], num: 4}, tma: {kind: "tma", box: [64, 64]},
    wgmma: {kind: "wgmma", operand: "A", major: "K"},
  };
  const LSU = new Set(["row", "column", "thread_layout", "offsets"]);
  let specs = [], active = 0, seq = 0, timer = 0;
  const eb = () => Number($("s-eb").value) || 2;

  // ---- one row of fields per access; each input names its key (data-k) and how to read it (data-t)
  const id = (i, k) => `b-${i}-${k}`;
  function labelled(i, k, text, input) {
    input.id = id(i, k);
    input.dataset.k = k;
    return el("label", {for: input.id}, text, input);
  }
  function num(i, k, text, value, t, min, max) {
    const inp = el("input", {type: "number", class: "narrow mono", value: String(value ?? 0), min: String(min ?? 0), max: max === undefined ? null : String(max)});
    inp.dataset.t = t || "int";
    return labelled(i, k, text, inp);
  }
  function select(i, k, text, options, value, t) {
    const s = el("select", {}, ...options.map(([v, label]) => el("option", {value: String(v), selected: String(v) === String(value) ? "selected" : null}, label)));
    s.dataset.t = t || "text";
    return labelled(i, k, text, s);
  }
  function text(i, k, label, value, t, cls) {
    const inp = el("input", {type: "text", class: cls || "mid mono", value, spellcheck: "false", autocomplete: "off"});
    inp.dataset.t = t || "text";
    return labelled(i, k, label, inp);
  }
  function vector(i, spec) {
    const e = eb(), widths = [1, 2, 4, 8, 16].filter((v) => v * e <= 16);
    const v = widths.includes(spec.vector) ? spec.vector : 1;
    return select(i, "vector", "vector width", widths.map((w) => [w, `${w} × ${e} B = ${w * e * 8}-bit`]), v, "int");
  }
  function fieldsFor(i, s) {
    const f = [];
    if (LSU.has(s.kind)) f.push(select(i, "op", "op", [["load", "load"], ["store", "store"]], s.op || "load"));
    if (s.kind === "row") f.push(num(i, "index", "row", s.index), vector(i, s));
    if (s.kind === "column") f.push(num(i, "index", "column", s.index));
    if (s.kind === "thread_layout") {
      f.push(text(i, "layout", "thread layout (32 lanes)", s.layout || ""),
        select(i, "of", "lane t → layout(t) is the tile's", [["coordinate", "1-D coordinate (column-major)"], ["offset", "element offset"]], s.of || "coordinate"),
        vector(i, s));
    }
    if (s.kind === "offsets") f.push(text(i, "offsets", "[row, col] of each lane (JSON)", JSON.stringify(s.offsets || []), "json", "wide mono"), vector(i, s));
    if (s.kind === "ldmatrix" || s.kind === "stmatrix") {
      const [r, c] = Array.isArray(s.index) ? s.index : [s.index || 0, 0];
      f.push(num(i, "index.0", "first row", r, "idx0"), num(i, "index.1", "first col", c, "idx1"),
        select(i, "num", "matrices", [[1, ".x1"], [2, ".x2"], [4, ".x4"]], s.num || 4, "int"));
      const box = el("input", {type: "checkbox", checked: s.trans ? "checked" : null});
      box.dataset.t = "bool";
      f.push(labelled(i, "trans", ".trans", box));
    }
    if (s.kind === "tma") {
      const [r, c] = Array.isArray(s.box) ? s.box : [64, 64];
      f.push(num(i, "box.0", "box rows", r, "box0", 1, 256), num(i, "box.1", "box cols", c, "box1", 1, 256));
    }
    if (s.kind === "wgmma") {
      f.push(select(i, "operand", "operand", [["A", "A"], ["B", "B"]], (s.operand || "A").toUpperCase()),
        select(i, "major", "major", [["K", "K-major"], ["MN", "MN-major"]], (s.major || "K").toUpperCase()));
    }
    return f;
  }
  function rowFor(s, i) {
    const fs = el("fieldset", {class: `group b-row${i === active ? " active" : ""}`, "data-i": String(i)},
      el("legend", {}, `accesses[${i}]`),
      text(i, "name", "name", s.name || "", "text", "narrow-name"),
      select(i, "kind", "kind", KINDS.some(([k]) => k === s.kind) ? KINDS : [...KINDS, [s.kind, `${s.kind} (not a kind)`]], s.kind),
      ...fieldsFor(i, s),
      el("button", {type: "button", class: "b-remove", "aria-label": `remove accesses[${i}]`, title: "remove"}, "✕"));
    return fs;
  }
  function render() {
    list.replaceChildren(...specs.map((s, i) => rowFor(s, i)));
  }
  function read(fs, i) {
    const s = {...specs[i]};
    for (const inp of fs.querySelectorAll("[data-k]")) {
      const k = inp.dataset.k, t = inp.dataset.t, v = inp.value;
      if (k === "kind") continue;
      if (t === "int") s[k] = Number(v);
      else if (t === "bool") { if (inp.checked) s[k] = true; else delete s[k]; }
      else if (t === "idx0" || t === "idx1") { s.index = Array.isArray(s.index) ? [...s.index] : [0, 0]; s.index[t === "idx0" ? 0 : 1] = Number(v); }
      else if (t === "box0" || t === "box1") { s.box = Array.isArray(s.box) ? [...s.box] : [64, 64]; s.box[t === "box0" ? 0 : 1] = Number(v); }
      else if (t === "json") { try { s[k] = JSON.parse(v); inp.removeAttribute("aria-invalid"); } catch (e) { inp.setAttribute("aria-invalid", "true"); } }
      else if (k === "name" && !v) delete s.name;
      else if (k === "of" && v === "coordinate") delete s.of;
      else if (k === "op" && v === "load") delete s.op;
      else s[k] = v;
    }
    return s;
  }
  function write() {
    raw.value = JSON.stringify(specs);
  }

  // ---- the live preview of the access being edited
  function schedule() {
    clearTimeout(timer);
    timer = setTimeout(showPreview, 150);
  }
  async function showPreview() {
    const i = Math.min(active, specs.length - 1);
    if (i < 0) { preview.replaceChildren(); return; }
    if ($("s-eb").getAttribute("aria-invalid") === "true") return;  // a refused size, named above the form
    const mine = ++seq;
    const body = {element_bytes: eb(), tile: $("s-tile").value, access: specs[i], index: i};
    let data, ok;
    try {
      const r = await fetch("/api/solve/access", {method: "POST", headers: {"Content-Type": "application/json"}, body: JSON.stringify(body)});
      data = await r.json().catch(() => ({detail: `HTTP ${r.status}`}));
      ok = r.ok;
    } catch (e) { data = {detail: String(e)}; ok = false; }
    if (mine !== seq) return;  // a newer edit answered first or is on its way
    if (!ok) {
      preview.replaceChildren(el("div", {class: "msg error", role: "alert", id: "b-error"}, `accesses[${i}]: `,
        typeof data.detail === "string" ? data.detail.replace(/^accesses\[\d+\][.:]?\s*/, "") : JSON.stringify(data.detail)));
      return;
    }
    const name = data.name || data.kind;
    if (data.constraint) {
      preview.replaceChildren(el("p", {class: "muted", id: "b-summary"}, `accesses[${i}] (${name}): no lanes. A ${data.kind} access is served by the `,
        data.kind === "tma" ? "copy engine" : "tensor cores through a descriptor", ", not by ld/st.shared: it only rules out layouts that hardware cannot use."));
      return;
    }
    const phases = data.phases.join(" + ");
    preview.replaceChildren(
      el("p", {id: "b-summary"}, `Preview of accesses[${i}] (${name}) on the tile as given: ${data.lanes.length} lanes of ${data.access_bytes}-byte accesses; `,
        `wavefronts ${phases} = ${data.wavefronts} (ideal ${data.ideal}).`),
      el("div", {class: "b-lanes"}, el("table", {class: "cands", id: "b-lanes"},
        el("thead", {}, el("tr", {}, ...["lane", "(row, col)", "offset", "byte address", "bank"].map((h) => el("th", {}, h)))),
        el("tbody", {}, ...data.lanes.map((x) => el("tr", {}, el("td", {}, x.lane), el("td", {class: "mono"}, `(${x.row}, ${x.col})`),
          el("td", {class: "mono"}, x.offset), el("td", {class: "mono"}, x.byte), el("td", {class: "mono"}, x.bank)))))));
  }

  // ---- events
  list.addEventListener("input", (ev) => {
    const fs = ev.target.closest(".b-row");
    if (!fs) return;
    const i = Number(fs.dataset.i);
    if (ev.target.dataset.k === "kind") {
      const keep = specs[i].name ? {name: specs[i].name} : {};
      if (specs[i].op && LSU.has(ev.target.value)) keep.op = specs[i].op;  // a store stays a store
      specs[i] = {...keep, ...DEFAULTS[ev.target.value]};
      active = i;
      render();
      $(id(i, "kind")).focus();
    } else {
      specs[i] = read(fs, i);
      if (active !== i) { active = i; for (const r of list.children) r.classList.toggle("active", r === fs); }
    }
    write();
    schedule();
  });
  list.addEventListener("focusin", (ev) => {
    const fs = ev.target.closest(".b-row");
    if (!fs || Number(fs.dataset.i) === active) return;
    active = Number(fs.dataset.i);
    for (const r of list.children) r.classList.toggle("active", r === fs);
    schedule();
  });
  list.addEventListener("click", (ev) => {
    const b = ev.target.closest(".b-remove");
    if (!b) return;
    const i = Number(b.closest(".b-row").dataset.i);
    if (specs.length === 1) { status.textContent = "the solver needs at least one access"; return; }
    specs.splice(i, 1);
    active = Math.max(0, Math.min(active, specs.length - 1));
    render(); write(); schedule();
  });
  $("b-add").addEventListener("click", () => {
    if (specs.length >= 8) { status.textContent = "at most 8 accesses"; return; }
    specs.push({name: `access ${specs.length + 1}`, ...DEFAULTS.column});
    active = specs.length - 1;
    render(); write(); schedule();
    $(id(active, "kind")).focus();
  });
  function fromRaw() {
    let parsed;
    try { parsed = JSON.parse(raw.value); } catch (e) { status.textContent = `the JSON does not parse (${e.message}); the builder keeps the last list that did`; return; }
    if (!Array.isArray(parsed) || !parsed.every((x) => x && typeof x === "object" && !Array.isArray(x))) {
      status.textContent = "the JSON must be a list of access objects; the builder keeps the last list that was";
      return;
    }
    status.textContent = "";
    specs = parsed;
    active = Math.max(0, Math.min(active, specs.length - 1));
    render();
    schedule();
  }
  raw.addEventListener("input", fromRaw);
  $("s-eb").addEventListener("input", () => { render(); for (const fs of list.children) specs[Number(fs.dataset.i)] = read(fs, Number(fs.dataset.i)); write(); schedule(); });
  $("s-tile").addEventListener("input", schedule);
  fromRaw();
})();
