// ckpt ui keyboard navigation. The pages work without it: it only moves the focus.
//   j / k   next / previous item (timeline commit, session, hit, version, change)
//   Enter   open the focused item (the browser follows the focused link)
//   n / p   next / previous page (rel=next / rel=prev)
//   u       up: the parent in the breadcrumb
//   /       focus the search box
(function () {
  "use strict";
  function items() { return Array.prototype.slice.call(document.querySelectorAll("[data-nav]")); }
  var current = -1;
  function focusItem(i) {
    var list = items();
    if (list.length === 0) { return; }
    current = Math.max(0, Math.min(list.length - 1, i));
    var el = list[current];
    var link = el.matches("a") ? el : el.querySelector("a[href]");
    (link || el).focus();
    el.scrollIntoView({ block: "nearest" });
  }
  function follow(rel) {
    var l = document.querySelector('link[rel="' + rel + '"]');
    if (l) { window.location.href = l.getAttribute("href"); }
  }
  document.addEventListener("keydown", function (e) {
    if (e.ctrlKey || e.metaKey || e.altKey) { return; }
    var t = e.target;
    if (t && (t.tagName === "INPUT" || t.tagName === "SELECT" || t.tagName === "TEXTAREA" || t.isContentEditable)) {
      if (e.key === "Escape") { t.blur(); }
      return;
    }
    switch (e.key) {
      case "j": focusItem(current + 1); break;
      case "k": focusItem(current - 1); break;
      case "n": follow("next"); break;
      case "p": follow("prev"); break;
      case "u": {
        var crumbs = document.querySelectorAll(".crumbs a[href]");
        if (crumbs.length) { window.location.href = crumbs[crumbs.length - 1].getAttribute("href"); }
        break;
      }
      case "/": {
        var s = document.getElementById("quick-search");
        if (s) { s.focus(); s.select(); }
        break;
      }
      default: return;
    }
    e.preventDefault();
  });
  document.addEventListener("focusin", function (e) {
    var list = items();
    for (var i = 0; i < list.length; i++) {
      if (list[i] === e.target || list[i].contains(e.target)) { current = i; return; }
    }
  });
})();
