// Memory Portal's script for panels, editors and downloads, loaded by base.html beside
// feedback.js (toasts, failures, busy regions; no inline script: CSP). Each part below is
// independent: an entry's actions menu, keyboard and focus (panels, editors, leaving the page
// with something typed), download and import progress, selecting entries.

// An entry's actions (memory page). Each entry carries one "Actions" link: without
// JavaScript, the entry's own page (its editor, with Move or copy and Delete). Here it is a
// menu button opening the page's one menu (<template id="entry-actions">, memory.html),
// a copy filled for that entry and put after the link: Edit and Move or copy open in the
// entry's place, Delete submits the page's one delete form. One menu is open at a time.
// Keyboard as a menu button: Enter, Space or Down opens it on its first item, Up on its last;
// Down, Up, Home and End move in it; Escape closes it and goes back to the link; Tab closes
// it and goes on from the link. A click elsewhere closes it.
(function () {
  "use strict";
  var MENU = "entry-actions-menu";

  var MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August",
    "September", "October", "November", "December"];

  function two(n) {
    return (n < 10 ? "0" : "") + n;
  }

  // An entry's time comes without its exact time on hover (a title on every entry was a
  // tenth of a page); it is put here, as when.html writes it: the portal's times are UTC
  // (settings.TIME_ZONE). Without JavaScript the exact time is on the entry's own page.
  function exact(time) {
    var d = new Date(time.dateTime);
    time.title = d.getUTCDate() + " " + MONTHS[d.getUTCMonth()] + " " + d.getUTCFullYear() +
      ", " + two(d.getUTCHours()) + ":" + two(d.getUTCMinutes()) + ":" + two(d.getUTCSeconds()) + " UTC";
  }

  // Links rendered without knowing about this script (cached cards, swapped pages) become
  // menu buttons, and their entries' times get their exact time.
  function upgrade() {
    document.querySelectorAll("a.entry-actions:not([aria-haspopup])").forEach(function (link) {
      link.setAttribute("role", "button");
      link.setAttribute("aria-haspopup", "menu");
      link.setAttribute("aria-expanded", "false");
      link.classList.add("secondary", "outline");
    });
    document.querySelectorAll("li.entry header time:not([title])").forEach(exact);
  }

  function items(menu) {
    return Array.prototype.slice.call(menu.querySelectorAll("[role='menuitem']"));
  }

  function close(backToLink) {
    var menu = document.getElementById(MENU);
    if (!menu) return;
    var link = menu.previousElementSibling;
    menu.remove();
    link.setAttribute("aria-expanded", "false");
    link.removeAttribute("aria-controls");
    if (backToLink) link.focus();
  }

  function open(link, onLast) {
    var template = document.getElementById("entry-actions");
    var entry = link.closest("li.entry");
    if (!template || !entry) return;
    close(false);
    var index = link.pathname.split("/").pop(); // the entry's own page: <memory>/<index>
    if (!/^\d+$/.test(index)) {
      window.location.assign(link.href); // not an entry's own page: go where it leads
      return;
    }
    var name = link.getAttribute("aria-label").replace(/^Actions for /, "");
    var menu = template.content.firstElementChild.cloneNode(true);
    menu.id = MENU;
    menu.setAttribute("aria-label", link.getAttribute("aria-label"));
    items(menu).forEach(function (item) {
      item.setAttribute("aria-label", item.textContent + " " + name);
      if (item.matches("button")) {
        item.value = index;
        return;
      }
      var url = new URL(item.getAttribute("href"), window.location.href);
      url.searchParams.set("index", index);
      item.setAttribute("href", url.pathname + url.search);
      item.setAttribute("hx-get", url.pathname + url.search);
      item.setAttribute("hx-target", "#" + entry.id);
    });
    link.after(menu);
    link.setAttribute("aria-expanded", "true");
    link.setAttribute("aria-controls", MENU);
    if (window.htmx) window.htmx.process(menu);
    var all = items(menu);
    all[onLast ? all.length - 1 : 0].focus();
  }

  function plainClick(event) {
    return event.button === 0 && !(event.metaKey || event.ctrlKey || event.shiftKey || event.altKey);
  }

  document.addEventListener("click", function (event) {
    var link = event.target.closest("a.entry-actions");
    if (link && plainClick(event)) {
      event.preventDefault();
      if (link.getAttribute("aria-expanded") === "true") close(true);
      else open(link, false);
    } else if (!event.target.closest("#" + MENU)) {
      close(false);
    }
  });

  // Registered before the page's other keys (below): Escape in the menu is the menu's.
  document.addEventListener("keydown", function (event) {
    var link = event.target.closest && event.target.closest("a.entry-actions");
    if (link && (event.key === "ArrowDown" || event.key === "ArrowUp")) {
      event.preventDefault();
      open(link, event.key === "ArrowUp");
      return;
    }
    var menu = event.target.closest && event.target.closest("#" + MENU);
    if (!menu) return;
    var all = items(menu);
    var at = all.indexOf(event.target);
    var to = { ArrowDown: at + 1, ArrowUp: at - 1, Home: 0, End: all.length - 1 }[event.key];
    if (to !== undefined) {
      event.preventDefault();
      all[(to + all.length) % all.length].focus();
    } else if (event.key === "Escape") {
      event.preventDefault();
      close(true);
    } else if (event.key === "Tab") {
      close(true); // the Tab itself then moves on from the link
    }
  });

  upgrade();
  document.addEventListener("htmx:afterSettle", upgrade);
})();

// Keyboard and focus.
// - A link that looks like a button (role="button") or is a menu's item works with Space, as
//   a button does.
// - After a swap that removed the focused control (Undo, Clear, an import step), focus
//   goes to the new content: its [autofocus] element, else its first heading, else the
//   swapped region itself, so keyboard and screen-reader users carry on from the result.
// - A panel opened in place (Add a note, Clear) opens next to the control that opened it
//   (data-panel-after); Escape or its Cancel closes it and focus returns to that control.
//   That control pressed again while its panel is open goes to the panel as it is.
//   A panel holding something typed (Add a note) asks first before Escape, its Cancel or
//   another panel (Clear) throws it away, as an entry's editor does.
// - An entry's editor opened in place starts in its text field; Escape or its Cancel puts
//   the entry back (asking first if something was typed) and focus on its Actions button.
// - Following a link away from a typed note or a changed entry gets the browser's own
//   leave-page prompt.
(function () {
  "use strict";
  var opener = null;

  var LINK_BUTTON = "a[role='button'], a[role='menuitem']";
  document.addEventListener("keydown", function (event) {
    var link = event.target.closest && event.target.closest(LINK_BUTTON);
    if (link && event.key === " ") event.preventDefault(); // not a page scroll
  });
  document.addEventListener("keyup", function (event) {
    var link = event.target.closest && event.target.closest(LINK_BUTTON);
    if (link && event.key === " ") link.click();
  });

  function panel() {
    return document.getElementById("change-panel");
  }

  function focusOn(element) {
    if (!element) return;
    if (!element.matches("a[href], button, input, select, textarea, [tabindex]")) {
      element.setAttribute("tabindex", "-1");
    }
    element.focus();
  }

  // Where to carry on in new content: its [autofocus] field, else its first heading (not
  // one inside a rendered memory), else the region itself.
  function focusInto(region) {
    var heading = Array.prototype.find.call(
      region.querySelectorAll("h1, h2, h3"),
      function (h) { return !h.closest(".markdown-body"); }
    );
    focusOn(region.querySelector("[autofocus]") || heading || region);
  }

  // Whether any of the text fields in `element` passes `test`.
  function anyField(element, test) {
    return Array.prototype.some.call(element.querySelectorAll("textarea, input[type='text']"), test);
  }

  function filled(field) {
    return field.value.trim() !== "";
  }

  function edited(field) {
    return field.value !== field.defaultValue;
  }

  // The panel the user agreed to discard while it still shows (a form leaving the page
  // asked): leaving then asks nothing more, unless they type in it again.
  var discarded = null;

  // Whether the open panel must stay: it names its question in data-ask-discard, holds
  // text (typed, or given back by a refused send) and the user chose to keep it.
  function keepsTyped(open) {
    var question = open.getAttribute("data-ask-discard");
    if (!question || !anyField(open, filled)) return false;
    if (!window.confirm(question)) return true;
    discarded = open;
    return false;
  }

  function closePanel() {
    var open = panel();
    if (!open || !open.firstElementChild || !document.getElementById("memory-content")) return false;
    if (keepsTyped(open)) return true; // handled: the panel stays as it is
    var empty = document.createElement("div");
    empty.id = "change-panel";
    empty.className = "change-panel";
    open.replaceWith(empty);
    var back = opener && opener.isConnected ? opener : null;
    focusOn(back ? back.querySelector("button") || back : document.getElementById("main"));
    return true;
  }

  // Fetching an open panel again would swap an empty form over what is being typed in it
  // (a double click; Space landing just after the panel opened): keep it and go to it.
  // Any other request from outside the panel whose target holds it (another panel opened
  // over it, a region around it) asks first when it holds something typed; kept, the
  // request is not sent. Requests swapping elsewhere (an entry's Delete or Undo replaces
  // #memory-content, which the panel is not in) leave it alone and are not asked about.
  document.body.addEventListener("htmx:confirm", function (event) {
    var open = panel();
    var source = event.detail.elt;
    var target = event.detail.target;
    if (!open || !open.firstElementChild) return;
    var again = source === opener;
    var over = !open.contains(source) && target && target.contains(open);
    if (!again && !(over && keepsTyped(open))) return;
    event.preventDefault();
    focusInto(open);
  });

  // The same for a plain form posted from the page ("Mark as seen"): it loads a new page.
  document.addEventListener("submit", function (event) {
    var open = panel();
    var form = event.target;
    if (event.defaultPrevented || !open || !open.firstElementChild || open.contains(form)) return;
    // htmx forms ask in htmx:confirm; a download stays on the page.
    if (form.matches("[hx-get], [hx-post], [data-download]")) return;
    if (!keepsTyped(open)) return;
    event.preventDefault();
    focusInto(open);
  });

  document.body.addEventListener("htmx:beforeRequest", function (event) {
    var source = event.detail.elt;
    var slot = source.getAttribute && source.getAttribute("data-panel-after");
    if (slot && panel() && document.querySelector(slot)) {
      document.querySelector(slot).after(panel());
      opener = source;
    }
  });

  // An entry's editor opened in place (its Edit link swaps it in): the entry as it was, by
  // id, to put back on Escape or Cancel. Not after the memory changed meanwhile (the editor
  // then shows a warning): the entry kept here would be out of date.
  // "Move or copy" opens its panel the same way. Both open from the entry's Actions menu: the
  // entry is kept with the menu closed, and focus returns to its Actions button.
  var entriesBeforeEdit = {};
  document.body.addEventListener("htmx:beforeRequest", function (event) {
    var source = event.detail.elt;
    var opener = source.matches && source.matches("a.entry-edit, a.entry-move") ? source : null;
    var entry = opener && opener.closest("li.entry");
    if (!entry) return;
    var kept = entry.cloneNode(true);
    kept.querySelectorAll("#entry-actions-menu").forEach(function (menu) { menu.remove(); });
    kept.querySelectorAll("a.entry-actions").forEach(function (link) {
      link.setAttribute("aria-expanded", "false");
      link.removeAttribute("aria-controls");
    });
    entriesBeforeEdit[entry.id] = kept;
  });
  document.body.addEventListener("htmx:afterSwap", function () {
    document.querySelectorAll("li.entry-editing").forEach(function (editor) {
      if (editor.querySelector(".alert-warning")) delete entriesBeforeEdit[editor.id];
    });
  });

  // An editor the portal gave back (a refused save, a preview) holds the user's text as its
  // default: any text in it counts. One just opened: only text changed since.
  function holdsChanges(editor) {
    return anyField(editor, editor.hasAttribute("data-given-back") ? filled : edited);
  }

  function closeEditor(from) {
    var editor = from.closest && from.closest("li.entry-editing");
    var entry = editor && entriesBeforeEdit[editor.id];
    if (!entry) return false;
    if (holdsChanges(editor) && !window.confirm("Discard your changes to this entry?")) return true;
    delete entriesBeforeEdit[editor.id];
    editor.replaceWith(entry);
    if (window.htmx) window.htmx.process(entry);
    focusOn(entry.querySelector("a.entry-actions") || entry);
    return true;
  }

  document.addEventListener("keydown", function (event) {
    if (event.key !== "Escape" || event.defaultPrevented) return;
    // The disclosure holding focus, else the header's menu when it is open over the page.
    var details = (event.target.closest && event.target.closest("details[open]")) ||
      document.querySelector(".site-menu[open]");
    if (details) {
      details.open = false;
      details.querySelector("summary").focus();
      return;
    }
    if (closeEditor(event.target) || closePanel()) event.preventDefault();
  });
  document.addEventListener("click", function (event) {
    var cancel = event.target.closest("[data-close-panel]");
    if (cancel && closePanel()) event.preventDefault();
    var cancelEdit = event.target.closest("[data-close-editor]");
    if (cancelEdit && closeEditor(cancelEdit)) event.preventDefault();
  });

  // Leaving the page by a link (the breadcrumb, the header) drops what is typed in the open
  // panel (one with data-ask-discard) or in an entry's editor, and a followed link leaves
  // before the page could ask: the browser's own leave-page prompt asks instead. Not while
  // that very panel or editor is being sent (its answer may load a page), not after the
  // user agreed to discard it, not for a download (the page stays), not when nothing is
  // typed (`holdsChanges`).
  var sent = null; // { form, editor: its editor's id, xhr } until the answer comes back
  var downloading = false; // a download was asked for: the prompt that follows is not one

  function sending(form, xhr) {
    var editor = form.closest("li.entry-editing");
    if (!editor && !form.closest("#change-panel")) return;
    sent = { form: form, editor: editor && editor.id, xhr: xhr };
  }

  function beingSent(element) {
    return sent !== null && sent.form.isConnected && element.contains(sent.form);
  }

  function wouldDropTyped() {
    var open = panel();
    var note = open && open !== discarded && open.hasAttribute("data-ask-discard") &&
      !beingSent(open) && anyField(open, filled);
    var editors = document.querySelectorAll("li.entry-editing");
    return note || Array.prototype.some.call(editors, function (editor) {
      return !beingSent(editor) && holdsChanges(editor);
    });
  }

  document.body.addEventListener("htmx:beforeRequest", function (event) {
    var source = event.detail.elt;
    if (source.matches && source.matches("form")) sending(source, event.detail.xhr);
  });
  // By its request: detail.elt is where htmx fires the event, an ancestor once the form
  // itself was swapped out.
  document.body.addEventListener("htmx:afterRequest", function (event) {
    if (!sent || event.detail.xhr !== sent.xhr) return;
    var xhr = event.detail.xhr;
    var leaves = xhr.getResponseHeader("HX-Redirect") ||
      xhr.getResponseHeader("HX-Refresh") === "true";
    if (leaves) return; // the page is about to go, with the form as sent
    var editor = sent.editor && document.getElementById(sent.editor);
    if (editor && editor.matches("li.entry-editing")) editor.setAttribute("data-given-back", "");
    sent = null;
  });
  document.addEventListener("submit", function (event) {
    var form = event.target;
    if (form.matches("[data-download]")) downloading = true;
    // A plain form loads a new page (htmx forms are sent in htmx:beforeRequest above).
    else if (!event.defaultPrevented && !form.matches("[hx-get], [hx-post]")) sending(form, null);
  });
  document.addEventListener("click", function (event) {
    if (event.target.closest("a[data-download]")) downloading = true;
  });
  // A download asked for without a prompt after it (a new tab, one already preparing) must
  // not silence the next one: the next key or pointer press starts afresh.
  ["keydown", "pointerdown"].forEach(function (type) {
    document.addEventListener(type, function () { downloading = false; }, true);
  });
  document.addEventListener("input", function (event) {
    if (discarded && discarded.contains(event.target)) discarded = null;
  });
  window.addEventListener("beforeunload", function (event) {
    var download = downloading;
    downloading = false;
    if (download || !wouldDropTyped()) return;
    event.preventDefault();
    event.returnValue = true; // browsers before preventDefault() was enough (Chrome 119)
  });

  // Where focus was when a request began (before hx-disabled-elt takes it from a disabled
  // button), and what its swap replaces (known once the answer may have retargeted it).
  var before = new WeakMap();
  document.body.addEventListener("htmx:beforeRequest", function (event) {
    before.set(event.detail.xhr, { focused: document.activeElement });
  });
  document.body.addEventListener("htmx:beforeSwap", function (event) {
    var was = before.get(event.detail.xhr);
    if (was) was.target = event.detail.target && event.detail.target.id;
  });
  document.body.addEventListener("htmx:afterSettle", function (event) {
    var was = before.get(event.detail.xhr);
    if (!was || !was.target) return;
    // Nothing had focus (a page load, a lazy card): leave it so.
    if (!was.focused || was.focused === document.body) return;
    var active = document.activeElement;
    if (active && active !== document.body && active.isConnected) return; // still somewhere
    var swapped = document.getElementById(was.target);
    if (swapped) focusInto(swapped);
  });
})();


// Progress for exports and imports.
//
// Downloads. A download can't show progress, and "Export everything" fetches every memory
// before the first byte. So a link or form marked data-download sends a one-off token;
// it reads "Preparing your download…" until the portal answers with a cookie carrying that
// token (set with the file), or two minutes pass. Once the download has begun, the control
// fires downloadStarted (support's request page then shows the export as handed over).
// Without JavaScript it simply downloads.
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
      var began = readyToken() === token;
      if (began || Date.now() - started > GIVE_UP_MS) {
        window.clearInterval(timer);
        document.cookie = COOKIE + "=; Max-Age=0; path=/; SameSite=Strict";
        control.textContent = label;
        control.removeAttribute("aria-busy");
        done();
        if (began) control.dispatchEvent(new CustomEvent("downloadStarted", { bubbles: true }));
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

  // <form data-download> (GET, or POST as support's export): the token goes into a hidden
  // field.
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

// Selecting entries (memory page, search results): a live "N selected" next to "Review
// selected", which waits for a first tick. Without JavaScript the button is always there
// and the preview says when nothing is chosen. The checkboxes belong to the form named by
// the count's data-selection-count (form="…"), wherever they sit on the page.
(function () {
  "use strict";

  function picked(form) {
    return Array.prototype.filter.call(form.elements, function (field) {
      return field.name === "pick" && field.checked;
    }).length;
  }

  function refresh() {
    document.querySelectorAll("[data-selection-count]").forEach(function (count) {
      var form = document.getElementById(count.getAttribute("data-selection-count"));
      if (!form) return;
      if (!count.hasAttribute("data-hint")) count.setAttribute("data-hint", count.textContent);
      var n = picked(form);
      var text = n ? n + (n === 1 ? " entry" : " entries") + " selected" : count.getAttribute("data-hint");
      if (count.textContent !== text) count.textContent = text;
      Array.prototype.forEach.call(form.elements, function (field) {
        if (field.hasAttribute("data-selection-submit")) field.disabled = n === 0;
      });
    });
  }

  document.addEventListener("change", function (event) {
    if (event.target.name === "pick") refresh();
  });
  document.addEventListener("DOMContentLoaded", refresh);
  document.addEventListener("htmx:afterSettle", refresh);
  window.addEventListener("pageshow", refresh);
})();

// Scripts run in this browser: the dashboard may then paint before the agents are listed
// and let its agents section fetch them (memory_ui/web/views/pages.py, SCRIPTS_COOKIE). A
// browser session cookie, so turning scripts off takes effect with the next session.
(function () {
  "use strict";
  var secure = window.location.protocol === "https:" ? "; Secure" : "";
  document.cookie = "portal_scripts=1; path=/; SameSite=Lax" + secure;
})();
