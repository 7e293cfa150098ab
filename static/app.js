// LayoutLab page behaviour: hover cards, linked highlighting, keyboard cursor, copy buttons, thread isolation, and
// big grids' tiles (cold tiles warmed near the viewport, deferred tiles built from JSON). static/grid-tools.js adds
// the per-grid tools (SVG export, zoom / fit / full screen, cell menus) and the form helpers.
// Everything is delegated from `document`, so grids swapped in by htmx work without re-binding.
(function () {
  "use strict";
  const metaCache = new WeakMap();

  function metaFor(grid) {
    const script = document.querySelector(`script.grid-meta[data-for="${grid.id}"]`);
    if (!script) return null;
    if (!metaCache.has(script)) {
      // a big grid's column tables may come short (app/services/grid.py GridView.meta_json): "j" for
      // colCrd[j] = [String(j)], {f: [f0, f1, ...]} for colCrd[j] = ["(f0[digit 0],f1[digit 1],...)"] (j in mixed
      // radix, digit 0 fastest), "t" for colOff[j] = [its one row's label]
      const meta = JSON.parse(script.textContent);
      const cols = Number(grid.dataset.cols);
      if (meta.colCrd === "j") meta.colCrd = Array.from({ length: cols }, (_, j) => [String(j)]);
      else if (meta.colCrd && meta.colCrd.f) {
        const f = meta.colCrd.f;
        meta.colCrd = Array.from({ length: cols }, (_, j) => {
          const parts = [];
          for (const fk of f) { parts.push(fk[j % fk.length]); j = Math.floor(j / fk.length); }
          return [`(${parts.join(",")})`];
        });
      }
      if (meta.colOff === "t") { const t = dataFor(grid).t[0]; meta.colOff = Array.from({ length: cols }, (_, j) => [t[j]]); }
      metaCache.set(script, meta);
    }
    return metaCache.get(script);
  }

  // A grid (app/services/grid.py) is cut into tiles (.gt, data-j = first column) of row fragments (.gr, data-i = row);
  // cell (i, j) is child j - data-j of its fragment. Row labels live in .gl, column labels in .gh.
  const fragmentsOf = (grid) => grid.getElementsByClassName("gr");

  function cellOf(el) {
    return (el && el.closest && el.closest(".grid .gr > span")) || null;
  }

  function cellPos(cell) {
    const row = cell.parentElement;
    return { i: Number(row.dataset.i), j: Number(row.parentElement.dataset.j) + Array.prototype.indexOf.call(row.children, cell) };
  }

  // every cell satisfying pred(cell, i, j), in tile order
  function cellsWhere(grid, pred) {
    const out = [];
    const frags = fragmentsOf(grid);
    for (let f = 0; f < frags.length; f++) {
      const row = frags[f];
      const i = Number(row.dataset.i);
      const j0 = Number(row.parentElement.dataset.j);
      const cells = row.children;
      for (let k = 0; k < cells.length; k++) if (pred(cells[k], i, j0 + k)) out.push(cells[k]);
    }
    return out;
  }

  // a cell's own label (the server's), also while the cell menu shows its index or coordinate (data-v)
  const labelOf = (c) => (c.dataset.v !== undefined ? c.dataset.v : c.textContent);
  const esc = (s) => String(s).replace(/[&<>"]/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;" }[c]));

  // ---- hover card: coordinates and each mode's contribution -------------------------------------------
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
    const sum = (meta.rank > 1 ? meta.rowOff[i] : 0) + co.reduce((a, b) => a + b, 0);
    if (meta.swizzle) lines.push(`before ${esc(meta.swizzle)}: ${sum}`);
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
    const pre = (meta.rank > 1 ? meta.rowOff[i] : 0) + meta.colOff[j].reduce((a, b) => a + b, 0);
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
    if (meta.hover && meta.colCrd) {
      const card = document.getElementById(meta.hover);
      if (card) card.innerHTML = meta.kind === "banks" ? describeBank(meta, i, j, cell) : describe(meta, i, j, cell);
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

  // dim every cell of the grid that thread t does not hold (t null: none dimmed)
  function dimThread(grid, t) {
    const meta = metaFor(grid);
    cellsWhere(grid, (c, i, j) => {
      const mine = meta && meta.threads && String(meta.threads[i][j]) === t;
      c.classList.toggle("dim", t !== null && !mine);
      return false;
    });
  }

  // ---- cold tiles -------------------------------------------------------------------------------------------
  // A grid arrives with only its top-left tiles laid out; the others (.gt.cold, content-visibility:hidden) are
  // warmed when they scroll within WARM_MARGIN of their scroll box, and all of them once the page has been quiet
  // for IDLE_MS (a few tiles per idle slot, so typing stays responsive and find-in-page sees every cell).
  const WARM_MARGIN = "400px";
  const IDLE_MS = 700;
  const observers = new WeakMap();
  const TILES_PER_SLOT = 8;
  let idleTimer = 0;
  let generation = 0;
  const warm = (tile) => { fill(tile); tile.classList.replace("cold", "lazy"); };

  // ---- deferred tiles: a big grid's cold tiles arrive empty (data-i0 = first row; data-h: column labels) with the
  // cells as JSON (app/services/grid.py GridView.data_json); fill() writes the same markup the server writes for a
  // warm tile.
  const dataCache = new WeakMap();
  function dataFor(grid) {
    const script = document.querySelector(`script.grid-data[data-for="${grid.id}"]`);
    if (!script) return null;
    if (!dataCache.has(script)) {
      const d = JSON.parse(script.textContent);
      d.marks = new Map(d.m.map(([i, j, c]) => [i * 1e6 + j, c]));
      dataCache.set(script, d);
    }
    return dataCache.get(script);
  }

  function fill(tile) {
    const head = tile.dataset.h !== undefined;  // a cold tile of column labels
    if ((tile.dataset.i0 === undefined && !head) || tile.firstChild) return;
    const grid = tile.closest(".grid");
    const d = grid && dataFor(grid);
    if (!d) return;
    const i0 = Number(tile.dataset.i0), j0 = Number(tile.dataset.j);
    const rows = Number(grid.dataset.rows), cols = Number(grid.dataset.cols);
    const w = Number(tile.style.getPropertyValue("--w")) || 16;  // a grid of few rows has wider tiles
    const i1 = Math.min(rows, i0 + 16), j1 = Math.min(cols, j0 + w);
    const out = [];
    if (head) {
      for (let j = j0; j < j1; j++) {
        const label = d.ch ? esc(d.ch[j]) : j;
        out.push(d.cl[j] ? `<span class="l${d.cl[j]}">${label}</span>` : `<span>${label}</span>`);
      }
      tile.innerHTML = out.join("");
      return;
    }
    for (let i = i0; i < i1; i++) {
      out.push(d.rl[i] ? `<div class="gr t${d.rl[i]}" data-i="${i}">` : `<div class="gr" data-i="${i}">`);
      const t = d.t[i], c = d.c && d.c[i], m = d.cm;
      for (let j = j0; j < j1; j++) {
        let cls = m ? `p${((t[j] % m) + m) % m}` : c ? (c[j] >= 0 ? `p${c[j]}` : "x") : "";
        if (d.cl[j]) cls += (cls ? " " : "") + `l${d.cl[j]}`;
        const mark = d.marks.size ? d.marks.get(i * 1e6 + j) : undefined;
        if (mark) cls += (cls ? " " : "") + mark;
        const label = typeof t[j] === "number" ? t[j] : esc(t[j]);
        out.push(cls ? `<span class="${cls}">${label}</span>` : `<span>${label}</span>`);
      }
      out.push("</div>");
    }
    tile.innerHTML = out.join("");
    if (grid.dataset.dim !== undefined) dimThread(grid, grid.dataset.dim);
    tile.dispatchEvent(new CustomEvent("layoutlab:filled", { bubbles: true }));  // grid-tools.js restyles it
  }
  // every tile of a grid filled (SVG export, thread isolation, find-in-page)
  const fillAll = (grid) => { for (const t of grid.querySelectorAll(".gt[data-i0], .gt[data-h]")) fill(t); };
  window.layoutlabFillAll = fillAll;
  // for static/grid-tools.js (SVG export, zoom, cell menus)
  window.LayoutLab = { metaFor, cellsWhere, esc, fillAll, labelOf };

  function watch(root) {
    for (const tile of root.querySelectorAll(".gt.cold")) {
      const wrap = tile.closest(".gridwrap");
      if (!wrap) { warm(tile); continue; }
      let io = observers.get(wrap);
      if (!io) {
        io = new IntersectionObserver((entries, obs) => {
          for (const e of entries) if (e.isIntersecting) { warm(e.target); obs.unobserve(e.target); }
        }, { root: wrap, rootMargin: WARM_MARGIN });
        observers.set(wrap, io);
      }
      io.observe(tile);
    }
    generation += 1;
    clearTimeout(idleTimer);
    idleTimer = setTimeout(warmAll, IDLE_MS);
  }

  function warmAll() {
    const gen = generation;
    const schedule = (fn) => (window.requestIdleCallback ? requestIdleCallback(fn, { timeout: 1000 }) : setTimeout(fn, 30));
    const step = () => {  // a few tiles per idle slot: their layout happens in the next frame
      const cold = gen === generation ? document.querySelectorAll(".gt.cold") : [];
      for (let k = 0; k < Math.min(TILES_PER_SLOT, cold.length); k++) warm(cold[k]);
      if (cold.length > TILES_PER_SLOT) schedule(step);
    };
    schedule(step);
  }

  // htmx walks every element it removes (an event and a data record per element): empty the old grids first, they
  // hold no htmx state, so a 16k-cell grid leaves in one native call instead of 16k walks.
  document.addEventListener("htmx:beforeSwap", (ev) => {
    if (!ev.detail.shouldSwap || !ev.detail.target) return;
    for (const grid of ev.detail.target.querySelectorAll(".grid")) grid.replaceChildren();
  });
  document.addEventListener("htmx:afterSwap", (ev) => watch(ev.detail.target || document));
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", () => watch(document));
  else watch(document);
})();
