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
