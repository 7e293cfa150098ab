// Drill pages: the whiteboard clock, Ctrl+Enter to submit, focus on the verdict after an htmx answer. Hints need no
// script: the hint button is a form that POSTs /drills/hint (htmx swaps the hint list in), and that POST records it.
(function () {
  "use strict";

  function tick() {
    const clock = document.getElementById("wb-clock");
    if (!clock) return;
    const start = parseFloat(clock.dataset.start) * 1000;
    const s = Math.max(0, Math.floor((Date.now() - start) / 1000));
    clock.textContent = `${Math.floor(s / 60)}:${String(s % 60).padStart(2, "0")}`;
  }
  setInterval(tick, 1000);
  document.addEventListener("DOMContentLoaded", tick);

  document.addEventListener("keydown", (ev) => {
    if (ev.key === "Enter" && (ev.ctrlKey || ev.metaKey) && ev.target.id === "answer-input") {
      ev.preventDefault();
      const form = ev.target.form;
      if (form.requestSubmit) form.requestSubmit(); else form.submit();
    }
  });

  document.addEventListener("htmx:afterSwap", (ev) => {
    const target = ev.detail.target;
    if (target && target.id === "result") {
      const v = document.getElementById("verdict");
      if (v) v.scrollIntoView({ behavior: "smooth", block: "nearest" });
    }
  });
})();
