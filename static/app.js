// LayoutLab page behaviour: hover cards, linked highlighting, SVG export, copy buttons, thread isolation.
// Everything is delegated from `document`, so grids swapped in by htmx work without re-binding.
(function () {
  "use strict";
  const metaCache = new WeakMap();

  function metaFor(grid) {
    const script = document.querySelector(`script.grid-meta[data-for="${grid.id}"]`);
    if (!script) return null;
    if (!metaCache.has(script)) metaCache.set(script, JSON.parse(script.textContent));
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

  const esc = (s) => String(s).replace(/[&<>"]/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;" }[c]));

  // ---- hover card: coordinates and each mode's contribution -------------------------------------------
  function describe(meta, i, j, cell) {
    const rows = meta.rows;
    const idx = meta.rank <= 1 ? j : i + rows * j;
    const lines = [];
    lines.push(`<b>L(${idx}) = ${esc(cell.textContent)}</b>`);
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
    return [`<b>${esc(cell.textContent)}</b>`, `thread ${t} · warp ${t >> 5}, lane ${t % 32}`,
      v >= 0 ? `value ${v} of its fragment` : "", `cell (row ${i}, column ${j})`].filter(Boolean).join("<br>");
  }

  // the floating card of grids without a card of their own (workbench, TV atlas): beside the hovered cell
  let floating = null;
  function floatCard(cell, html) {
    if (!html) return;
    if (!floating) {
      floating = document.createElement("div");
      floating.className = "hover float-card";
      floating.setAttribute("role", "status");
      document.body.appendChild(floating);
    }
    floating.innerHTML = html;
    floating.hidden = false;
    const r = cell.getBoundingClientRect();
    const w = floating.offsetWidth, h = floating.offsetHeight;
    const x = r.right + 8 + w > window.innerWidth ? Math.max(4, r.left - w - 8) : r.right + 8;
    const y = Math.min(window.innerHeight - h - 4, Math.max(4, r.top));
    floating.style.left = `${x}px`;
    floating.style.top = `${y}px`;
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
    const value = Number(cell.textContent);
    for (const l of meta.links) {
      const other = document.getElementById(l.to);
      if (!other) continue;
      const om = metaFor(other);
      const orows = Number(other.dataset.rows);
      const oidx = (c, a, b) => (om && om.rank <= 1 ? b : a + orows * b);
      let hits = [];
      // "offset": the cells of the other grid holding this offset (plus l.add: local_tile's first element)
      if (l.by === "offset") hits = cellsWhere(other, (c) => Number(c.textContent) === value + (l.add || 0));
      else if (l.by === "index") hits = cellsWhere(other, (c, a, b) => oidx(c, a, b) === value);
      else if (l.by === "same") hits = cellsWhere(other, (c, a, b) => oidx(c, a, b) === idx);
      else if (l.by === "via") {
        // composition: R(k) = A(B(k)); the B cell at k holds the 1-D coordinate of A to light
        const via = document.getElementById(l.via);
        const vm = via && metaFor(via);
        const vrows = via ? Number(via.dataset.rows) : 0;
        const vcell = via && cellsWhere(via, (c, a, b) => (vm && vm.rank <= 1 ? b : a + vrows * b) === idx)[0];
        if (vcell) {
          const v = Number(vcell.textContent);
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

  const OUTLINES = ["acc", "bad"];
  // a file name from a caption: the layout part (before " · "), without characters file systems refuse
  const fileName = (name) => name.split(" · ")[0].replace(/ o /g, "_o_").replace(/</g, "[").replace(/>/g, "]")
    .replace(/[:"/\\|?*\s]+/g, "_").slice(0, 120) || "grid";
  window.layoutlabFileName = fileName;

  // ---- SVG export --------------------------------------------------------------------------------------------
  // One <rect> + <text> per cell, the boundary lines of nested modes, the row / column labels. Fills are read from
  // the page's own CSS once per distinct cell class (computed style works in tiles that are not laid out).
  function gridToSvg(grid) {
    const W = 44, H = 22, pad = 28;
    const nrows = Number(grid.dataset.rows), ncols = Number(grid.dataset.cols);
    const colLabels = Array.from(grid.querySelectorAll(".gh > .gt > span"));
    const rowLabels = Array.from(grid.querySelectorAll(".gl > span"));
    const fills = new Map();
    const fillOf = (c) => {
      const key = c.className.replace(/\b(l[123]|hl|src|dim)\b/g, "").trim();
      if (!fills.has(key)) fills.set(key, getComputedStyle(c).backgroundColor);
      return fills.get(key);
    };
    const out = [];
    const width = pad + ncols * W + 2, height = pad + nrows * H + 2 + 40;
    out.push(`<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" font-family="monospace" font-size="11">`);
    out.push(`<rect width="${width}" height="${height}" fill="#fff"/>`);
    colLabels.forEach((c, j) => out.push(`<text x="${pad + j * W + W / 2}" y="${pad - 8}" text-anchor="middle" fill="#666">${esc(c.textContent)}</text>`));
    rowLabels.forEach((c, i) => out.push(`<text x="${pad - 6}" y="${pad + i * H + H / 2 + 4}" text-anchor="end" fill="#666">${esc(c.textContent)}</text>`));
    cellsWhere(grid, (c, i, j) => {
      const x = pad + j * W, y = pad + i * H;
      const dim = c.classList.contains("dim") ? ' fill-opacity="0.18"' : "";
      out.push(`<rect x="${x}" y="${y}" width="${W}" height="${H}" fill="${fillOf(c)}"${dim} stroke="#999" stroke-width="0.5"/>`);
      out.push(`<text x="${x + W / 2}" y="${y + H / 2 + 4}" text-anchor="middle">${esc(c.textContent)}</text>`);
      const lv = /\bl([123])\b/.exec(c.className);
      if (lv) out.push(`<line x1="${x}" y1="${y}" x2="${x}" y2="${y + H}" stroke="#222" stroke-width="${lv[1]}"/>`);
      return false;
    });
    rowLabels.forEach((c, i) => {
      const tv = /\bt([123])\b/.exec(c.className);
      const y = pad + i * H;
      if (tv) out.push(`<line x1="${pad}" y1="${y}" x2="${pad + ncols * W}" y2="${y}" stroke="#222" stroke-width="${tv[1]}"/>`);
    });
    // outlines drawn last, over the cells and lines: the accessed cells (banks: "cells this warp reads")
    let marked = 0;
    cellsWhere(grid, (c, i, j) => {
      const kind = OUTLINES.find((k) => c.classList.contains(k));
      if (kind) {
        marked += 1;
        out.push(`<rect x="${pad + j * W + 1.5}" y="${pad + i * H + 1.5}" width="${W - 3}" height="${H - 3}" fill="none" stroke="${kind === "bad" ? "#c53030" : "#111"}" stroke-width="2.5" class="${kind}"/>`);
      }
      return false;
    });
    const fig = grid.closest("figure");
    const cap = fig && fig.querySelector(".grid-caption");
    const lines = [cap ? cap.textContent : ""];
    const meta = metaFor(grid);
    if (marked) lines.push((meta && meta.outline) || `outlined: ${marked} marked cells`);
    lines.filter(Boolean).forEach((t, k) => out.push(`<text x="${pad}" y="${pad + nrows * H + 18 + 16 * k}" fill="#333" class="caption">${esc(t)}</text>`));
    out.push("</svg>");
    return out.join("\n");
  }

  document.addEventListener("click", (ev) => {
    const btn = ev.target.closest && ev.target.closest(".svg-export");
    if (!btn) return;
    const grid = document.getElementById(btn.dataset.grid);
    if (!grid) return;
    fillAll(grid);
    const blob = new Blob([gridToSvg(grid)], { type: "image/svg+xml" });
    const a = document.createElement("a");
    a.href = URL.createObjectURL(blob);
    a.download = `${fileName(btn.dataset.name || btn.dataset.grid)}.svg`;
    document.body.appendChild(a);
    a.click();
    setTimeout(() => { URL.revokeObjectURL(a.href); a.remove(); }, 0);
  });
  window.layoutlabSvg = (id) => { const g = document.getElementById(id); fillAll(g); return gridToSvg(g); };

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

  // ---- grid tools: zoom, fit, full screen; what a cell shows and how it is coloured ---------------------------
  const ZOOMS = [0.1, 0.15, 0.2, 0.25, 0.33, 0.5, 0.67, 0.8, 1, 1.25, 1.5, 2];
  function setZoom(grid, z) {
    grid.dataset.z = String(z);
    grid.style.zoom = z === 1 ? "" : String(z);
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
      availW = Math.min(window.innerWidth, box.right) - wrap.getBoundingClientRect().left - (card ? card.offsetWidth + 16 : 0) - 4;
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
    restyle(grid);
  });

  // ---- a search box filtering a long <select> (data-filter-for = the select's id): every word must occur in the
  // option's name (case-insensitive; "16x8x16 f16" finds SM80_16x8x16_F32F16F16F32_TN); the first match is chosen
  // and the select's form updates as if picked by hand. Captured here so the box's own typing submits nothing.
  document.addEventListener("input", (ev) => {
    const box = ev.target;
    if (!box.dataset || box.dataset.filterFor === undefined) return;
    ev.stopPropagation();
    const sel = document.getElementById(box.dataset.filterFor);
    if (!sel) return;
    const words = box.value.toLowerCase().split(/\s+/).filter(Boolean);
    let first = null, count = 0;
    for (const opt of sel.options) {
      const name = opt.textContent.toLowerCase();
      const hit = words.every((w) => name.includes(w));
      opt.hidden = !hit;
      opt.disabled = !hit;
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

  // ---- deferred tiles: a big grid's cold tiles arrive empty (data-i0 = first row) with the cells as JSON
  // (app/services/grid.py GridView.data_json); fill() writes the same markup the server writes for a warm tile.
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
    if (tile.dataset.i0 === undefined || tile.firstChild) return;
    const grid = tile.closest(".grid");
    const d = grid && dataFor(grid);
    if (!d) return;
    const i0 = Number(tile.dataset.i0), j0 = Number(tile.dataset.j);
    const rows = Number(grid.dataset.rows), cols = Number(grid.dataset.cols);
    const i1 = Math.min(rows, i0 + 16), j1 = Math.min(cols, j0 + 16);
    const out = [];
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
    if (grid.dataset.label || grid.dataset.colour) {
      const cells = [];
      for (const row of tile.children) for (let k = 0; k < row.children.length; k++) cells.push([row.children[k], Number(row.dataset.i), j0 + k]);
      restyle(grid, cells);
    }
  }
  // every tile of a grid filled (SVG export, thread isolation, find-in-page)
  const fillAll = (grid) => { for (const t of grid.querySelectorAll(".gt[data-i0]")) fill(t); };
  window.layoutlabFillAll = fillAll;

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
