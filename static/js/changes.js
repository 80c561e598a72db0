// Memory Portal: mark the region a change request will replace as busy while it runs, so
// screen readers wait for the result (no inline script: CSP).
(function () {
  "use strict";

  function mark(event, busy) {
    var source = event.detail.elt;
    var target = event.detail.target;
    if (!source || !source.closest || !source.closest("[data-changes]")) return;
    if (target && target.isConnected) target.setAttribute("aria-busy", busy);
  }

  document.body.addEventListener("htmx:beforeRequest", function (event) {
    mark(event, "true");
  });
  document.body.addEventListener("htmx:afterRequest", function (event) {
    mark(event, "false");
  });
})();
