// What the page tells people while and after requests run: failures and toasts, and the
// region a change will replace marked busy. Loaded by base.html beside portal.js (no
// inline script: CSP); each part below is independent.

// htmx failures and toasts, in one global place. Toasts go away by themselves after a
// while (not errors: those stay until dismissed), wait while the pointer or focus is on
// them, and no more than three stack up.
(function () {
  "use strict";
  var SHOWN_MS = 8000;
  var MOST = 3;

  function region() {
    return document.getElementById("toasts");
  }

  function dismiss(box) {
    if (!box.isConnected) return;
    var hadFocus = box.contains(document.activeElement);
    box.remove();
    if (hadFocus) document.getElementById("main").focus();
  }

  function schedule(box) {
    if (box.dataset.scheduled || box.classList.contains("toast-error")) return;
    box.dataset.scheduled = "true";
    var timer = null;
    function start() { timer = window.setTimeout(function () { dismiss(box); }, SHOWN_MS); }
    function stop() { window.clearTimeout(timer); }
    box.addEventListener("mouseenter", stop);
    box.addEventListener("mouseleave", start);
    box.addEventListener("focusin", stop);
    box.addEventListener("focusout", start);
    start();
  }

  function tidy() {
    var toasts = region() ? region().querySelectorAll(".toast") : [];
    for (var i = 0; i < toasts.length - MOST; i++) toasts[i].remove();
    region() && region().querySelectorAll(".toast").forEach(schedule);
  }

  function toast(text, kind) {
    if (!region()) return;
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
    region().appendChild(box);
  }

  document.addEventListener("click", function (event) {
    var button = event.target.closest(".toast-close");
    if (button) dismiss(button.closest(".toast"));
  });
  // Messages arrive with the page and, for htmx, appended out of band.
  if (region()) new MutationObserver(tidy).observe(region(), { childList: true });
  tidy();

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

// Mark the region a change request will replace as busy while it runs, so screen readers
// wait for the result.
(function () {
  "use strict";

  // The region marked busy, per request: a refused form's answer may be swapped into
  // another place (HX-Retarget), and the region must not stay busy (Pico then hides and
  // stops wrapping its content).
  var marked = new WeakMap();

  document.body.addEventListener("htmx:beforeRequest", function (event) {
    var source = event.detail.elt;
    var target = event.detail.target;
    if (!source || !source.closest || !source.closest("[data-changes]") || !target) return;
    target.setAttribute("aria-busy", "true");
    marked.set(event.detail.xhr, target);
  });
  document.body.addEventListener("htmx:afterRequest", function (event) {
    var target = marked.get(event.detail.xhr);
    if (target && target.isConnected) target.setAttribute("aria-busy", "false");
  });
})();
