// The layout doctor page: solver, GPU measurement, descriptor doctor and linear layouts (all through /api/solve/*).
"use strict";
(() => {
  const $ = (id) => document.getElementById(id);
  // Build DOM nodes without innerHTML: el("td", {class: "x"}, "text", child, ...).
  function el(tag, attrs, ...kids) {
    const n = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v === null || v === undefined || v === false) continue;
      if (k === "class") n.className = v; else if (k === "style") n.style.cssText = v; else n.setAttribute(k, v);
    }
    for (const k of kids.flat()) if (k !== null && k !== undefined) n.append(k instanceof Node ? k : String(k));
    return n;
  }
  async function post(url, body) {
    const r = await fetch(url, {method: "POST", headers: {"Content-Type": "application/json"}, body: JSON.stringify(body)});
    const data = await r.json().catch(() => ({detail: `HTTP ${r.status}`}));
    if (!r.ok) throw new Error(typeof data.detail === "string" ? data.detail : JSON.stringify(data.detail));
    return data;
  }
  // replaceChildren writes null as the text "null": every child list goes through fill, which drops the absent ones
  const fill = (node, ...kids) => node.replaceChildren(...kids.flat().filter((k) => k !== null && k !== undefined && k !== false));
  const show = (node, ...kids) => { fill(node, ...kids); node.hidden = false; };
  // a code block with its Copy button (app.js copies data-copy on click, as on every other page)
  const codeBlock = (title, text, id) => [el("h3", {}, title, " ", el("button", {type: "button", class: "copy-btn", "data-copy": text, id: id, title: `Copy the ${title} code`}, "Copy")),
    el("pre", {class: "code"}, text)];
  // the hardware constraints (TMA boxes, wgmma operands) a candidate breaks, from its notes
  // (the notes of a broken constraint start with its access's name: "TMA box: TMA cannot write this layout")
  const broken = (c) => {
    if (c.constraints_met !== false) return [];
    const names = (c.per_access || []).filter((p) => p.kind === "tma" || p.kind === "wgmma").map((p) => `${p.name}: `);
    return (c.notes || []).filter((n) => names.some((x) => n.startsWith(x)));
  };
  const errorBox = (msg) => el("div", {class: "msg error", role: "alert"}, msg);
  const hue = (k) => `hsl(${(k * 47) % 360} 70% 88%)`;

  // ------------------------------------------------------------------ solver
  const form = $("solve-form");
  const presets = JSON.parse(form.dataset.presets || "{}");
  let current = null, selected = 0;

  function request() {
    let accesses;
    try { accesses = JSON.parse($("s-acc").value); } catch (e) { throw new Error(`accesses: not JSON (${e.message})`); }
    return {element_bytes: Number($("s-eb").value), tile: $("s-tile").value, accesses};
  }
  async function solve() {
    $("s-error").hidden = true;
    $("measure-result").replaceChildren();
    $("measure-status").textContent = "";
    try {
      current = await post("/api/solve/smem", request());
    } catch (e) {
      $("s-result").hidden = true;
      show($("s-error"), e.message);
      return;
    }
    // the best fix that keeps every constraint (TMA boxes, wgmma operands) is the one selected
    selected = Math.max(0, current.candidates.findIndex((c) => c.constraints_met !== false));
    const req = request();
    history.replaceState(null, "", `/doctor?${new URLSearchParams({element_bytes: req.element_bytes, tile: req.tile, accesses: JSON.stringify(req.accesses)})}`);
    render();
  }
  function wfCell(c) {
    return c.wavefronts.map((w, i) => {
      const ideal = current.ideal_per_access[i];
      return el("span", {class: w > ideal ? "over" : "ideal", title: `${current.accesses[i]}: ideal ${ideal}`}, w);
    }).reduce((acc, x, i) => (i ? acc.concat([" + ", x]) : [x]), []);
  }
  function row(c, k) {
    const bad = c.constraints_met === false;
    const cls = [k < 0 ? "naive" : (k === selected ? "sel" : ""), bad ? "broken" : ""].join(" ").trim() || null;
    const why = bad ? (broken(c).join("; ") || "breaks a TMA / wgmma constraint of the accesses") : null;
    const tr = el("tr", {class: cls, "data-k": k, "data-constraints": bad ? "broken" : "met", title: why},
      el("td", {}, k < 0 ? "as given" : k + 1),
      el("td", {class: "mono"}, c.layout, c.folded ? el("small", {class: "folded", title: c.folded.text}, ` +${c.folded.count} larger, same result`) : null),
      el("td", {}, wfCell(c)),
      el("td", {class: bad ? "over" : c.total > c.ideal ? "over" : "ideal"}, `${c.total} / ${c.ideal}`),
      el("td", {class: bad ? "constraint over" : "constraint ideal"}, bad ? el("span", {title: why}, "✗ breaks ", why.replace(/: .*?(;|$)/g, "$1").replace(/;/g, ",")) : "✓ kept"),
      el("td", {}, c.extra_bytes),
      el("td", {}, c.vector_kept ? "yes" : "no"), el("td", {class: "mono"}, c.tma || "—"),
      el("td", {class: "mono"}, c.wgmma || "—"), el("td", {}, `${c.base_alignment} B`));
    if (k >= 0) {  // a candidate row is picked by click, or by Tab + Enter / Space; arrow keys step through the rows
      tr.tabIndex = 0;
      tr.setAttribute("aria-selected", k === selected ? "true" : "false");
      const pick = (focus) => {
        selected = k;
        render();
        if (focus) $("s-cands").querySelector(`tr[data-k="${k}"]`).focus();
      };
      tr.addEventListener("click", () => pick(false));
      tr.addEventListener("keydown", (ev) => {
        if (ev.key === "Enter" || ev.key === " ") { ev.preventDefault(); pick(true); return; }
        const next = ev.key === "ArrowDown" ? tr.nextElementSibling : ev.key === "ArrowUp" ? tr.previousElementSibling : null;
        if (next && next.tabIndex === 0) { ev.preventDefault(); next.focus(); }
      });
    }
    return tr;
  }
  function render() {
    const r = current;
    show($("s-summary"),
      ...[["tile", r.tile], ["as given", `${r.naive.total} wavefronts`], ["ideal", r.ideal],
          ["searched", `${r.searched.swizzles} swizzles, ${r.searched.paddings} paddings, ${r.searched.xor} XOR maps`],
          ["rejected (break vectors)", r.searched.rejected_vector], ["answered in", `${r.elapsed_ms} ms`]]
        .map(([k, v]) => el("div", {}, el("dt", {}, k), el("dd", {}, v))));
    fill($("s-notes"), ...(r.notes || []).map((n) => el("div", {class: "msg note"}, n)));
    fill($("s-cands").tBodies[0], row(r.naive, -1), ...r.candidates.map((c, k) => row(c, k)));
    $("s-result").hidden = false;
    const c = r.candidates[selected];
    if (!c) { fill($("s-detail"), el("p", {}, "No candidate keeps every vector access whole.")); return; }
    fill($("s-detail"),
      el("h3", {}, `#${selected + 1}: ${c.layout}`),
      c.constraints_met === false ? el("p", {class: "msg error", id: "s-broken"}, "This fix breaks a hardware constraint of the accesses: ", broken(c).join("; ") || "TMA or wgmma cannot use it", ".") : null,
      el("p", {class: "why"}, c.why), c.folded ? el("p", {class: "muted", id: "s-folded"}, c.folded.text) : null, bitDiagram(c.bits),
      el("p", {}, c.tma ? `TMA: CU_TENSOR_MAP_${c.tma}` : "TMA: no swizzle mode writes this layout", " · ",
         c.wgmma ? `wgmma: ${c.wgmma}` : "wgmma: no GMMA atom", " · ",
         c.umma ? `tcgen05 (SM100): ${c.umma}` : "tcgen05 (SM100): no UMMA atom", " · ", `smem base aligned to ${c.base_alignment} B`),
      ...(c.notes || []).map((n) => el("p", {class: "muted"}, n)),
      el("h3", {}, "Per access (bank model: wavefronts per phase)"),
      el("table", {class: "cands"}, el("tr", {}, el("th", {}, "access"), el("th", {}, "as given"), el("th", {}, "this fix"), el("th", {}, "ideal")),
        ...c.per_access.map((p, i) => el("tr", {}, el("td", {}, p.name),
          el("td", {class: "phases"}, r.naive.per_access[i].phases.join(" + ") || "—"),
          el("td", {class: "phases"}, p.phases.join(" + ") || "—"), el("td", {}, p.ideal)))),
      ...codeBlock("CuTe C++", c.code.cpp, "copy-cpp"), ...codeBlock("CuTe DSL", c.code.dsl, "copy-dsl"));
  }
  function bitDiagram(b) {
    const src = new Map(b.xor.map(([s, d]) => [s, d])), dst = new Map(b.xor.map(([s, d]) => [d, s]));
    const boxes = [];
    for (let k = b.nbits - 1; k >= 0; k--) {
      const cls = [src.has(k) ? "src" : dst.has(k) ? "dst" : k < b.kept ? "kept" : "", b.bank_bits.includes(k) ? "bank" : ""].join(" ");
      const tip = src.has(k) ? `XORed into bit ${src.get(k)}` : dst.has(k) ? `flipped by bit ${dst.get(k)}` : "";
      boxes.push(el("span", {class: cls, title: tip}, `b${k}`, el("small", {}, b.labels[k] || "·")));
    }
    const arrows = b.xor.map(([s, d]) => `b${s} (${b.labels[s] || "?"}) → b${d}`).join(", ");
    return el("div", {}, el("div", {class: "bits", "aria-label": "offset bits, highest first"}, boxes),
      el("p", {class: "muted"}, arrows ? `XOR: ${arrows}. ` : "No bit is XORed. ",
        "Red: source bits; blue: bits they flip; grey: the low bits a vector keeps; underline: bits that pick the bank."));
  }
  form.addEventListener("submit", (ev) => { ev.preventDefault(); solve(); });
  $("s-presets").addEventListener("click", (ev) => {
    const key = ev.target.dataset && ev.target.dataset.preset;
    if (!key || !presets[key]) return;
    ev.preventDefault();
    const p = presets[key];
    $("s-eb").value = String(p.element_bytes); $("s-tile").value = p.tile;
    $("s-acc").value = JSON.stringify(p.accesses);
    $("s-acc").dispatchEvent(new Event("input", {bubbles: true}));  // the access builder follows
    solve();
  });

  // ------------------------------------------------------------------ GPU measurement
  $("measure").addEventListener("click", async () => {
    const c = current && current.candidates[selected];
    const status = $("measure-status"), out = $("measure-result");
    out.replaceChildren();
    if (!c) return;
    status.textContent = "checking for a GPU…";
    const dev = await fetch("/api/bench/device").then((r) => r.json()).catch(() => ({available: false, reason: "the device status could not be read"}));
    if (!dev.available) {
      status.textContent = "";
      out.replaceChildren(el("div", {class: "msg note", id: "measure-why"}, `No GPU to measure on: ${dev.reason || "no NVIDIA GPU"}. `,
        "The measurement runs each access as one warp instruction under Nsight Compute; start ", el("code", {}, "layoutlab worker"),
        " on a host with an NVIDIA GPU, nvcc and ncu, then click again."));
      const prev = await post("/api/solve/smem/measured", request()).catch(() => ({found: false}));
      if (prev.found) {
        out.append(el("p", {id: "measure-committed"}, `Measured earlier for this request on the ${prev.device} (${prev.file}, ${prev.date}):`),
          measured(prev.result));
      }
      return;
    }
    let job;
    try { job = await post("/api/bench/jobs", c.lab); } catch (e) { status.textContent = ""; out.replaceChildren(errorBox(e.message)); return; }
    for (;;) {
      const j = await fetch(`/api/bench/jobs/${job.id}`).then((r) => r.json());
      const p = j.progress || {};
      status.textContent = `${j.status}${p.stage ? ` · ${p.stage}` : ""}${p.total ? ` ${p.done}/${p.total}` : ""}`;
      if (j.status === "done") { out.replaceChildren(measured(j.result)); return; }
      if (j.status === "failed" || j.status === "cancelled") { out.replaceChildren(errorBox(j.error || j.status)); return; }
      await new Promise((res) => setTimeout(res, 1000));
    }
  });
  function measured(r) {
    const rows = [];
    for (const lay of r.layouts) for (const a of lay.accesses) {
      rows.push(el("tr", {}, el("td", {class: "mono"}, lay.layout), el("td", {}, a.name), el("td", {}, a.predicted),
        el("td", {}, a.measured === null ? `— (${a.reason})` : a.measured.toFixed(2)),
        el("td", {class: a.match ? "ideal" : "over"}, a.match ? "equal" : "differs")));
    }
    return el("div", {}, el("p", {}, `${(r.device || {}).name || "GPU"}: Nsight Compute's wavefronts per instruction beside the model's`),
      el("table", {class: "cands", id: "measure-table"}, el("tr", {}, ...["layout", "access", "predicted", "measured (ncu)", ""].map((h) => el("th", {}, h))), rows));
  }

  // ------------------------------------------------------------------ descriptor doctor
  function fields(list) {
    return el("table", {class: "cands"}, el("tr", {}, ...["field", "bits", "value", "encoded"].map((h) => el("th", {}, h))),
      ...list.map((f) => el("tr", {}, el("td", {}, f.name), el("td", {class: "mono"}, f.bits),
        el("td", {class: "mono"}, f.meaning ? `${f.value} (${f.meaning})` : ["base_offset", "layout_type", "version", "lbo_mode"].includes(f.name) ? f.value : `${f.value} B`),
        el("td", {class: "mono"}, f.encoded))));
  }
  const checks = (cs) => el("ul", {class: "checks"}, ...cs.map((c) => el("li", {class: c.ok ? "good" : "bad"}, `${c.ok ? "✓" : "✗"} ${c.text}`)));
  function coreMap(g) {
    const rows = [];
    for (let i = 0; i < Math.min(g.rows, 64); i++) {
      rows.push(el("tr", {}, ...g.bytes[i].map((b, j) => el("td", {style: `background:${hue(g.core[i][j])}`, title: `(${i},${j}) core matrix ${g.core[i][j]}`}, b))));
    }
    return el("div", {}, el("p", {class: "muted"}, `Byte offset of each element (rows: MN, columns: K); colour: its 8 x 16-byte core matrix${g.rows > 64 ? "; first 64 rows" : ""}.`),
      el("table", {class: "coremap", id: "d-coremap"}, rows));
  }
  function explainLboSbo(d) {
    // LBO and SBO on the picture: each names the two elements whose byte offsets it separates (their cells are outlined)
    if (!d.explain) return el("span");
    return el("ul", {class: "checks", id: "d-explain"}, ...d.explain.map((x) => el("li", {}, x.text)));
  }
  function markExplain(node, d) {
    if (!d.explain) return node;
    const table = node.querySelector("#d-coremap");
    for (const x of d.explain) {
      for (const p of [x.from, x.to]) {
        if (!p || !table || p[0] >= table.rows.length) continue;
        const cell = table.rows[p[0]].cells[p[1]];
        if (cell) { cell.style.outline = "2px solid #222"; cell.title += ` | ${x.field} ${p === x.from ? "from" : "to"}`; }
      }
    }
    return node;
  }
  function descView(d) {
    const enc = d.encoding ? el("p", {class: "muted", id: "d-arch"}, `Read as: ${d.encoding} (${d.arch})`) : el("span");
    return markExplain(el("div", {class: "detail"}, el("h3", {}, `${d.value}: ${d.swizzle}, ${d.major}-major`), enc,
      fields(d.fields), el("p", {}, "Canonical layout (elements): ", el("code", {id: "d-layout"}, d.layout)), checks(d.checks),
      explainLboSbo(d), coreMap(d.grid)), d);
  }
  async function run(node, fn) {
    try { node.replaceChildren(await fn()); } catch (e) { node.replaceChildren(errorBox(e.message)); }
  }
  $("desc-form").addEventListener("submit", (ev) => {
    ev.preventDefault();
    run($("d-result"), async () => descView(await post("/api/solve/descriptor", {descriptor: $("d-val").value,
      element_bytes: Number($("d-eb").value), major: $("d-major").value, mn: Number($("d-mn").value), tile: $("d-tile").value || null, arch: $("d-arch-sel").value})));
  });
  $("enc-form").addEventListener("submit", (ev) => {
    ev.preventDefault();
    run($("d-result"), async () => descView(await post("/api/solve/descriptor/encode", {tile: $("e-tile").value,
      element_bytes: Number($("e-eb").value), major: $("e-major").value, arch: $("e-arch").value})));
  });
  $("tma-form").addEventListener("submit", (ev) => {
    ev.preventDefault();
    run($("t-result"), async () => {
      const t = await post("/api/solve/tma", {call: $("t-call").value});
      const rows = t.box.chunk_of.map((r) => el("tr", {}, ...r.map((c) => el("td", {style: `background:${hue(c)}`}, c))));
      return el("div", {class: "detail"}, el("p", {}, `${t.valid ? "Valid" : "Refused"}: ${t.dtype}, box ${t.box_dim.join(" x ")}, swizzle ${t.swizzle}, `,
        `${t.box.bytes} bytes per box; smem aligned to ${t.box.smem_alignment} B`), checks(t.checks),
        el("p", {class: "muted"}, `The box in shared memory: one row per box row (${t.box.row_bytes} B), the number in each 16-byte chunk is where the swizzle puts it.`),
        el("table", {class: "chunks", id: "t-chunks"}, rows));
    });
  });

  // ------------------------------------------------------------------ linear layouts
  const json = (x) => el("pre", {class: "code"}, JSON.stringify(x));
  const matrix = (m) => el("pre", {class: "code", title: "rows: out bits; columns: in bits"}, m.join("\n"));
  $("ll-form").addEventListener("submit", (ev) => {
    ev.preventDefault();
    run($("l-result"), async () => {
      const r = await post("/api/solve/linear", {layout: $("l-lay").value});
      return el("div", {class: "detail"}, el("h3", {}, r.layout), el("p", {}, "F2 matrix (coordinate bits → offset bits):"), matrix(r.matrix),
        el("p", {}, "Triton LinearLayout, offset → (dim0, dim1):"), r.offset ? json(r.offset) : el("p", {class: "muted"}, r.offset_why),
        el("p", {}, "Forward (dim0, dim1 → offset):"), json(r.forward));
    });
  });
  $("lli-form").addEventListener("submit", (ev) => {
    ev.preventDefault();
    run($("l-result"), async () => {
      let body;
      try { body = JSON.parse($("l-json").value); } catch (e) { throw new Error(`json: ${e.message}`); }
      const r = await post("/api/solve/linear/import", body);
      return el("div", {class: "detail"}, r.cute ? el("p", {}, "CuTe layout: ", el("code", {id: "l-cute"}, r.cute))
        : el("p", {class: "over", id: "l-cute"}, `No CuTe layout: ${r.why}`), matrix(r.matrix));
    });
  });
  $("lla-form").addEventListener("submit", (ev) => {
    ev.preventDefault();
    run($("l-result"), async () => {
      const q = new URLSearchParams({name: $("l-atom").value, operand: $("l-op").value});
      const r = await fetch(`/api/solve/linear/atom?${q}`).then(async (x) => { const d = await x.json(); if (!x.ok) throw new Error(d.detail); return d; });
      return el("div", {class: "detail"}, el("h3", {}, `${r.atom} ${r.operand}: ${r.tv_layout}`), el("p", {}, "Triton LinearLayout:"), json(r.bases),
        el("p", {}, "Gluon DistributedLinearLayout:"), json(r.gluon), el("p", {}, "Read back as CuTe: ", el("code", {}, r.cute || "—")));
    });
  });

  // a field the address filled with a value the page does not offer is named above the form (app/page_query.py) and
  // kept in it: the solver waits for the person to pick one instead of posting what the page already refused
  if (!form.querySelector('[aria-invalid="true"]')) solve();
  // A permalink that names a descriptor or a TMA call (the GEMM ladder's rung pages) shows its verdict at once.
  for (const id of ["desc-form", "tma-form"]) if ($(id).dataset.run) $(id).requestSubmit();
})();
