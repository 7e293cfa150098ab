// Drill pages: the whiteboard clock, Ctrl+Enter to submit, and focus on the verdict after an htmx answer.
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
    if (ev.detail.target && ev.detail.target.id === "result") {
      const v = document.getElementById("verdict");
      if (v) v.scrollIntoView({ behavior: "smooth", block: "nearest" });
    }
  });
})();
