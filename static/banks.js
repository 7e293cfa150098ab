// The swizzle & banks lab's controls: the swizzle presets follow the element size picked (before the server answers,
// and while an analysis fails), a preset click keeps everything else the learner typed, and the ldmatrix controls
// (.x1/.x2/.x4, .trans) switch the access to ldmatrix when it is another kind. Delegated from `document`: htmx swaps
// need nothing.
"use strict";
(() => {
  const form = () => document.getElementById("banks-form");
  const data = () => {
    const box = document.getElementById("sw-presets");
    try { return JSON.parse((box && box.dataset.all) || "{}"); } catch (e) { return {}; }
  };

  // The permalink of the form as it stands, with `swizzle` replaced.
  function hrefWith(swizzle) {
    const f = form();
    const q = new URLSearchParams();
    for (const [k, v] of new FormData(f)) {
      if (k === "swizzle") continue;
      if ((k === "vector" && v === "1") || (k === "num" && v === "4") || (k === "compare" && v === "1")) continue;
      q.append(k, v);
    }
    if (swizzle) q.set("swizzle", swizzle);
    return `/banks?${q}`;
  }

  function link(label, swizzle) {
    const a = document.createElement("a");
    a.href = hrefWith(swizzle);
    a.dataset.swizzle = swizzle;
    a.textContent = swizzle ? `${swizzle} · ${label}` : label;
    return a;
  }

  // Rebuild the preset links and the swizzle field's suggestions for element size `e`.
  function showPresets(e) {
    const list = data()[String(e)] || [];
    const box = document.getElementById("sw-presets");
    if (box) {
      const head = box.querySelector(".muted");
      if (head) head.textContent = `Swizzle presets for ${e}-byte elements:`;
      box.replaceChildren(...[head, link("none", ""), ...list.map(([label, s]) => link(label, s))].filter(Boolean));
      box.dataset.e = String(e);
    }
    const dl = document.getElementById("swz-presets");
    if (dl) dl.replaceChildren(...list.map(([label, s]) => { const o = document.createElement("option"); o.value = s; o.textContent = label; return o; }));
  }

  function refreshHrefs() {
    for (const a of document.querySelectorAll("#sw-presets a[data-swizzle]")) a.href = hrefWith(a.dataset.swizzle);
  }

  function submit() {
    const f = form();
    if (window.htmx) window.htmx.trigger(f, "submit"); else f.requestSubmit();
  }

  document.addEventListener("click", (ev) => {
    const a = ev.target.closest && ev.target.closest("#sw-presets a[data-swizzle]");
    if (!a || !form() || ev.button !== 0 || ev.metaKey || ev.ctrlKey || ev.shiftKey) return;
    ev.preventDefault();
    document.getElementById("swz").value = a.dataset.swizzle;
    refreshHrefs();
    submit();
  });

  document.addEventListener("input", (ev) => {
    const t = ev.target;
    if (!form() || !form().contains(t)) return;
    if (t.id === "eb") showPresets(t.value);
    if (t.id === "ldm-num" || t.id === "ldm-trans") {
      const acc = document.getElementById("acc");
      if (!/^\s*ldmatrix\s*:/i.test(acc.value)) acc.value = "ldmatrix:0,0";
    }
    refreshHrefs();
  }, true);

  // After a swap the server's presets are current; keep their links pointing at what is typed now.
  document.addEventListener("htmx:afterSettle", () => { if (form()) refreshHrefs(); });
})();
