// LayoutLab page behaviour: hover cards, linked highlighting, SVG export, copy buttons, thread isolation.
// Everything is delegated from `document`, so grids swapped in by htmx work without re-binding.
(function () {
  "use strict";
  const metaCache = new WeakMap();

  function metaFor(table) {
    const script = document.querySelector(`script.grid-meta[data-for="${table.id}"]`);
    if (!script) return null;
    if (!metaCache.has(script)) metaCache.set(script, JSON.parse(script.textContent));
    return metaCache.get(script);
  }

  function cellPos(td) {
    const tr = td.parentElement;
    return { i: tr.sectionRowIndex, j: td.cellIndex - 1 };
  }

  function cellAt(table, i, j) {
    const tr = table.tBodies[0].rows[i];
    return tr ? tr.cells[j + 1] : null;
  }

  function cellsWhere(table, pred) {
    const out = [];
    const rows = table.tBodies[0].rows;
    for (let i = 0; i < rows.length; i++) {
      const cells = rows[i].cells;
      for (let j = 1; j < cells.length; j++) if (pred(cells[j], i, j - 1)) out.push(cells[j]);
    }
    return out;
  }

  const esc = (s) => String(s).replace(/[&<>"]/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;" }[c]));

  // ---- hover card: coordinates and each mode's contribution -------------------------------------------
  function describe(meta, i, j, td) {
    const rows = meta.rows;
    const idx = meta.rank <= 1 ? j : i + rows * j;
    const lines = [];
    lines.push(`<b>L(${idx}) = ${esc(td.textContent)}</b>`);
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

  let lit = [];
  function clearLit() {
    for (const el of lit) el.classList.remove("hl", "src");
    lit = [];
  }

  function link(meta, td, i, j) {
    if (!meta.links) return;
    const idx = meta.rank <= 1 ? j : i + meta.rows * j;
    const value = Number(td.textContent);
    for (const l of meta.links) {
      const other = document.getElementById(l.to);
      if (!other) continue;
      const om = metaFor(other);
      const orows = Number(other.dataset.rows);
      const oidx = (c, a, b) => (om && om.rank <= 1 ? b : a + orows * b);
      let hits = [];
      if (l.by === "offset") hits = cellsWhere(other, (c) => Number(c.textContent) === value);
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

  document.addEventListener("mouseover", (ev) => {
    const td = ev.target.closest && ev.target.closest("table.grid td");
    if (!td) return;
    const table = td.closest("table.grid");
    const meta = metaFor(table);
    if (!meta) return;
    const { i, j } = cellPos(td);
    clearLit();
    td.classList.add("hl");
    lit.push(td);
    if (meta.hover && meta.colCrd) {
      const card = document.getElementById(meta.hover);
      if (card) card.innerHTML = describe(meta, i, j, td);
    }
    link(meta, td, i, j);
  });
  document.addEventListener("mouseout", (ev) => {
    if (ev.target.closest && ev.target.closest("table.grid td") && !ev.relatedTarget?.closest?.("table.grid td")) clearLit();
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

  // ---- SVG export --------------------------------------------------------------------------------------------
  function gridToSvg(table) {
    const W = 44, H = 22, pad = 28;
    const rows = table.tBodies[0].rows;
    const nrows = rows.length;
    const ncols = nrows ? rows[0].cells.length - 1 : 0;
    const out = [];
    const width = pad + ncols * W + 2, height = pad + nrows * H + 2;
    out.push(`<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" font-family="monospace" font-size="11">`);
    out.push(`<rect width="${width}" height="${height}" fill="#fff"/>`);
    for (let j = 0; j < ncols; j++) out.push(`<text x="${pad + j * W + W / 2}" y="${pad - 8}" text-anchor="middle" fill="#666">${j}</text>`);
    for (let i = 0; i < nrows; i++) {
      const y = pad + i * H;
      out.push(`<text x="${pad - 6}" y="${y + H / 2 + 4}" text-anchor="end" fill="#666">${i}</text>`);
      const cells = rows[i].cells;
      for (let j = 1; j < cells.length; j++) {
        const c = cells[j];
        const x = pad + (j - 1) * W;
        const fill = getComputedStyle(c).backgroundColor;
        out.push(`<rect x="${x}" y="${y}" width="${W}" height="${H}" fill="${fill}" stroke="#999" stroke-width="0.5"/>`);
        out.push(`<text x="${x + W / 2}" y="${y + H / 2 + 4}" text-anchor="middle">${esc(c.textContent)}</text>`);
        const lv = /\bl([123])\b/.exec(c.className);
        if (lv) out.push(`<line x1="${x}" y1="${y}" x2="${x}" y2="${y + H}" stroke="#222" stroke-width="${lv[1]}"/>`);
      }
      const tv = /\bt([123])\b/.exec(rows[i].className);
      if (tv) out.push(`<line x1="${pad}" y1="${y}" x2="${pad + ncols * W}" y2="${y}" stroke="#222" stroke-width="${tv[1]}"/>`);
    }
    out.push("</svg>");
    return out.join("\n");
  }

  document.addEventListener("click", (ev) => {
    const btn = ev.target.closest && ev.target.closest(".svg-export");
    if (!btn) return;
    const table = document.getElementById(btn.dataset.grid);
    if (!table) return;
    const blob = new Blob([gridToSvg(table)], { type: "image/svg+xml" });
    const a = document.createElement("a");
    a.href = URL.createObjectURL(blob);
    a.download = `${btn.dataset.grid}.svg`;
    document.body.appendChild(a);
    a.click();
    setTimeout(() => { URL.revokeObjectURL(a.href); a.remove(); }, 0);
  });
  window.layoutlabSvg = (id) => gridToSvg(document.getElementById(id));

  // ---- TV atlas: isolate one thread's cells ------------------------------------------------------------
  document.addEventListener("click", (ev) => {
    const btn = ev.target.closest && ev.target.closest(".threads button[data-thread]");
    if (!btn) return;
    const box = btn.closest(".threads");
    const table = document.getElementById(box.dataset.grid);
    const on = btn.getAttribute("aria-pressed") !== "true";
    for (const b of box.querySelectorAll("button")) b.setAttribute("aria-pressed", "false");
    const t = btn.dataset.thread;
    const meta = metaFor(table);
    cellsWhere(table, (c, i, j) => {
      const mine = meta && meta.threads && String(meta.threads[i][j]) === t;
      c.classList.toggle("dim", on && !mine);
      return false;
    });
    btn.setAttribute("aria-pressed", on ? "true" : "false");
  });
})();
