// Follows the repository: on each "change" from /events, fetch this page
// again and swap its main element. The static views work without it.
(function () {
  if (!window.EventSource || !window.DOMParser) return;
  var dot = document.getElementById("live");
  var es = new EventSource("/events");
  es.addEventListener("ready", function () { if (dot) dot.textContent = "● live"; });
  es.addEventListener("change", function () {
    fetch(location.href, { cache: "no-store" }).then(function (r) { return r.text(); }).then(function (html) {
      var doc = new DOMParser().parseFromString(html, "text/html");
      var next = doc.getElementById("main"), cur = document.getElementById("main");
      if (next && cur) cur.replaceWith(document.importNode(next, true));
    });
  });
  es.onerror = function () { if (dot) dot.textContent = "○ reconnecting"; };
})();
