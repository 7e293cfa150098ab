// LayoutLab grid core: a big grid's cells arrive as data and are built into tiles here; the first screenful before
// the page's first paint, the rest as it scrolls near or while the page is idle. static/app.js (hover cards, links,
// keyboard, thread isolation) and static/grid-tools.js (SVG export, zoom, cell menus) build on window.LayoutLab.
//
// Markup (app/services/grid.py): a grid is cut into tiles (.gt, data-j = first column) of row fragments (.gr, data-i
// = row); cell (i, j) is child j - data-j of its fragment. Row labels live in .gl, column labels in .gh. A big grid
// arrives with its tiles empty and cold (.gt.cold, data-i0 = first row; column-label tiles: data-h) and its cells as
// JSON (<script class="grid-data">: GridView.data_json); fill() writes a tile with exactly the markup the server
// writes for a small grid.
(function () {
  "use strict";

  const esc = (s) => String(s).replace(/[&<>"]/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;" }[c]));
  // a cell's own label (the server's), also while the cell menu shows its index or coordinate (data-v)
  const labelOf = (c) => (c.dataset.v !== undefined ? c.dataset.v : c.textContent);

  // ---- the data ---------------------------------------------------------------------------------------------
  const dataCache = new WeakMap();
  function dataFor(grid) {
    const script = document.querySelector(`script.grid-data[data-for="${grid.id}"]`);
    if (!script) return null;
    if (!dataCache.has(script)) {
      const d = JSON.parse(script.textContent);
      if (d.t === "tv") {
        // a thread / value grid (GridView.data_json): cell (i, j) reads T<thread>V<value> of the hover tables and
        // has colour (thread / d.tv) mod 32; a cell no thread holds (-1) is blank and uncoloured
        const meta = metaFor(grid), p = d.tv;
        d.t = meta.threads.map((tr, i) => tr.map((t, j) => (t >= 0 ? `T${t}V${meta.values[i][j]}` : "")));
        d.c = meta.threads.map((tr) => tr.map((t) => (t >= 0 ? Math.floor(t / p) % 32 : -1)));
      }
      d.marks = new Map(d.m.map(([i, j, c]) => [i * 1e6 + j, c]));
      dataCache.set(script, d);
    }
    return dataCache.get(script);
  }

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

  // ---- cells ------------------------------------------------------------------------------------------------
  const fragmentsOf = (grid) => grid.getElementsByClassName("gr");
  const cellOf = (el) => (el && el.closest && el.closest(".grid .gr > span")) || null;
  function cellPos(cell) {
    const row = cell.parentElement;
    return { i: Number(row.dataset.i), j: Number(row.parentElement.dataset.j) + Array.prototype.indexOf.call(row.children, cell) };
  }
  // every built cell satisfying pred(cell, i, j), in tile order
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

  // ---- building a tile ----------------------------------------------------------------------------------------
  // Post-condition: a cold tile of a grid with data holds its cells (or column labels) and is "lazy"
  // (content-visibility:auto: laid out and painted only while near the screen); "layoutlab:filled" tells the
  // other scripts (thread isolation, cell menus) to restyle it.
  function fill(tile) {
    const head = tile.dataset.h !== undefined;  // a tile of column labels
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
    const m = d.cm, marked = d.marks.size > 0;
    const lv = [];  // the class suffix of each column's boundary
    for (let j = j0; j < j1; j++) lv.push(d.cl[j] ? ` l${d.cl[j]}` : "");
    for (let i = i0; i < i1; i++) {
      out.push(d.rl[i] ? `<div class="gr t${d.rl[i]}" data-i="${i}">` : `<div class="gr" data-i="${i}">`);
      const t = d.t[i], c = d.c && d.c[i];
      for (let j = j0; j < j1; j++) {
        let cls = m ? `p${((t[j] % m) + m) % m}` : c ? (c[j] >= 0 ? `p${c[j]}` : "x") : "";
        cls += lv[j - j0];
        const mark = marked ? d.marks.get(i * 1e6 + j) : undefined;
        if (mark) cls += " " + mark;
        const label = typeof t[j] === "number" ? t[j] : esc(t[j]);
        out.push(cls ? `<span class="${cls.trim()}">${label}</span>` : `<span>${label}</span>`);
      }
      out.push("</div>");
    }
    tile.innerHTML = out.join("");
    tile.dispatchEvent(new CustomEvent("layoutlab:filled", { bubbles: true }));
  }
  const warm = (tile) => { fill(tile); tile.classList.replace("cold", "lazy"); };
  // every tile of a grid built (SVG export, thread isolation, find-in-page)
  const fillAll = (grid) => { for (const t of grid.querySelectorAll(".gt.cold")) warm(t); };

  // ---- what is built when -------------------------------------------------------------------------------------
  // 1. on screen: before the first paint (after a page load or an htmx swap), the cold tiles inside the visible part
  //    of their grid's box; one layout is read for all of them, then they are written (no read-after-write);
  // 2. scrolled to: a tile coming on screen (within SEEN_MARGIN, inside the visible part of its box) is built in the
  //    observer's callback;
  // 3. near: QUIET_MS after the first paint, in a box within WARM_MARGIN of the screen, the tiles within WARM_MARGIN
  //    of the box's visible part, then, once the page has been quiet for IDLE_MS, every other tile, are built in idle
  //    time, a few milliseconds per slot, so the first paint, typing and scrolling stay quick.
  const SEEN_MARGIN = "32px";
  const WARM_MARGIN = "400px";
  const QUIET_MS = 250;
  const IDLE_MS = 700;
  const SLOT_MS = 6;
  const seen = new WeakMap(), near = new WeakMap();
  let queue = [], nearTimer = 0, idleTimer = 0, generation = 0, pumping = false;

  function onScreen(root) {
    const grids = Array.from(root.querySelectorAll(".grid"));
    if (root.classList && root.classList.contains("grid")) grids.push(root);
    const vw = window.innerWidth, vh = window.innerHeight, todo = [];
    for (const grid of grids) {
      // a grid inside a part of the page that is not rendered (content-visibility off screen, a closed <details>):
      // asking where its tiles are would lay that part out, only to learn that they are off screen
      if (!grid.querySelector(".gt.cold") || !grid.checkVisibility({ contentVisibilityAuto: true })) continue;
      const box = (grid.closest(".gridwrap") || grid).getBoundingClientRect();
      const top = Math.max(0, box.top), bottom = Math.min(vh, box.bottom);
      const left = Math.max(0, box.left), right = Math.min(vw, box.right);
      if (bottom <= top || right <= left) continue;
      for (const tile of grid.querySelectorAll(".gt.cold")) {
        const r = tile.getBoundingClientRect();
        if (r.bottom > top && r.top < bottom && r.right > left && r.left < right) todo.push(tile);
      }
    }
    for (const tile of todo) warm(tile);
  }

  function pump() {
    if (pumping) return;
    pumping = true;
    const idle = window.requestIdleCallback || ((fn) => setTimeout(() => fn({ timeRemaining: () => SLOT_MS }), 30));
    const step = (deadline) => {
      const end = performance.now() + Math.min(SLOT_MS, Math.max(1, deadline.timeRemaining()));
      while (queue.length && performance.now() < end) {
        const tile = queue.shift();
        if (tile.isConnected && tile.classList.contains("cold")) warm(tile);
      }
      if (queue.length) idle(step, { timeout: 1000 });
      else pumping = false;
    };
    idle(step, { timeout: 1000 });
  }
  const enqueue = (tiles, first) => { queue = first ? tiles.concat(queue) : queue.concat(tiles); pump(); };

  // one observer per (purpose, scroll box): `root` null is the screen (a tile clipped by its box counts as unseen)
  function observer(map, key, root, margin, act) {
    let io = map.get(key);
    if (!io) {
      io = new IntersectionObserver((entries, obs) => {
        const hits = entries.filter((e) => e.isIntersecting).map((e) => e.target);
        for (const t of hits) obs.unobserve(t);
        act(hits.filter((t) => !t.classList.contains("gt") || t.classList.contains("cold")));
      }, { root, rootMargin: margin });
      map.set(key, io);
    }
    return io;
  }

  function watch(root) {
    onScreen(root);
    for (const tile of root.querySelectorAll(".gt.cold")) {
      if (!tile.closest(".gridwrap")) warm(tile);
      else observer(seen, document, null, SEEN_MARGIN, (tiles) => tiles.forEach(warm)).observe(tile);
    }
    // once the first screenful is painted and the page is quiet: the tiles near the screen in idle time (3. above),
    // after IDLE_MS every other tile
    const gen = ++generation;
    clearTimeout(nearTimer);
    clearTimeout(idleTimer);
    afterPaint(() => {
      if (gen !== generation) return;
      nearTimer = setTimeout(() => {
        const io = observer(near, document, null, WARM_MARGIN, (wraps) => wraps.forEach(nearBox));
        for (const wrap of document.querySelectorAll(".gridwrap")) if (wrap.querySelector(".gt.cold")) io.observe(wrap);
      }, QUIET_MS);
      idleTimer = setTimeout(() => enqueue(Array.from(document.querySelectorAll(".gt.cold")), false), IDLE_MS);
    });
  }
  // a box within WARM_MARGIN of the screen: its cold tiles within WARM_MARGIN of its visible part wait for idle time
  function nearBox(wrap) {
    const io = observer(near, wrap, wrap, WARM_MARGIN, (tiles) => enqueue(tiles, true));
    for (const tile of wrap.querySelectorAll(".gt.cold")) io.observe(tile);
  }
  // fn once the page has loaded and the next frame is painted
  function afterPaint(fn) {
    const next = () => requestAnimationFrame(() => setTimeout(fn, 0));
    if (document.readyState === "complete") next();
    else window.addEventListener("load", next, { once: true });
  }

  // htmx walks every element it removes (an event and a data record per element): empty the old grids first, they
  // hold no htmx state, so a 16k-cell grid leaves in one native call instead of 16k walks.
  document.addEventListener("htmx:beforeSwap", (ev) => {
    if (!ev.detail.shouldSwap || !ev.detail.target) return;
    for (const grid of ev.detail.target.querySelectorAll(".grid")) grid.replaceChildren();
  });
  // a swapped-in fragment gets its first screenful once htmx has processed it (settle:0ms: in the swap's own task,
  // so the frame after the swap shows the cells), so htmx never walks the cells built here
  document.addEventListener("htmx:afterSettle", (ev) => watch(ev.detail.target || document));
  // ---- what a page sends below a first screen that one big picture fills (templates/_section.html after_paint):
  // put in once the first screen is painted and the page is idle, and at once for an address or a link that names
  // an id inside it. Post-condition: no template.after-paint is left, and what it held is in the page as if sent
  // with it: set up by htmx and its grids watched like the page's.
  function putIn() {
    const parts = document.querySelectorAll("template.after-paint");
    for (const tpl of parts) {
      const parent = tpl.parentNode, nodes = Array.from(tpl.content.children);
      tpl.replaceWith(tpl.content);
      if (window.htmx) for (const n of nodes) window.htmx.process(n);  // idempotent: htmx skips a node it has set up
      watch(parent);
    }
    return parts.length > 0;
  }
  const holds = (id) => Array.from(document.querySelectorAll("template.after-paint")).some((t) => t.content.getElementById(id));
  const idOf = (hash) => { try { return hash.length > 1 ? decodeURIComponent(hash.slice(1)) : ""; } catch (_) { return ""; } };
  // a page opened at an anchor shows that part first: measure the screen from there
  function start() {
    if (holds(idOf(location.hash))) putIn();
    const target = idOf(location.hash) && document.getElementById(idOf(location.hash));
    if (target && window.scrollY === 0) target.scrollIntoView();
    watch(document);
    if (document.querySelector("template.after-paint")) {
      afterPaint(() => (window.requestIdleCallback ? requestIdleCallback(putIn, { timeout: 500 }) : putIn()));
    }
  }
  // now: the document is parsed (a deferred script), and base.html marks this script render-blocking, so the first
  // frame already shows the first screenful (no frame of the page without its cells, none of a half-parsed page)
  start();

  window.layoutlabFillAll = fillAll;
  window.LayoutLab = { metaFor, dataFor, cellOf, cellPos, cellsWhere, esc, fill, fillAll, labelOf, putIn, warm };
})();
