// GPU lab: show only the fieldsets of the chosen benchmark kind; show refused submissions (409 no worker, 422 bad
// parameters, 429 too many, 503 queue full) in the job card instead of dropping them (htmx swaps only 2xx answers).
(function () {
  function sync() {
    var sel = document.getElementById("lab-kind");
    if (!sel) return;
    document.querySelectorAll("fieldset[data-kind]").forEach(function (fs) {
      // a hidden fieldset is disabled too, so the form sends only the chosen kind's fields (transpose and GEMM
      // both have an "n")
      fs.hidden = fs.disabled = fs.getAttribute("data-kind") !== sel.value;
    });
    queueState(sel.value);
  }
  // The Queue button says why it cannot run a kind here: GPU kinds need a worker with a GPU; "compile only" needs
  // nvcc and a worker (any), or none where the server builds it itself (device status "compile_local").
  function queueState(kind) {
    var form = document.getElementById("lab-form");
    var btn = document.getElementById("queue-btn");
    var why = document.getElementById("queue-reason");
    if (!form || !btn || !why) return;
    var gpu = form.dataset.gpu === "1", workers = Number(form.dataset.workers), nvcc = form.dataset.nvcc === "1";
    var reason = "";
    if (kind === "compile_only") {
      if (!nvcc) reason = "Compile only needs nvcc, and it was not found on this machine.";
      else if (!workers && form.dataset.compileLocal !== "1") reason = "Compile only needs a worker to build on: none is running (start one with layoutlab worker).";
    } else if (!gpu) {
      reason = workers ? "This benchmark needs a GPU: no live worker has one. Compile only can still run."
        : "This benchmark needs a GPU worker: none is running, and this machine has no GPU.";
    }
    btn.disabled = reason !== "";
    btn.title = reason;
    why.textContent = reason;
  }
  document.addEventListener("change", function (e) {
    if (e.target && e.target.id === "lab-kind") sync();
    // a <select data-autosubmit> submits its form on change (no inline handlers: the CSP allows no inline script)
    if (e.target && e.target.hasAttribute && e.target.hasAttribute("data-autosubmit") && e.target.form) e.target.form.submit();
  });
  document.addEventListener("DOMContentLoaded", sync);
  // The history row of a job follows its card: when a card is swapped in (a poll, a submission, a cancel), the row
  // with the same job id takes the card's status and stage at once instead of at the history's next poll.
  function syncRow(card) {
    if (!card || !card.dataset || !card.dataset.job) return;
    var row = document.querySelector('#history tr[data-job="' + card.dataset.job + '"]');
    if (!row) return;
    var status = row.querySelector(".status"), stage = row.querySelector(".stage");
    if (status && status.textContent !== card.dataset.status) status.textContent = card.dataset.status;
    var cardStage = card.querySelector(".stage");
    if (stage) stage.textContent = cardStage ? cardStage.textContent : "";
  }
  function final(card) { return ["queued", "running"].indexOf(card.dataset.status) < 0; }
  document.addEventListener("htmx:afterSettle", function (e) {
    // after a history poll only a finished card speaks (a live card's next poll is at most a second away)
    var fromHistory = e.detail.elt && e.detail.elt.id === "history";
    document.querySelectorAll("#job article.job-card").forEach(function (card) {
      if (!fromHistory || final(card)) syncRow(card);
    });
  });
  document.addEventListener("htmx:beforeSwap", function (e) {
    var status = e.detail.xhr.status;
    if ([409, 422, 429, 503].indexOf(status) >= 0 && e.detail.target && e.detail.target.id === "job") {
      e.detail.shouldSwap = true;
      e.detail.isError = false;
    }
  });
})();
