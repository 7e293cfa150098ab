// LayoutLab grid tools and form helpers, on top of static/app.js (window.LayoutLab: metaFor, cellsWhere, fillAll):
// SVG export (drawn by the server), zoom / fit / full screen, what a cell shows and how it is coloured, a search box
// filtering a long <select>, and the banks lab's legal per-thread widths. Delegated from `document`, so htmx swaps
// need nothing.
(function () {
  "use strict";
  const { metaFor, cellsWhere, fillAll } = window.LayoutLab;

  // a file name from a caption: the layout part (before " · "), without characters file systems refuse
  const fileName = (name) => name.split(" · ")[0].replace(/ o /g, "_o_").replace(/</g, "[").replace(/>/g, "]")
    .replace(/[:"/\\|?*\s]+/g, "_").slice(0, 120) || "grid";
  window.layoutlabFileName = fileName;

  // ---- SVG export --------------------------------------------------------------------------------------------
  // The picture is drawn by the server (POST /api/svg, layoutlab.grid.Grid.svg_body: the drawing layoutlab.svg makes
  // too); this reads what the grid shows now: each cell's label and fill (the page's own CSS, read once per distinct
  // cell class: computed style works in tiles that are not laid out), faded and outlined cells, the boundary levels
  // of nested modes, the row / column labels, the caption and what the outlines mean.
  const level = (el, k) => Number((new RegExp(`\\b${k}([123])\\b`).exec(el.className) || [0, 0])[1]);
  function gridModel(grid) {
    const rows = Number(grid.dataset.rows), cols = Number(grid.dataset.cols);
    const colHeads = Array.from(grid.querySelectorAll(".gh > .gt > span"));
    const rowHeads = Array.from(grid.querySelectorAll(".gl > span"));
    const palette = [], index = new Map(), byClass = new Map();
    const text = new Array(rows * cols).fill(""), colour = new Array(rows * cols).fill(-1), marks = [];
    cellsWhere(grid, (c, i, j) => {
      const key = c.className.replace(/\b(l[123]|hl|src|dim|acc|bad)\b/g, "").trim();
      if (!byClass.has(key)) {
        const fill = getComputedStyle(c).backgroundColor;
        if (!index.has(fill)) { index.set(fill, palette.length); palette.push(fill); }
        byClass.set(key, index.get(fill));
      }
      text[i * cols + j] = c.textContent;
      colour[i * cols + j] = byClass.get(key);
      const m = ["acc", "bad", "dim"].filter((k) => c.classList.contains(k));
      if (m.length) marks.push([i, j, m.join(" ")]);
      return false;
    });
    const fig = grid.closest("figure");
    const cap = fig && fig.querySelector(".grid-caption");
    const meta = metaFor(grid);
    return { rows, cols, text, palette, colour, marks, caption: cap ? cap.textContent : "",
      outline: (meta && meta.outline) || "", row_levels: rowHeads.map((s) => level(s, "t")),
      col_levels: colHeads.map((s) => level(s, "l")), row_labels: rowHeads.map((s) => s.textContent),
      col_labels: colHeads.map((s) => s.textContent) };
  }
  async function gridSvg(grid) {
    fillAll(grid);
    const r = await fetch("/api/svg", { method: "POST", headers: { "Content-Type": "application/json" },
      body: JSON.stringify(gridModel(grid)) });
    const body = await r.text();
    if (!r.ok) throw new Error((() => { try { return JSON.parse(body).detail; } catch (e) { return body; } })());
    return body;
  }

  document.addEventListener("click", async (ev) => {
    const btn = ev.target.closest && ev.target.closest(".svg-export");
    if (!btn) return;
    const grid = document.getElementById(btn.dataset.grid);
    if (!grid) return;
    let svg;
    try { svg = await gridSvg(grid); } catch (e) { btn.title = `SVG: ${e.message}`; window.alert(`SVG export: ${e.message}`); return; }
    const a = document.createElement("a");
    a.href = URL.createObjectURL(new Blob([svg], { type: "image/svg+xml" }));
    a.download = `${fileName(btn.dataset.name || btn.dataset.grid)}.svg`;
    document.body.appendChild(a);
    a.click();
    setTimeout(() => { URL.revokeObjectURL(a.href); a.remove(); }, 0);
  });
  window.layoutlabSvg = (id) => gridSvg(document.getElementById(id));

  // ---- grid tools: zoom, fit, full screen; what a cell shows and how it is coloured ---------------------------
  const ZOOMS = [0.1, 0.15, 0.2, 0.25, 0.33, 0.5, 0.67, 0.8, 1, 1.25, 1.5, 2];
  // Below TINY the 12 px labels would print at under 7 px, a grey noise over the colours: the cells keep their
  // colours and nested-mode lines, their numbers and hairlines hide (the hover card still names every cell), and the
  // tools say so beside the zoom level.
  const TINY = 0.6;
  function setZoom(grid, z) {
    grid.dataset.z = String(z);
    grid.style.zoom = z === 1 ? "" : String(z);
    grid.classList.toggle("tiny", z < TINY);
    const tools = document.querySelector(`.gridtools[data-grid="${grid.id}"]`);
    const out = tools && tools.querySelector(".zoom-level");
    if (out) out.textContent = z === 1 ? "" : `${Math.round(z * 100)} %${z < TINY ? " · numbers hidden, hover a cell" : ""}`;
  }
  // the zoom at which the whole grid fits its box (the screen in full screen)
  function fitZoom(grid) {
    const fig = grid.closest("figure");
    const wrap = grid.closest(".gridwrap");
    const old = grid.style.zoom;
    grid.style.zoom = "";
    const w = grid.scrollWidth, h = grid.scrollHeight;
    grid.style.zoom = old;
    let availW, availH;
    if (fig.classList.contains("full")) {
      availW = window.innerWidth - 24;
      availH = window.innerHeight - fig.querySelector("figcaption").offsetHeight - 24;
    } else {
      const box = (fig.closest(".with-card") || fig.parentElement).getBoundingClientRect();
      const card = fig.closest(".with-card") && fig.closest(".with-card").querySelector(".hover");
      const beside = card && card.getBoundingClientRect().left >= wrap.getBoundingClientRect().right - 1;  // not below
      availW = Math.min(window.innerWidth, box.right) - wrap.getBoundingClientRect().left - (beside ? card.offsetWidth + 16 : 0) - 4;
      availH = window.innerHeight * 0.78 - 4;
    }
    return Math.max(ZOOMS[0], Math.min(1, availW / w, availH / h));
  }
  function zoom(grid, how) {
    const z = Number(grid.dataset.z || 1);
    if (how === "in") setZoom(grid, ZOOMS.find((v) => v > z + 1e-6) || ZOOMS[ZOOMS.length - 1]);
    else if (how === "out") setZoom(grid, [...ZOOMS].reverse().find((v) => v < z - 1e-6) || ZOOMS[0]);
    else if (how === "fit") setZoom(grid, fitZoom(grid));
    else setZoom(grid, 1);
  }
  function setFull(fig, on) {
    fig.classList.toggle("full", on);
    const btn = fig.querySelector("button.fullscreen");
    if (btn) { btn.setAttribute("aria-pressed", on ? "true" : "false"); btn.textContent = on ? "Leave full screen" : "Full screen"; }
    const grid = fig.querySelector(".grid");
    if (on) zoom(grid, "fit");
    else setZoom(grid, 1);
  }
  document.addEventListener("click", (ev) => {
    const btn = ev.target.closest && ev.target.closest(".gridtools button.zoom, .gridtools button.fullscreen");
    if (!btn) return;
    const grid = document.getElementById(btn.closest(".gridtools").dataset.grid);
    if (!grid) return;
    if (btn.classList.contains("zoom")) { zoom(grid, btn.dataset.zoom); return; }
    const fig = grid.closest("figure");
    const on = !fig.classList.contains("full");
    if (on && fig.requestFullscreen) fig.requestFullscreen().catch(() => {});
    if (!on && document.fullscreenElement === fig) document.exitFullscreen().catch(() => {});
    setFull(fig, on);
  });
  document.addEventListener("fullscreenchange", () => {  // Esc leaves the browser's full screen: follow it
    for (const fig of document.querySelectorAll("figure.gridfig.full")) if (document.fullscreenElement !== fig) setFull(fig, false);
  });
  document.addEventListener("keydown", (ev) => {
    if (ev.key !== "Escape") return;
    if (document.fullscreenElement) document.exitFullscreen().catch(() => {});
    for (const fig of document.querySelectorAll("figure.gridfig.full")) setFull(fig, false);
  });

  // what a cell shows (value / index / coordinate) and its colour; the server's label and colour are kept per cell
  const original = new WeakMap();
  const PCLASS = /\b(p\d+|x|n0)\b/;
  function viewOf(grid, i, j) {
    const meta = metaFor(grid) || {};
    const rows = Number(grid.dataset.rows);
    const idx = meta.rank <= 1 && rows === 1 ? j : i + rows * j;
    const t = meta.threads ? meta.threads[i][j] : -1;
    const v = meta.values ? meta.values[i][j] : -1;
    const coord = meta.colCrd ? `(${(meta.rank > 1 ? [meta.rowCrd[i]] : []).concat(meta.colCrd[j]).join(",")})` : `(${i},${j})`;
    return {
      label: { index: idx, coord: meta.colCrd || meta.threads ? coord : `(${i},${j})`, thread: t >= 0 ? `T${t}` : "",
        vindex: v >= 0 ? `V${v}` : "" },
      colour: { row: i % 32, col: j % 32, lane: t >= 0 ? t % 32 : -1, warp: t >= 0 ? (t >> 5) % 32 : -1,
        vindex: v >= 0 ? v % 32 : -1, none: -2 },
    };
  }
  function restyle(grid, cells) {
    const lab = grid.dataset.label || "value", col = grid.dataset.colour || "value";
    const each = (c, i, j) => {
      if (!original.has(c)) original.set(c, [c.textContent, (PCLASS.exec(c.className) || [""])[0]]);
      const [text, cls] = original.get(c);
      const v = lab === "value" && col === "value" ? null : viewOf(grid, i, j);
      c.textContent = lab === "value" ? text : v.label[lab];
      if (lab === "value") delete c.dataset.v;
      else c.dataset.v = text;  // app.js's links and hover cards read the cell's own label
      const k = col === "value" ? cls : v.colour[col] >= 0 ? `p${v.colour[col]}` : v.colour[col] === -2 ? "n0" : "x";
      const now = (PCLASS.exec(c.className) || [""])[0];
      if (now !== k) {
        if (now) c.classList.remove(now);
        if (k) c.classList.add(k);
      }
      return false;
    };
    if (cells) cells.forEach(([c, i, j]) => each(c, i, j));
    else cellsWhere(grid, each);
  }
  document.addEventListener("change", (ev) => {
    const sel = ev.target.closest && ev.target.closest(".gridtools select");
    if (!sel) return;
    const grid = document.getElementById(sel.closest(".gridtools").dataset.grid);
    if (!grid) return;
    grid.dataset[sel.classList.contains("cell-label") ? "label" : "colour"] = sel.value;
    if (sel.classList.contains("cell-label")) widenFor(grid, sel.value);
    restyle(grid);
  });
  // cells as wide as the longest label of the chosen kind (app.css: --label-ch), "((7,15),(7,15))" included; back
  // to the server's width with the values
  function widenFor(grid, lab) {
    if (grid.dataset.labelCh0 === undefined) grid.dataset.labelCh0 = grid.style.getPropertyValue("--label-ch");
    let n = 0;
    if (lab !== "value") {
      const rows = Number(grid.dataset.rows), cols = Number(grid.dataset.cols);
      for (let i = 0; i < rows; i++) for (let j = 0; j < cols; j++) n = Math.max(n, String(viewOf(grid, i, j).label[lab]).length);
    }
    if (n) grid.style.setProperty("--label-ch", String(n));
    else if (grid.dataset.labelCh0) grid.style.setProperty("--label-ch", grid.dataset.labelCh0);
    else grid.style.removeProperty("--label-ch");
  }

  // ---- a search box filtering a long <select> (data-filter-for = the select's id): every word must occur in the
  // option's name (case-insensitive; "16x8x16 f16" finds SM80_16x8x16_F32F16F16F32_TN); the first match is chosen
  // and the select's form updates as if picked by hand. Captured here so the box's own typing submits nothing.
  document.addEventListener("input", (ev) => {
    const box = ev.target;
    if (!box.dataset || box.dataset.filterFor === undefined) return;
    ev.stopPropagation();
    const sel = document.getElementById(box.dataset.filterFor);
    if (!sel) return;
    window.LayoutLab.fullMenu(sel);  // a menu sent short (templates/_menu.html): its whole list first
    const words = box.value.toLowerCase().split(/\s+/).filter(Boolean);
    let first = null, count = 0;
    for (const opt of sel.options) {
      const name = opt.textContent.toLowerCase();
      const hit = words.every((w) => name.includes(w));
      opt.hidden = !hit;
      if (hit) { count += 1; if (!first) first = opt; }
    }
    for (const group of sel.querySelectorAll("optgroup")) group.hidden = !group.querySelector("option:not([hidden])");
    box.setAttribute("aria-label", `${count} atoms match`);
    box.title = `${count} match${count === 1 ? "" : "es"}`;
    const current = sel.options[sel.selectedIndex];
    if (first && (!current || current.hidden)) {
      sel.value = first.value || first.textContent;
      sel.dispatchEvent(new Event("input", { bubbles: true }));
      sel.dispatchEvent(new Event("change", { bubbles: true }));
    }
  }, true);

  // ---- the banks lab's "Per thread" menu offers only legal widths (1 to 16 bytes) for the chosen element size
  document.addEventListener("input", (ev) => {
    const eb = ev.target;
    if (!eb.id) return;
    for (const sel of document.querySelectorAll(`select[data-widths-for="${eb.id}"]`)) {
      const e = Number(eb.value);
      const keep = Number(sel.value);
      sel.replaceChildren(...[1, 2, 4, 8, 16].filter((v) => v * e <= 16).map((v) => {
        const o = new Option(`${v} element${v > 1 ? "s" : ""} (${v * e * 8}-bit)`, String(v));
        o.selected = v === Math.min(keep, 16 / e);
        return o;
      }));
    }
  });

  // a deferred tile just built by app.js: give its cells the grid's current label and colour
  document.addEventListener("layoutlab:filled", (ev) => {
    const tile = ev.target;
    const grid = tile.closest(".grid");
    if (!grid || !(grid.dataset.label || grid.dataset.colour)) return;
    const j0 = Number(tile.dataset.j);
    const cells = [];
    for (const row of tile.children) for (let k = 0; k < row.children.length; k++) cells.push([row.children[k], Number(row.dataset.i), j0 + k]);
    restyle(grid, cells);
  });
})();
