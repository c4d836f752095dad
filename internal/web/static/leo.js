// leo's UI works without this file; it only adds small comforts on top of
// htmx. No inline script anywhere: the Content-Security-Policy forbids it.
document.addEventListener("htmx:responseError", function (e) {
  var box = document.getElementById("htmx-error");
  if (!box) {
    box = document.createElement("p");
    box.id = "htmx-error";
    box.className = "flash flash-error";
    box.setAttribute("role", "alert");
    var main = document.querySelector("main");
    if (main) main.prepend(box);
  }
  var xhr = e.detail.xhr;
  box.textContent = "leo answered " + xhr.status + ": " + (xhr.responseText || "").slice(0, 500);
});

// The screen shows a pane's last lines: keep the newest in view after
// each refresh.
document.addEventListener("htmx:afterSwap", function () {
  var pre = document.getElementById("screen");
  if (pre) pre.scrollTop = pre.scrollHeight;
});
document.addEventListener("DOMContentLoaded", function () {
  var pre = document.getElementById("screen");
  if (pre) pre.scrollTop = pre.scrollHeight;
});

// The conversation (docs/web.md, "The conversation") is rendered by the
// server and swapped in whole on its events. The newest turn is at the
// bottom: keep it in view unless the reader scrolled up, and keep the
// tools a reader unfolded (or folded) as they were.
(function () {
  var kept = null; // {bottom: bool, top: number, open: {fold: bool}} across a swap

  function turns() {
    return document.querySelector("#conversation ol.turns");
  }

  function toBottom() {
    var ol = turns();
    if (ol) ol.scrollTop = ol.scrollHeight;
  }

  document.addEventListener("htmx:beforeSwap", function (e) {
    var t = e.detail.target;
    if (!t || t.id !== "conversation") return;
    var ol = turns();
    kept = { bottom: !ol || ol.scrollHeight - ol.scrollTop - ol.clientHeight < 24, top: ol ? ol.scrollTop : 0, open: {} };
    Array.prototype.forEach.call(t.querySelectorAll("details[data-fold]"), function (d) {
      kept.open[d.getAttribute("data-fold")] = d.open;
    });
  });

  document.addEventListener("htmx:afterSwap", function () {
    if (!kept) return;
    var k = kept;
    kept = null;
    var conv = document.getElementById("conversation");
    if (!conv) return;
    Array.prototype.forEach.call(conv.querySelectorAll("details[data-fold]"), function (d) {
      var f = d.getAttribute("data-fold");
      if (Object.prototype.hasOwnProperty.call(k.open, f)) d.open = k.open[f];
    });
    if (k.bottom) toBottom();
    else if (turns()) turns().scrollTop = k.top;
  });

  document.addEventListener("DOMContentLoaded", toBottom);
})();

// Live pages (docs/web.md, "Live pages"). A page whose parts carry
// data-live (the agent list, the task list, an agent's details) opens the
// daemon's event stream (GET /web/events, the login cookie) and fetches a
// part again (its data-live URL, swapped by htmx) when an event of one of
// its data-live-on types arrives — about its data-live-agent, when it
// names one. EventSource reconnects by itself and sends Last-Event-ID, so
// the daemon replays what the page missed; a "stream.behind" (the daemon
// no longer has all of it) fetches every part. Should the stream be
// refused (the login ended, a proxy that does not pass it), the parts are
// fetched every 3 s until it opens again. A hidden tab lets its stream go
// (unless notifications are on) and catches up when shown. <html
// data-stream> says how the stream is: "connecting", "open", "closed" or
// "paused".
//
// Notifications are opt-in: the Notify me button asks the browser's
// permission, and only after that click does an agent entering
// needs_input, errored or limited show a notification. Nothing is asked
// or shown without the click; the choice is kept in localStorage.
(function () {
  var EVENTS = ["agent.state", "agent.attention", "message.queued", "message.delivered", "message.failed",
    "turn.started", "turn.ended", "task.run.started", "task.run.ended", "config.reloaded",
    "daemon.starting", "daemon.stopping", "problem", "stream.behind", "stream.dropped"];
  var NOTIFY = { needs_input: "needs input", errored: "errored", limited: "is limited" };
  var OPT_KEY = "leo.notify";
  var FALLBACK_MS = 3000;
  var SETTLE_MS = 1000, SETTLE_TRIES = 10;

  var source = null;
  var lastId = ""; // the newest event's id: where a new stream starts
  var retries = 0;
  var retryTimer = null;
  var fallback = null;
  var busy = {}; // part id → {again: bool} while its fetch runs
  // known is each agent's attention as this page last saw it ("state|prompt
  // id"): a notification is for a change, not for a state already shown.
  var known = {};
  // optMemo is the opt-in as last set here (null: read localStorage).
  var optMemo = null;

  function parts() {
    return Array.prototype.slice.call(document.querySelectorAll("[data-live][id]"));
  }

  function setStream(state) {
    document.documentElement.setAttribute("data-stream", state);
  }

  // refresh fetches a part again: one fetch at a time, and one more after
  // it when events came meanwhile, so a burst costs two fetches at most.
  function refresh(el) {
    var id = el.id;
    if (busy[id]) {
      busy[id].again = true;
      return;
    }
    busy[id] = { again: false };
    var finish = function () {
      var again = busy[id] && busy[id].again;
      delete busy[id];
      var now = document.getElementById(id);
      if (again && now) refresh(now);
      else if (now) settle(now);
    };
    // Its own source: htmx syncs the requests of one element, and two
    // parts fetched on one event must not drop each other.
    htmx.ajax("GET", el.getAttribute("data-live"), { source: el, target: "#" + id, swap: "outerHTML" }).then(finish, finish);
  }

  // settle looks again, a few times a second apart, at a part that shows
  // a turn running (data-running) while its agent is no longer working:
  // the harness writes its record on its own schedule (claude after its
  // Stop hook ran), so the turn's end may reach the record after the
  // event that said so, and no further event comes.
  var settles = {};
  function settle(el) {
    var id = el.id;
    var agent = el.getAttribute("data-live-agent");
    var state = (known[agent] || "").split("|")[0];
    if (!el.hasAttribute("data-running") || !state || state === "working" || state === "needs_input") {
      delete settles[id];
      return;
    }
    settles[id] = (settles[id] || 0) + 1;
    if (settles[id] > SETTLE_TRIES) return;
    setTimeout(function () {
      var now = document.getElementById(id);
      if (now) refresh(now);
    }, SETTLE_MS);
  }

  function wants(el, ev) {
    var on = (el.getAttribute("data-live-on") || "").split(" ");
    if (on.indexOf(ev.type) < 0) return false;
    var agent = el.getAttribute("data-live-agent");
    return !agent || !ev.agent || ev.agent === agent;
  }

  function onEvent(msg) {
    var ev;
    try {
      ev = JSON.parse(msg.data);
    } catch (e) {
      return;
    }
    if (!ev || typeof ev !== "object") return;
    if (msg.lastEventId) lastId = msg.lastEventId;
    if (!ev.type) ev.type = msg.type;
    if (ev.type === "agent.attention") notifyFor(ev);
    if (ev.type === "agent.state" && ev.state !== "running") delete known[ev.agent];
    parts().forEach(function (el) {
      if (ev.type === "stream.behind" || wants(el, ev)) refresh(el);
    });
  }

  function startFallback() {
    if (fallback) return;
    fallback = setInterval(function () { parts().forEach(refresh); }, FALLBACK_MS);
  }

  function stopFallback() {
    if (fallback) clearInterval(fallback);
    fallback = null;
  }

  function connect() {
    retryTimer = null;
    if (source || !parts().length || !window.EventSource || !window.htmx) return;
    setStream("connecting");
    // The browser sends Last-Event-ID when it reconnects a stream itself;
    // a stream this page opens anew says where to start.
    var es = new EventSource("/web/events" + (lastId ? "?since=" + encodeURIComponent(lastId) : ""));
    source = es;
    EVENTS.forEach(function (t) { es.addEventListener(t, onEvent); });
    es.onmessage = onEvent;
    es.onopen = function () {
      retries = 0;
      stopFallback();
      setStream("open");
      // What changed between the page's render and now is in no event
      // this stream will send: fetch the parts once.
      parts().forEach(refresh);
    };
    es.onerror = function () {
      if (es.readyState !== EventSource.CLOSED) {
        setStream("connecting"); // the browser reconnects, with Last-Event-ID
        return;
      }
      // Refused for good (not a stream): poll, and try again later.
      setStream("closed");
      source = null;
      startFallback();
      retries = Math.min(retries + 1, 4);
      retryTimer = setTimeout(connect, FALLBACK_MS * Math.pow(2, retries - 1));
    };
  }

  // A browser holds at most six connections to one server, and each tab's
  // stream keeps one: a hidden tab lets its stream go, unless it is there
  // to notify, and starts again where it left off when shown.
  function onVisibility() {
    if (document.hidden && !notifying()) {
      if (source) source.close();
      source = null;
      stopFallback();
      if (retryTimer) clearTimeout(retryTimer);
      retryTimer = null;
      if (parts().length) setStream("paused");
    } else if (!document.hidden && !source && !retryTimer) {
      connect();
    }
  }

  // seed records the attention the page was rendered with, so that an
  // event restating it notifies nobody. Only at load: afterwards the events
  // say what changed (a part fetched again may show a change before its
  // event arrives, which must still notify).
  function seed(root) {
    var els = root.querySelectorAll ? Array.prototype.slice.call(root.querySelectorAll("[data-agent][data-attention]")) : [];
    if (root.hasAttribute && root.hasAttribute("data-attention") && root.hasAttribute("data-live-agent")) {
      known[root.getAttribute("data-live-agent")] = root.getAttribute("data-attention") + "|" + (root.getAttribute("data-prompt") || "");
    }
    els.forEach(function (el) {
      known[el.getAttribute("data-agent")] = el.getAttribute("data-attention") + "|" + (el.getAttribute("data-prompt") || "");
    });
  }

  function optedIn() {
    try {
      return window.localStorage.getItem(OPT_KEY) === "on";
    } catch (e) {
      return false;
    }
  }

  function setOpt(on) {
    try {
      if (on) window.localStorage.setItem(OPT_KEY, "on");
      else window.localStorage.removeItem(OPT_KEY);
    } catch (e) { /* storage refused: the choice lasts this page */ }
    optMemo = on;
  }

  function notifying() {
    var on = optMemo === null ? optedIn() : optMemo;
    return on && window.Notification && Notification.permission === "granted";
  }

  function notifyFor(ev) {
    var a = ev.attention;
    var key = a ? a.state + "|" + (a.prompt && a.prompt.id ? a.prompt.id : "") : "";
    var prev = known[ev.agent];
    known[ev.agent] = key;
    if (!a || !NOTIFY[a.state] || prev === key || !notifying()) return;
    // errored again, limited again: not a new need. Another prompt is.
    if (prev && prev.split("|")[0] === a.state && a.state !== "needs_input") return;
    var body = (a.prompt && a.prompt.text) || a.detail || "";
    if (body.length > 300) body = body.slice(0, 299) + "…";
    var n = new Notification("leo: " + ev.agent + " " + NOTIFY[a.state], { body: body, tag: "leo-" + ev.agent });
    n.onclick = function () {
      window.focus();
      location.href = "/web/agents/" + encodeURIComponent(ev.agent);
      n.close();
    };
  }

  function setupButton() {
    var b = document.getElementById("notify-toggle");
    if (!b || !window.Notification || !parts().length) return;
    var label = function () {
      var p = Notification.permission;
      b.disabled = p === "denied";
      if (p === "denied") {
        b.textContent = "Notifications blocked";
        b.title = "The browser blocks notifications from this site: allow them in its site settings";
        b.setAttribute("aria-pressed", "false");
      } else if (notifying()) {
        b.textContent = "Notifications on";
        b.title = "Click to stop notifications";
        b.setAttribute("aria-pressed", "true");
      } else {
        b.textContent = "Notify me";
        b.title = "Show a notification when an agent needs input, errors or is limited";
        b.setAttribute("aria-pressed", "false");
      }
    };
    b.addEventListener("click", function () {
      if (notifying()) {
        setOpt(false);
        label();
        return;
      }
      var done = false;
      var answered = function (p) {
        if (done) return;
        done = true;
        setOpt(p === "granted");
        label();
      };
      var asked = Notification.requestPermission(answered); // older Safari: the callback
      if (asked && asked.then) asked.then(answered);
    });
    b.hidden = false;
    label();
  }

  document.addEventListener("DOMContentLoaded", function () {
    parts().forEach(seed);
    setupButton();
    connect();
    document.addEventListener("visibilitychange", onVisibility);
  });
})();
