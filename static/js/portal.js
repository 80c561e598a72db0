// Memory Portal: one global place for htmx failures and toast handling (no inline script: CSP).
(function () {
  "use strict";

  function toast(text, kind) {
    var region = document.getElementById("toasts");
    if (!region) return;
    var box = document.createElement("div");
    box.className = "toast toast-" + (kind || "info");
    var span = document.createElement("span");
    span.textContent = text;
    var close = document.createElement("button");
    close.type = "button";
    close.className = "toast-close";
    close.setAttribute("aria-label", "Dismiss message");
    close.textContent = "\u00d7";
    box.appendChild(span);
    box.appendChild(close);
    region.appendChild(box);
  }

  document.addEventListener("click", function (event) {
    var button = event.target.closest(".toast-close");
    if (button) button.closest(".toast").remove();
  });

  // Error responses that carry an HTML fragment are swapped in place (see htmx-config);
  // anything else would fail silently, so say so.
  document.body.addEventListener("htmx:responseError", function (event) {
    var xhr = event.detail.xhr;
    var type = xhr.getResponseHeader("Content-Type") || "";
    if (!xhr.responseText || type.indexOf("text/html") !== 0) {
      toast("Something went wrong (" + xhr.status + "). Please try again.", "error");
    }
  });
  document.body.addEventListener("htmx:sendError", function () {
    toast("The portal could not be reached. Check your connection and try again.", "error");
  });
  document.body.addEventListener("htmx:timeout", function () {
    toast("The request took too long. Please try again.", "error");
  });
})();
