// GPU lab: show only the fieldsets of the chosen benchmark kind.
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
})();
