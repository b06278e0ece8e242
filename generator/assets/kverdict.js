/* KernelVerdict front end: Plotly charts, sortable tables and leaderboard filters.
 * Runs on every page view through Material's document$ (so it survives instant navigation),
 * re-colours charts when the palette toggles, and resizes charts when a tab becomes visible. */
(function () {
  "use strict";

  function dark() {
    return document.body.getAttribute("data-md-color-scheme") === "slate";
  }

  function themeLayout() {
    var fg = dark() ? "#e2e4e9" : "#1f2328";
    var grid = dark() ? "#3d444d" : "#e1e4e8";
    return {
      paper_bgcolor: "rgba(0,0,0,0)", plot_bgcolor: "rgba(0,0,0,0)",
      font: { color: fg }, "xaxis.gridcolor": grid, "yaxis.gridcolor": grid,
      "xaxis.zerolinecolor": grid, "yaxis.zerolinecolor": grid,
    };
  }

  function drawChart(el) {
    var data = document.getElementById("kv-data-" + el.getAttribute("data-chart"));
    if (!data || !window.Plotly) return;
    var fig = JSON.parse(data.textContent);
    var layout = Object.assign({ margin: { t: 20, r: 20, b: 50, l: 60 }, height: 380,
      legend: { orientation: "h", y: -0.2 } }, fig.layout || {});
    Plotly.newPlot(el, fig.data, layout, { responsive: true, displaylogo: false }).then(function () {
      Plotly.relayout(el, themeLayout());
    });
  }

  function recolour() {
    document.querySelectorAll(".kv-chart.js-plotly-plot").forEach(function (el) {
      Plotly.relayout(el, themeLayout());
    });
  }

  function resizeVisible(root) {
    (root || document).querySelectorAll(".kv-chart.js-plotly-plot").forEach(function (el) {
      if (el.offsetParent !== null) Plotly.Plots.resize(el);
    });
  }

  function cellValue(row, index) {
    var cell = row.children[index];
    if (!cell) return "";
    var v = cell.getAttribute("data-v");
    return v !== null ? v : cell.textContent.trim();
  }

  function sortTable(table, index, th) {
    var body = table.tBodies[0];
    var ascending = th.getAttribute("aria-sort") !== "ascending";
    table.querySelectorAll("th").forEach(function (h) { h.removeAttribute("aria-sort"); });
    th.setAttribute("aria-sort", ascending ? "ascending" : "descending");
    var rows = Array.prototype.slice.call(body.rows);
    rows.sort(function (a, b) {
      var x = cellValue(a, index), y = cellValue(b, index);
      var nx = parseFloat(x), ny = parseFloat(y);
      var bothNumbers = !isNaN(nx) && !isNaN(ny) && x !== "" && y !== "";
      if (x === "" && y !== "") return 1;
      if (y === "" && x !== "") return -1;
      var c = bothNumbers ? nx - ny : x.localeCompare(y);
      return ascending ? c : -c;
    });
    rows.forEach(function (r) { body.appendChild(r); });
  }

  function initTables() {
    document.querySelectorAll("table.kv-sortable").forEach(function (table) {
      if (table.dataset.kvSort) return;
      table.dataset.kvSort = "1";
      table.querySelectorAll("thead th").forEach(function (th, i) {
        th.classList.add("kv-sort");
        th.setAttribute("role", "button");
        th.addEventListener("click", function () { sortTable(table, i, th); });
      });
    });
  }

  function applyFilters() {
    var want = {};
    document.querySelectorAll("select.kv-filter").forEach(function (s) { want[s.dataset.key] = s.value; });
    document.querySelectorAll("table.kv-leaderboard").forEach(function (table) {
      var shown = 0;
      table.querySelectorAll("tbody tr").forEach(function (tr) {
        var show = Object.keys(want).every(function (k) { return tr.dataset[k] === want[k]; });
        tr.hidden = !show;
        if (show) shown += 1;
      });
      var block = table.closest(".tabbed-block") || table.parentNode;
      var empty = block.querySelector(".kv-no-rows");
      if (empty) empty.hidden = shown > 0;
    });
  }

  function initFilters() {
    var selects = document.querySelectorAll("select.kv-filter");
    selects.forEach(function (s) {
      s.addEventListener("change", applyFilters);
    });
    if (selects.length) applyFilters();
  }

  function initTabs() {
    document.querySelectorAll(".tabbed-set > input").forEach(function (input) {
      input.addEventListener("change", function () {
        window.requestAnimationFrame(function () { resizeVisible(input.parentNode); });
      });
    });
  }

  var observer = null;
  function watchPalette() {
    if (observer) return;
    observer = new MutationObserver(recolour);
    observer.observe(document.body, { attributes: true, attributeFilter: ["data-md-color-scheme"] });
  }

  function init() {
    document.querySelectorAll(".kv-chart").forEach(drawChart);
    initTables();
    initFilters();
    initTabs();
    watchPalette();
  }

  if (typeof window.document$ !== "undefined") {
    window.document$.subscribe(init);
  } else {
    document.addEventListener("DOMContentLoaded", init);
  }
})();
