// LayoutLab page behaviour on top of static/grid-data.js (window.LayoutLab: the grid's cells and data): hover cards,
// linked highlighting between grids, the keyboard cursor, copy buttons, thread isolation, and typing that never swaps
// a stale answer. static/grid-tools.js adds the per-grid tools (SVG export, zoom / fit / full screen, cell menus).
// Everything is delegated from `document`, so grids swapped in by htmx work without re-binding.
(function () {
  "use strict";
  const { metaFor, cellOf, cellPos, cellsWhere, esc, fill, labelOf, warm } = window.LayoutLab;

  // ---- hover card: coordinates and each mode's contribution -------------------------------------------
  // offsets past 2^53 arrive as decimal text (layoutlab/grid.py exact_json): summed exactly, with BigInt
  function add(a, b) {
    const s = a + b;
    if (typeof a === "number" && typeof b === "number" && Number.isSafeInteger(s)) return s;
    return (BigInt(a) + BigInt(b)).toString();
  }

  function describe(meta, i, j, cell) {
    const rows = meta.rows;
    const idx = meta.rank <= 1 ? j : i + rows * j;
    const lines = [];
    lines.push(`<b>L(${idx}) = ${esc(labelOf(cell))}</b>`);
    lines.push(`1-D coordinate  ${idx}`);
    if (meta.rank > 1) lines.push(`flat coordinate (${i}, ${j})`);
    const parts = [];
    const crd = [];
    if (meta.rank > 1) {
      crd.push(meta.rowCrd[i]);
      parts.push(`mode 0: ${meta.rowCrd[i]} → ${meta.rowOff[i]}`);
    }
    const cc = meta.colCrd[j];
    const co = meta.colOff[j];
    for (let k = 0; k < cc.length; k++) {
      crd.push(cc[k]);
      parts.push(`mode ${k + (meta.rank > 1 ? 1 : 0)}: ${cc[k]} → ${co[k]}`);
    }
    lines.push(`natural coordinate (${crd.join(", ")})`);
    lines.push(parts.join("<br>"));
    if (meta.swizzle) {  // integer offsets only (a coordinate layout has no swizzle)
      const sum = [meta.rank > 1 ? meta.rowOff[i] : 0, ...co].reduce(add, 0);
      lines.push(`before ${esc(meta.swizzle)}: ${sum}`);
    }
    return lines.join("<br>");
  }

  // Sw<B,M,S> on an element offset: x ^ ((x & yyy) >> S), yyy = the B bits from M + S up
  function swizzle(text, x) {
    const m = /Sw<(\d+),(\d+),(\d+)>/.exec(text || "");
    if (!m) return x;
    const [b, base, sh] = m.slice(1).map(Number);
    const yyy = ((1 << b) - 1) << (base + Math.max(0, sh));
    return x ^ ((x & yyy) >> sh);
  }

  // the banks lab's card: coordinate, element offset before / after the swizzle, byte address, bank, lane
  function describeBank(meta, i, j, cell) {
    const pre = [(meta.rank > 1 ? meta.rowOff[i] : 0), ...meta.colOff[j]].reduce(add, 0);
    const post = swizzle(meta.swizzle, pre);
    const byte = post * meta.e;
    const crd = (meta.rank > 1 ? [meta.rowCrd[i]] : []).concat(meta.colCrd[j]);
    const lane = meta.lanes[`${i},${j}`];
    const lines = [`<b>bank ${Math.floor(byte / 4) % 32}</b>${lane !== undefined ? ` · read by lane ${lane}` : ""}`,
      `cell (${i}, ${j}) · natural coordinate (${crd.join(", ")})`,
      meta.swizzle ? `offset ${pre} → ${esc(meta.swizzle)} → ${post}` : `offset ${post}`,
      `byte address ${post} × ${meta.e} = ${byte}`, `bank = (${byte} / 4) mod 32 = ${Math.floor(byte / 4) % 32}`];
    return lines.join("<br>");
  }

  // a TV cell: its thread (lane, warp) and value index
  function describeTV(meta, i, j, cell) {
    const t = meta.threads[i][j], v = meta.values ? meta.values[i][j] : -1;
    if (t < 0) return `cell (${i}, ${j}): held by no thread`;
    return [`<b>${esc(labelOf(cell))}</b>`, `thread ${t} · warp ${t >> 5}, lane ${t % 32}`,
      v >= 0 ? `value ${v} of its fragment` : "", `cell (row ${i}, column ${j})`].filter(Boolean).join("<br>");
  }

  // the floating card of grids without a card of their own (workbench, TV atlas): beside the hovered grid and never
  // over a grid (the result's or any other on screen): right of the grid, left of it, below or above it, the first of
  // those clear of every grid; where none is (a phone, a grid taller than the screen), docked in the page under it
  let floating = null;
  function overGrid(x, y, w, h) {
    for (const g of document.querySelectorAll(".gridwrap")) {
      const r = g.getBoundingClientRect();
      if (r.width && r.height && x < r.right && x + w > r.left && y < r.bottom && y + h > r.top) return true;
    }
    return false;
  }
  function floatCard(cell, html) {
    if (!html) return;
    if (!floating) {
      floating = document.createElement("div");
      floating.className = "hover float-card";
      floating.setAttribute("role", "status");
    }
    floating.classList.remove("docked");
    if (floating.parentNode !== document.body) document.body.appendChild(floating);
    floating.innerHTML = html;
    floating.hidden = false;
    const fig = cell.closest(".gridfig") || cell;
    const g = fig.getBoundingClientRect(), r = cell.getBoundingClientRect();
    const w = floating.offsetWidth, h = floating.offsetHeight, W = window.innerWidth, H = window.innerHeight;
    const y = Math.min(H - h - 4, Math.max(4, r.top)), x = Math.min(W - w - 4, Math.max(4, r.left));
    const spot = [[g.right + 8, y], [g.left - w - 8, y], [x, g.bottom + 8], [x, g.top - h - 8]].find(
      ([a, b]) => a >= 0 && b >= 0 && a + w <= W && b + h <= H && !overGrid(a, b, w, h));
    if (spot) {
      floating.style.left = `${spot[0]}px`;
      floating.style.top = `${spot[1]}px`;
      return;
    }
    floating.classList.add("docked");
    fig.after(floating);
  }

  let lit = [];
  function clearLit() {
    for (const el of lit) el.classList.remove("hl", "src");
    lit = [];
    if (floating) floating.hidden = true;
  }

  function link(meta, cell, i, j) {
    if (!meta.links) return;
    const idx = meta.rank <= 1 ? j : i + meta.rows * j;
    const value = Number(labelOf(cell));
    for (const l of meta.links) {
      const other = document.getElementById(l.to);
      if (!other) continue;
      const om = metaFor(other);
      const orows = Number(other.dataset.rows);
      const oidx = (c, a, b) => (om && om.rank <= 1 ? b : a + orows * b);
      let hits = [];
      // "offset": the cells of the other grid holding this offset (plus l.add: local_tile's first element)
      if (l.by === "offset") hits = cellsWhere(other, (c) => Number(labelOf(c)) === value + (l.add || 0));
      else if (l.by === "index") hits = cellsWhere(other, (c, a, b) => oidx(c, a, b) === value);
      else if (l.by === "same") hits = cellsWhere(other, (c, a, b) => oidx(c, a, b) === idx);
      else if (l.by === "via") {
        // composition: R(k) = A(B(k)); the B cell at k holds the 1-D coordinate of A to light
        const via = document.getElementById(l.via);
        const vm = via && metaFor(via);
        const vrows = via ? Number(via.dataset.rows) : 0;
        const vcell = via && cellsWhere(via, (c, a, b) => (vm && vm.rank <= 1 ? b : a + vrows * b) === idx)[0];
        if (vcell) {
          const v = Number(labelOf(vcell));
          hits = cellsWhere(other, (c, a, b) => oidx(c, a, b) === v);
        }
      }
      for (const h of hits) { h.classList.add("src"); lit.push(h); }
    }
  }

  // light a cell, fill the hover card and light the cells it links to
  function inspect(cell) {
    const grid = cell.closest(".grid");
    const meta = metaFor(grid);
    clearLit();
    cell.classList.add("hl");
    lit.push(cell);
    if (!meta) return;
    const { i, j } = cellPos(cell);
    if (meta.hover && (meta.colCrd || meta.threads)) {  // a card of its own (explorer, banks lab, a notebook output)
      const card = document.getElementById(meta.hover);
      if (card) card.innerHTML = meta.kind === "banks" ? describeBank(meta, i, j, cell)
        : meta.colCrd ? describe(meta, i, j, cell) : describeTV(meta, i, j, cell);
    } else {
      floatCard(cell, meta.colCrd ? describe(meta, i, j, cell) : meta.threads ? describeTV(meta, i, j, cell) : "");
    }
    link(meta, cell, i, j);
  }

  document.addEventListener("mouseover", (ev) => {
    const cell = cellOf(ev.target);
    if (cell) inspect(cell);
  });
  document.addEventListener("mouseout", (ev) => {
    if (cellOf(ev.target) && !cellOf(ev.relatedTarget)) clearLit();
  });

  // ---- keyboard: a focused grid box moves a cursor with the arrows (PageUp/PageDown: 16 rows, Home/End: row
  // ends), inspecting each cell as hovering does
  const cursors = new WeakMap();
  const MOVES = { ArrowUp: [-1, 0], ArrowDown: [1, 0], ArrowLeft: [0, -1], ArrowRight: [0, 1], PageUp: [-16, 0],
    PageDown: [16, 0], Home: [0, -Infinity], End: [0, Infinity] };

  function cellAt(grid, i, j) {
    for (const t of grid.querySelectorAll(`.gk > .gt[data-i0="${i - (i % 16)}"]`)) fill(t);
    for (const row of grid.querySelectorAll(`.gr[data-i="${i}"]`)) {
      const k = j - Number(row.parentElement.dataset.j);
      if (k >= 0 && k < row.children.length) return row.children[k];
    }
    return null;
  }

  function moveTo(grid, i, j) {
    const cell = cellAt(grid, i, j);
    if (!cell) return;
    const tile = cell.closest(".gt");
    if (tile.classList.contains("cold")) warm(tile);
    cursors.set(grid, { i, j });
    inspect(cell);
    cell.scrollIntoView({ block: "nearest", inline: "nearest" });
  }

  document.addEventListener("keydown", (ev) => {
    const wrap = ev.target.classList && ev.target.classList.contains("gridwrap") ? ev.target : null;
    const move = MOVES[ev.key];
    const grid = wrap && wrap.querySelector(".grid");
    if (!grid || !move || ev.altKey || ev.ctrlKey || ev.metaKey) return;
    ev.preventDefault();
    const cur = cursors.get(grid) || { i: 0, j: 0 };
    const clamp = (v, n) => Math.max(0, Math.min(n - 1, v));
    moveTo(grid, clamp(cur.i + move[0], Number(grid.dataset.rows)), clamp(cur.j + move[1], Number(grid.dataset.cols)));
  });
  document.addEventListener("focusin", (ev) => {  // by keyboard (Tab) only: a click keeps its own cell
    const grid = ev.target.classList && ev.target.classList.contains("gridwrap") && ev.target.querySelector(".grid");
    if (grid && ev.target.matches(":focus-visible")) {
      const cur = cursors.get(grid) || { i: 0, j: 0 };
      moveTo(grid, cur.i, cur.j);
    }
  });
  document.addEventListener("mousedown", (ev) => {
    const cell = cellOf(ev.target);
    if (cell) cursors.set(cell.closest(".grid"), cellPos(cell));
  });

  // ---- copy buttons ----------------------------------------------------------------------------------------
  document.addEventListener("click", async (ev) => {
    const btn = ev.target.closest && ev.target.closest(".copy-btn");
    if (!btn) return;
    const text = btn.dataset.copy;
    try {
      await navigator.clipboard.writeText(text);
    } catch (_) {
      const ta = document.createElement("textarea");
      ta.value = text;
      document.body.appendChild(ta);
      ta.select();
      document.execCommand("copy");
      ta.remove();
    }
    const old = btn.textContent;
    btn.textContent = "Copied";
    setTimeout(() => { btn.textContent = old; }, 1200);
  });

  // ---- TV atlas: isolate one thread's cells ------------------------------------------------------------
  document.addEventListener("click", (ev) => {
    const btn = ev.target.closest && ev.target.closest(".threads button[data-thread]");
    if (!btn) return;
    const box = btn.closest(".threads");
    const grid = document.getElementById(box.dataset.grid);
    const on = btn.getAttribute("aria-pressed") !== "true";
    for (const b of box.querySelectorAll("button")) b.setAttribute("aria-pressed", "false");
    if (on) grid.dataset.dim = btn.dataset.thread;
    else delete grid.dataset.dim;
    dimThread(grid, on ? btn.dataset.thread : null);
    btn.setAttribute("aria-pressed", on ? "true" : "false");
  });

  // ---- the kernel path's and the MMA walkthrough's lane buttons: follow that lane (its form's thread field, sent)
  document.addEventListener("click", (ev) => {
    const btn = ev.target.closest && ev.target.closest(".lanes button[data-lane]");
    if (!btn) return;
    const input = document.getElementById(btn.closest(".lanes").dataset.input);
    if (!input || !input.form) return;
    input.value = btn.dataset.lane;
    input.form.requestSubmit();
  });

  // dim every cell of the grid that thread t does not hold (t null: none dimmed)
  function dimThread(grid, t) {
    const meta = metaFor(grid);
    cellsWhere(grid, (c, i, j) => {
      const mine = meta && meta.threads && String(meta.threads[i][j]) === t;
      c.classList.toggle("dim", t !== null && !mine);
      return false;
    });
  }

  // a tile built after a thread was isolated: dim its cells too
  document.addEventListener("layoutlab:filled", (ev) => {
    const grid = ev.target.closest(".grid");
    if (!grid || grid.dataset.dim === undefined) return;
    const meta = metaFor(grid), t = grid.dataset.dim, j0 = Number(ev.target.dataset.j);
    for (const row of ev.target.children) {
      const i = Number(row.dataset.i);
      for (let k = 0; k < row.children.length; k++) {
        row.children[k].classList.toggle("dim", !(meta && meta.threads && String(meta.threads[i][j0 + k]) === t));
      }
    }
  });

  // ---- sections that load when first opened (<details class="section">): a link to the heading in its summary
  // (the page's "On this page" links, an address ending in #kernel-h) opens it, which fetches its result
  // (a part of the page still waiting for its paint, templates/_section.html after_paint, is put in first)
  function openSectionOf(hash) {
    let id = "";
    try { id = hash && hash.length > 1 ? decodeURIComponent(hash.slice(1)) : ""; } catch (_) { return; }
    if (id && !document.getElementById(id) && window.LayoutLab) window.LayoutLab.putIn();
    const el = id && document.getElementById(id);
    const sec = el && el.closest("details.section");
    if (sec && !sec.open) { openForm(sec); sec.open = true; }
  }
  // ---- a section's form sent inert (templates/_section.html): put in and set up by htmx before the section shows,
  // on its summary's click (before the browser opens it: no frame of the open section without its form) or a link's
  // opening, and at the latest on its toggle. Post-condition: the section holds its form, as if sent with it.
  function openForm(sec) {
    for (const tpl of sec.querySelectorAll("template.closed-form")) {
      const nodes = Array.from(tpl.content.children);
      tpl.replaceWith(tpl.content);
      if (window.htmx) for (const n of nodes) window.htmx.process(n);
    }
  }
  document.addEventListener("click", (ev) => {
    const summary = ev.target.closest && ev.target.closest("details.section > summary");
    if (summary && !summary.parentElement.open) openForm(summary.parentElement);
  }, true);
  document.addEventListener("click", (ev) => {
    const a = ev.target.closest && ev.target.closest('a[href^="#"]');
    if (a) openSectionOf(a.getAttribute("href"));
  });
  window.addEventListener("hashchange", () => openSectionOf(location.hash));

  // ---- a long menu of a section sent closed (templates/_menu.html): it holds its chosen option and its whole list
  // waits in an inert <template>; the list goes in when the section opens, or when the menu is reached first (focus,
  // pointer, a search box filtering it). Post-condition: the same options, the same one chosen, as if sent whole.
  function fullMenu(sel) {
    const tpl = sel && sel.dataset.options !== undefined && document.getElementById(sel.dataset.options);
    if (!tpl) return;
    delete sel.dataset.options;
    sel.replaceChildren(tpl.content);  // its options carry `selected` on the one shown now
    tpl.remove();
  }
  const fullMenus = (root) => { for (const sel of root.querySelectorAll("select[data-options]")) fullMenu(sel); };
  // toggle does not bubble: caught on its way down, before htmx's listener on the <details> sends the section's form
  document.addEventListener("toggle", (ev) => {
    if (!ev.target.open) return;
    openForm(ev.target);
    fullMenus(ev.target);
  }, true);
  for (const type of ["focusin", "pointerdown"]) {
    document.addEventListener(type, (ev) => {
      if (ev.target.matches && ev.target.matches("select[data-options]")) fullMenu(ev.target);
    }, true);
  }
  window.LayoutLab.fullMenu = fullMenu;
  document.addEventListener("DOMContentLoaded", () => openSectionOf(location.hash));  // after htmx's own set-up

  // ---- typing: a form's requests run one at a time (hx-sync="this:queue last": the one in flight is never aborted,
  // so htmx logs no htmx:sendAbort, and only the newest waiting one is kept); an answer to a form that has changed
  // since its request left is not swapped in, as the request for the newer input follows it. Only forms that
  // answer every input (hx-trigger "input ...") count: a form sent on submit only keeps every answer.
  // Counted by form id, so a form the answer re-draws (the workbench's, on a change of op) keeps its count.
  const edits = new Map();  // form id (or the form) -> input events so far
  const live = (form) => /(^|[\s,])input\b/.test(form.getAttribute("hx-trigger") || "");
  const keyOf = (form) => form.id || form;
  document.addEventListener("input", (ev) => {
    const form = ev.target.form;
    if (form && live(form)) edits.set(keyOf(form), (edits.get(keyOf(form)) || 0) + 1);
  }, true);
  const sent = new WeakMap();  // xhr -> [form key, edits when it was sent]
  document.addEventListener("htmx:beforeRequest", (ev) => {
    const form = ev.detail.elt && (ev.detail.elt.tagName === "FORM" ? ev.detail.elt : ev.detail.elt.form);
    if (form && ev.detail.xhr && live(form)) sent.set(ev.detail.xhr, [keyOf(form), edits.get(keyOf(form)) || 0]);
  });
  // a field that kept a refused query value (app/page_query.py) is valid again once the person picks or types one
  document.addEventListener("input", (ev) => {
    if (ev.target.getAttribute && ev.target.getAttribute("aria-invalid") === "true") ev.target.removeAttribute("aria-invalid");
  }, true);
  document.addEventListener("htmx:beforeSwap", (ev) => {
    const s = ev.detail.xhr && sent.get(ev.detail.xhr);
    if (s && s[1] !== (edits.get(s[0]) || 0)) ev.detail.shouldSwap = false;
  }, true);
})();
