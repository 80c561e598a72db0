// Memory Portal's one script, loaded by base.html (no inline script: CSP). Each part below
// is independent: failures and toasts, busy regions during changes, download and import
// progress.

// htmx failures and toasts, in one global place.
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

// Mark the region a change request will replace as busy while it runs, so screen readers
// wait for the result.
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

// Progress for exports and imports.
//
// Downloads. A download can't show progress, and "Export everything" fetches every memory
// before the first byte. So a link or GET form marked data-download sends a one-off token;
// it reads "Preparing your download…" until the portal answers with a cookie carrying that
// token (set with the file), or two minutes pass. Without JavaScript it simply downloads.
//
// Forms marked data-busy-form are aria-busy while they submit, with or without htmx.
(function () {
  "use strict";
  var COOKIE = "download_ready";
  var GIVE_UP_MS = 120000;

  function readyToken() {
    var match = document.cookie.match(/(?:^|;\s*)download_ready=([A-Za-z0-9]+)/);
    return match ? match[1] : null;
  }

  function newToken() {
    var bytes = new Uint8Array(12);
    window.crypto.getRandomValues(bytes);
    return Array.prototype.map
      .call(bytes, function (b) { return ("0" + b.toString(16)).slice(-2); })
      .join("");
  }

  // Shows "Preparing…" on `control` until the download with `token` begins; `done` undoes
  // whatever carried the token.
  function preparing(control, token, done) {
    var label = control.textContent;
    control.setAttribute("aria-busy", "true");
    control.textContent = "Preparing your download…";
    var started = Date.now();
    var timer = window.setInterval(function () {
      if (readyToken() === token || Date.now() - started > GIVE_UP_MS) {
        window.clearInterval(timer);
        document.cookie = COOKIE + "=; Max-Age=0; path=/; SameSite=Strict";
        control.textContent = label;
        control.removeAttribute("aria-busy");
        done();
      }
    }, 300);
  }

  function plainClick(event) {
    return event.button === 0 && !(event.metaKey || event.ctrlKey || event.shiftKey || event.altKey);
  }

  // <a data-download>: the token goes into the link, which the browser reads after this.
  document.addEventListener("click", function (event) {
    var link = event.target.closest("a[data-download]");
    if (!link) return;
    if (link.getAttribute("aria-busy") === "true") {
      event.preventDefault(); // already preparing: don't start a second export
      return;
    }
    if (!plainClick(event)) return;
    var token = newToken();
    var url = new URL(link.href, window.location.href);
    url.searchParams.set("download_token", token);
    link.href = url.toString();
    preparing(link, token, function () {
      url.searchParams.delete("download_token");
      link.href = url.toString();
    });
  });

  // <form method="get" data-download>: the token goes into a hidden field.
  document.addEventListener("submit", function (event) {
    var form = event.target.closest("form[data-download]");
    if (!form) return;
    var button = event.submitter || form.querySelector("button");
    if (button && button.getAttribute("aria-busy") === "true") {
      event.preventDefault();
      return;
    }
    var field = document.createElement("input");
    field.type = "hidden";
    field.name = "download_token";
    field.value = newToken();
    form.appendChild(field);
    if (button) preparing(button, field.value, function () { field.remove(); });
  });

  document.addEventListener("submit", function (event) {
    var form = event.target.closest("form[data-busy-form]");
    if (!form) return;
    form.setAttribute("aria-busy", "true");
    var button = event.submitter || form.querySelector("button[type='submit']");
    if (button) button.setAttribute("aria-busy", "true");
  });

  function idle(root) {
    root.querySelectorAll("form[data-busy-form][aria-busy], form[data-busy-form] [aria-busy]")
      .forEach(function (element) { element.removeAttribute("aria-busy"); });
  }

  // htmx swaps a new form in on success and error alike; this covers a request that fails
  // without a swap. Coming back with the Back button shows the page as it was left.
  document.addEventListener("htmx:afterRequest", function () { idle(document); });
  window.addEventListener("pageshow", function () { idle(document); });
})();
