// Progressive enhancement only: every page and form works without this file.
// A form shows which button is working and ignores a second submit while the first is under way.
(function () {
  "use strict";
  document.addEventListener("submit", function (event) {
    var form = event.target;
    if (!(form instanceof HTMLFormElement) || form.method.toLowerCase() !== "post") {
      return;
    }
    if (form.dataset.submitting === "1") {
      event.preventDefault();
      return;
    }
    form.dataset.submitting = "1";
    var button = event.submitter;
    if (button) {
      button.setAttribute("aria-busy", "true");
    }
  });
  // Coming back through the history cache must not leave forms locked.
  window.addEventListener("pageshow", function () {
    document.querySelectorAll("form[data-submitting]").forEach(function (form) {
      delete form.dataset.submitting;
      form.querySelectorAll("[aria-busy]").forEach(function (b) { b.removeAttribute("aria-busy"); });
    });
  });
})();
