/* KernelVerdict: the site search's index is loaded on first use of search, not as each page opens.
 * The theme asks for its index (after Plotly, the largest file a page loads) while its own script runs, once per
 * visit (instant navigation keeps the page); this script, put before the theme's by the generator's hook, holds
 * that request until the reader first uses search: focus in the search box (its button and keyboard shortcuts
 * put the focus there) or a press on the search button. */
(function () {
  "use strict";

  var SEARCH_INDEX = /\/search\/search_index\.json(\?|#|$)/;
  var heldSearch = [];
  var searchWanted = false;
  var xhrOpen = XMLHttpRequest.prototype.open;
  var xhrSend = XMLHttpRequest.prototype.send;
  XMLHttpRequest.prototype.open = function (method, url) {
    this.kvSearchIndex = SEARCH_INDEX.test(String(url));
    return xhrOpen.apply(this, arguments);
  };
  XMLHttpRequest.prototype.send = function () {
    if (this.kvSearchIndex && !searchWanted) {
      heldSearch.push([this, arguments]);
      return undefined;
    }
    return xhrSend.apply(this, arguments);
  };
  function wantSearch(event) {
    var target = event.target;
    if (searchWanted || !target || !target.closest) return;
    if (!target.closest("[data-md-component=search], label[for=__search]")) return;
    searchWanted = true;
    heldSearch.splice(0).forEach(function (held) { xhrSend.apply(held[0], held[1]); });
  }
  document.addEventListener("focusin", wantSearch, true);
  document.addEventListener("pointerdown", wantSearch, true);
})();
