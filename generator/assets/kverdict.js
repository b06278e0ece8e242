/* KernelVerdict front end: Plotly charts, sortable tables, leaderboard filters and their place in the URL.
 * Runs on every page view through Material's document$ (so it survives instant navigation and back/forward),
 * loads Plotly only on pages that have a chart, re-colours charts when the palette toggles, and resizes
 * charts when a tab becomes visible. A chart's data is the JSON of its element's data-fig attribute. */
(function () {
  "use strict";

  var here = document.currentScript ? document.currentScript.src : "";
  var PLOTLY_SRC = here ? here.replace(/kverdict\.js(\?.*)?$/, "plotly-scatter.min.js") : "";
  var plotlyLoading = null;

  function loadPlotly() {
    if (window.Plotly) return Promise.resolve(window.Plotly);
    if (!plotlyLoading) {
      plotlyLoading = new Promise(function (resolve, reject) {
        var s = document.createElement("script");
        s.src = PLOTLY_SRC;
        s.async = true;
        s.setAttribute("data-kv-plotly", "");
        s.onload = function () { resolve(window.Plotly); };
        s.onerror = function () { plotlyLoading = null; reject(new Error("Plotly could not be loaded from " + PLOTLY_SRC)); };
        document.head.appendChild(s);
      });
    }
    return plotlyLoading;
  }

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
    var fig = JSON.parse(el.getAttribute("data-fig"));
    var layout = Object.assign({ margin: { t: 20, r: 20, b: 50, l: 60 }, height: 380,
      legend: { orientation: "h", y: -0.2 } }, fig.layout || {});
    return window.Plotly.newPlot(el, fig.data, layout, { responsive: true, displaylogo: false }).then(function () {
      return window.Plotly.relayout(el, themeLayout());
    });
  }

  function initCharts() {
    var charts = document.querySelectorAll(".kv-chart[data-fig]");
    if (!charts.length) return;
    loadPlotly().then(function () {
      charts.forEach(function (el) { if (el.isConnected) drawChart(el); });
    });
  }

  function recolour() {
    if (!window.Plotly) return;
    document.querySelectorAll(".kv-chart.js-plotly-plot").forEach(function (el) {
      window.Plotly.relayout(el, themeLayout());
    });
  }

  function resizeVisible(root) {
    if (!window.Plotly) return;
    (root || document).querySelectorAll(".kv-chart.js-plotly-plot").forEach(function (el) {
      if (el.offsetParent !== null) window.Plotly.Plots.resize(el);
    });
  }

  /* The page's state (leaderboard filters, protocol tab, sort order) lives in the query string. */
  function params() { return new URLSearchParams(window.location.search); }

  function setParam(key, value) {
    var p = params();
    if (value === null || value === "") p.delete(key); else p.set(key, value);
    var query = p.toString();
    window.history.replaceState(window.history.state, "", window.location.pathname + (query ? "?" + query : "") + window.location.hash);
  }

  function cellValue(row, index) {
    var cell = row.children[index];
    if (!cell) return "";
    var v = cell.getAttribute("data-v");
    return v !== null ? v : cell.textContent.trim();
  }

  function sortTable(table, index, ascending) {
    var body = table.tBodies[0];
    var th = table.tHead.rows[0].cells[index];
    if (!body || !th) return;
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

  /* A header's label goes into a button, so each sortable column is reached with Tab and sorted with Enter or
   * Space; the header keeps aria-sort, which a screen reader announces. */
  function sortButton(th) {
    var button = document.createElement("button");
    button.type = "button";
    button.className = "kv-sort-button";
    while (th.firstChild) button.appendChild(th.firstChild);
    th.appendChild(button);
  }

  function initTables() {
    var wanted = params().get("sort");
    document.querySelectorAll("table.kv-sortable").forEach(function (table) {
      if (table.dataset.kvSort) return;
      table.dataset.kvSort = "1";
      var inUrl = table.classList.contains("kv-leaderboard");
      table.querySelectorAll("thead th").forEach(function (th, i) {
        th.classList.add("kv-sort");
        sortButton(th);
        th.addEventListener("click", function () {
          var ascending = th.getAttribute("aria-sort") !== "ascending";
          if (inUrl) {
            document.querySelectorAll("table.kv-leaderboard").forEach(function (t) { sortTable(t, i, ascending); });
            setParam("sort", i + (ascending ? "" : "-desc"));
          } else {
            sortTable(table, i, ascending);
          }
        });
      });
      if (inUrl && wanted) {
        var m = /^(\d+)(-desc)?$/.exec(wanted);
        if (m) sortTable(table, parseInt(m[1], 10), !m[2]);
      }
    });
  }

  /* Every long table (and one marked kv-filterable) gets a text box above it that keeps the rows containing
   * its text; the leaderboard has its own filters. */
  var LONG_TABLE_ROWS = 15;
  function initTextFilters() {
    document.querySelectorAll("table.kv-table").forEach(function (table) {
      var body = table.tBodies[0];
      if (!body || table.dataset.kvText || table.classList.contains("kv-leaderboard")) return;
      if (body.rows.length <= LONG_TABLE_ROWS && !table.classList.contains("kv-filterable")) return;
      table.dataset.kvText = "1";
      var box = document.createElement("input");
      box.type = "search";
      box.className = "kv-text-filter";
      box.placeholder = "Filter rows";
      box.setAttribute("aria-label", "Filter the rows of this table");
      var anchor = table.closest(".kv-scroll") || table;
      anchor.parentNode.insertBefore(box, anchor);
      box.addEventListener("input", function () {
        var want = box.value.trim().toLowerCase();
        Array.prototype.forEach.call(body.rows, function (tr) {
          tr.classList.toggle("kv-filtered-out", want !== "" && tr.textContent.toLowerCase().indexOf(want) < 0);
        });
      });
    });
  }

  function applyFilters() {
    var want = {};
    document.querySelectorAll("select.kv-filter").forEach(function (s) { want[s.dataset.key] = s.value; });
    document.querySelectorAll("table.kv-leaderboard").forEach(function (table) {
      var shown = 0;
      table.querySelectorAll("tbody tr").forEach(function (tr) {
        var show = Object.keys(want).every(function (k) { return want[k] === "" || tr.dataset[k] === want[k]; });
        tr.hidden = !show;
        if (show) shown += 1;
      });
      var block = table.closest(".tabbed-block") || table.parentNode;
      var empty = block.querySelector(".kv-no-rows");
      if (empty) empty.hidden = shown > 0;
    });
  }

  /* "float32-like only": each verified cell carries both figures (a .kv-all and a .kv-f32 span; a sortable one
   * also data-v-all and data-v-f32); the box shows one set and points data-v, which sorting reads, at it. */
  function applyPrecision(box) {
    var only = box.checked;
    document.querySelectorAll("table.kv-leaderboard td[data-v-f32]").forEach(function (td) {
      td.setAttribute("data-v", td.getAttribute(only ? "data-v-f32" : "data-v-all"));
    });
    document.querySelectorAll("table.kv-leaderboard .kv-all").forEach(function (e) { e.hidden = only; });
    document.querySelectorAll("table.kv-leaderboard .kv-f32").forEach(function (e) { e.hidden = !only; });
    var m = /^(\d+)(-desc)?$/.exec(params().get("sort") || "");
    if (m) document.querySelectorAll("table.kv-leaderboard").forEach(function (t) { sortTable(t, parseInt(m[1], 10), !m[2]); });
  }

  function initPrecision() {
    var box = document.querySelector("input.kv-precision-only");
    if (!box) return;
    box.checked = params().get(box.dataset.key) === box.value;
    box.addEventListener("change", function () {
      setParam(box.dataset.key, box.checked ? box.value : null);
      applyPrecision(box);
    });
    applyPrecision(box);
  }

  function initFilters() {
    var selects = document.querySelectorAll("select.kv-filter");
    var p = params();
    selects.forEach(function (s) {
      var v = p.get(s.dataset.key);
      if (v !== null && Array.prototype.some.call(s.options, function (o) { return o.value === v; })) s.value = v;
      s.addEventListener("change", function () { setParam(s.dataset.key, s.value); applyFilters(); });
    });
    if (selects.length) applyFilters();
  }

  function tabLabel(input) {
    var label = input.parentNode.querySelector('label[for="' + input.id + '"]');
    return label ? label.textContent.trim() : "";
  }

  function initTabs() {
    var wanted = params().get("tab");
    document.querySelectorAll(".tabbed-set > input").forEach(function (input) {
      var inUrl = input.parentNode.hasAttribute("data-kv-url-tab");
      if (inUrl && wanted && tabLabel(input) === wanted) input.checked = true;
      input.addEventListener("change", function () {
        if (inUrl && input.checked) setParam("tab", tabLabel(input));
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
    initTabs();
    initPrecision();
    initTables();
    initTextFilters();
    initFilters();
    initCharts();
    watchPalette();
  }

  if (typeof window.document$ !== "undefined") {
    window.document$.subscribe(init);
  } else {
    document.addEventListener("DOMContentLoaded", init);
  }
})();
