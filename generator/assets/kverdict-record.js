/* Record pages follow the palette chosen on the site's other pages (Material keeps it in localStorage under the
 * site's root path + ".__palette"), and their button switches it for every page. */
(function () {
  "use strict";
  var script = document.currentScript;
  var key = new URL(script.getAttribute("data-root") || "./", window.location.href).pathname + ".__palette";
  var PALETTES = {
    "default": { index: 0, color: { media: "(prefers-color-scheme: light)", scheme: "default", primary: "indigo", accent: "indigo" } },
    "slate": { index: 1, color: { media: "(prefers-color-scheme: dark)", scheme: "slate", primary: "indigo", accent: "indigo" } },
  };

  function stored() {
    try { var p = JSON.parse(window.localStorage.getItem(key)); return p && p.color && p.color.scheme; } catch (e) { return null; }
  }

  function current() {
    var set = document.documentElement.getAttribute("data-md-color-scheme");
    if (set) return set;
    return window.matchMedia && window.matchMedia("(prefers-color-scheme: dark)").matches ? "slate" : "default";
  }

  function apply() {
    var scheme = stored();
    if (scheme) document.documentElement.setAttribute("data-md-color-scheme", scheme);
  }

  apply();
  document.addEventListener("DOMContentLoaded", function () {
    var button = document.getElementById("palette");
    if (!button) return;
    function label() { button.textContent = current() === "slate" ? "light mode" : "dark mode"; }
    button.hidden = false;
    label();
    button.addEventListener("click", function () {
      var next = current() === "slate" ? "default" : "slate";
      try { window.localStorage.setItem(key, JSON.stringify(PALETTES[next])); } catch (e) { /* private mode: this page only */ }
      document.documentElement.setAttribute("data-md-color-scheme", next);
      label();
    });
  });
})();
