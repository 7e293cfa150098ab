// Drill pages: the whiteboard clock, Ctrl+Enter to submit, focus on the verdict after an htmx answer, and recording
// each hint the learner opens (POST /api/drills/{id}/hint) so the learning record knows about it.
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

  function recordHints(box) {
    const drill = box && box.dataset.drill;
    if (!drill) return;
    const levels = Array.from(box.querySelectorAll(".hint[data-level]")).map((h) => parseInt(h.dataset.level, 10));
    if (!levels.length) return;
    const level = Math.max(...levels);
    fetch(`/api/drills/${encodeURIComponent(drill)}/hint`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      credentials: "same-origin",
      body: JSON.stringify({ level: level }),
    }).catch(() => {});
  }

  document.addEventListener("htmx:afterSwap", (ev) => {
    const target = ev.detail.target;
    if (target && target.id === "result") {
      const v = document.getElementById("verdict");
      if (v) v.scrollIntoView({ behavior: "smooth", block: "nearest" });
    }
    if (target && target.id === "hint-box") recordHints(target);
  });
  document.addEventListener("DOMContentLoaded", () => recordHints(document.getElementById("hint-box")));
})();
