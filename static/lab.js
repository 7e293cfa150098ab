// GPU lab: show only the fieldsets of the chosen benchmark kind; show refused submissions (409 no worker, 422 bad
// parameters, 429 too many, 503 queue full) in the job card instead of dropping them (htmx swaps only 2xx answers).
(function () {
  function sync() {
    var sel = document.getElementById("lab-kind");
    if (!sel) return;
    document.querySelectorAll("fieldset[data-kind]").forEach(function (fs) {
      fs.hidden = fs.getAttribute("data-kind") !== sel.value;
    });
  }
  document.addEventListener("change", function (e) { if (e.target && e.target.id === "lab-kind") sync(); });
  document.addEventListener("DOMContentLoaded", sync);
  document.addEventListener("htmx:beforeSwap", function (e) {
    var status = e.detail.xhr.status;
    if ([409, 422, 429, 503].indexOf(status) >= 0 && e.detail.target && e.detail.target.id === "job") {
      e.detail.shouldSwap = true;
      e.detail.isError = false;
    }
  });
})();
