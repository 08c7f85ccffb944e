/**
 * The dashboard's small scripts of its own, served at /assets/ beside dashboard.js (no inline
 * script exists: the Content-Security-Policy allows none). Every page works without them.
 */

/**
 * On every page: the keyboard shortcuts (docs/dashboard.md, Keyboard) — `/` focuses the page's
 * search field (on a page without one it opens the jobs list's), `g` then `o`, `j`, `r` or `w`
 * goes to the overview, the jobs, the runs or the webhooks, Escape closes the menu; none while
 * typing in a field. And the Copy buttons (`data-copy`: the id of what they copy), hidden
 * without the script.
 */
export const SHORTCUTS_JS = `
'use strict';
(function () {
  var GO = { o: '/', j: '/jobs', r: '/runs', w: '/webhooks' };
  var waiting = null;
  function typing(target) {
    if (!target || !target.tagName) return false;
    var tag = target.tagName;
    return tag === 'INPUT' || tag === 'TEXTAREA' || tag === 'SELECT' || target.isContentEditable;
  }
  function searchField() { return document.querySelector('main input[type="search"]'); }
  function closeMenus() {
    document.querySelectorAll('details.menu[open]').forEach(function (menu) { menu.removeAttribute('open'); });
  }
  document.addEventListener('keydown', function (event) {
    if (event.defaultPrevented || event.ctrlKey || event.metaKey || event.altKey) return;
    if (event.key === 'Escape') {
      closeMenus();
      if (typing(event.target) && event.target.type === 'search') event.target.blur();
      return;
    }
    if (typing(event.target)) return;
    if (waiting !== null) {
      clearTimeout(waiting);
      waiting = null;
      if (Object.prototype.hasOwnProperty.call(GO, event.key)) {
        event.preventDefault();
        location.assign(GO[event.key]);
        return;
      }
    }
    if (event.key === 'g') {
      waiting = setTimeout(function () { waiting = null; }, 1500);
      return;
    }
    if (event.key === '/') {
      event.preventDefault();
      var field = searchField();
      if (field) { field.focus(); field.select(); } else location.assign('/jobs#search');
    }
  });
  document.addEventListener('click', function (event) {
    document.querySelectorAll('details.menu[open]').forEach(function (menu) {
      if (!menu.contains(event.target)) menu.removeAttribute('open');
    });
  });
  if (location.hash === '#search') {
    var field = searchField();
    if (field) field.focus();
  }
  document.querySelectorAll('button[data-copy]').forEach(function (button) {
    button.hidden = false;
    button.addEventListener('click', function () {
      var source = document.getElementById(button.getAttribute('data-copy'));
      if (!source) return;
      var text = source.textContent;
      function copied() { button.textContent = 'Copied'; }
      function byHand() {
        var range = document.createRange();
        range.selectNodeContents(source);
        var selection = window.getSelection();
        selection.removeAllRanges();
        selection.addRange(range);
        if (document.execCommand('copy')) copied();
      }
      if (navigator.clipboard && navigator.clipboard.writeText) navigator.clipboard.writeText(text).then(copied, byHand);
      else byHand();
    });
  });
})();
`;

/**
 * On the overview: draws each `.chart-canvas[data-chart]` with uPlot (served at /assets/uplot.js)
 * as stacked bars, coloured by the `--chart` colour of each series' `status-<word>` class, so the
 * style sheet's light and dark colours apply; drawn again when the colour scheme or the width
 * changes. The data table below each chart says the same in text.
 */
export const CHARTS_JS = `
'use strict';
(function () {
  if (typeof uPlot === 'undefined') return;
  var charts = [];
  function colourOf(tone) {
    var probe = document.createElement('span');
    probe.className = 'swatch ' + tone;
    document.body.appendChild(probe);
    var colour = getComputedStyle(probe).backgroundColor;
    probe.remove();
    return colour;
  }
  function draw(place) {
    var data = JSON.parse(place.getAttribute('data-chart'));
    var labels = data.labels;
    var xs = labels.map(function (_label, index) { return index; });
    var sums = xs.map(function () { return 0; });
    var layers = data.series.map(function (series) {
      sums = sums.map(function (sum, index) { return sum + series.values[index]; });
      return sums.slice();
    });
    var style = getComputedStyle(document.documentElement);
    var text = style.getPropertyValue('--muted').trim() || '#59636e';
    var grid = style.getPropertyValue('--chart-grid').trim() || '#d0d7de';
    var bars = uPlot.paths.bars({ size: [0.75, 48], align: 0 });
    var series = [{}];
    var values = [xs];
    for (var index = data.series.length - 1; index >= 0; index -= 1) {
      var colour = colourOf(data.series[index].tone);
      series.push({ label: data.series[index].label, fill: colour, stroke: colour, width: 0, paths: bars, points: { show: false } });
      values.push(layers[index]);
    }
    var every = Math.max(1, Math.ceil(labels.length / Math.max(2, Math.floor(place.clientWidth / 70))));
    var options = {
      width: Math.max(240, place.clientWidth),
      height: 220,
      legend: { show: false },
      cursor: { show: false },
      scales: { x: { time: false, range: [-0.5, labels.length - 0.5] }, y: { range: function (_u, _min, max) { return [0, max > 0 ? (data.unit === 'usd' ? max * 1.15 : Math.max(1, Math.ceil(max * 1.1))) : 1]; } } },
      axes: [
        { stroke: text, grid: { show: false }, ticks: { stroke: grid }, splits: function () { return xs.filter(function (x) { return (labels.length - 1 - x) % every === 0; }); }, values: function (_u, splits) { return splits.map(function (x) { return labels[x] || ''; }); } },
        { stroke: text, grid: { stroke: grid, width: 1 }, ticks: { stroke: grid }, values: function (_u, splits) { return splits.map(function (v) { return data.unit === 'usd' ? '$' + v.toFixed(2) : String(v); }); } },
      ],
      series: series,
    };
    place.innerHTML = '';
    return new uPlot(options, values, place);
  }
  function drawAll() {
    charts.forEach(function (chart) { chart.destroy(); });
    charts = [];
    document.querySelectorAll('.chart-canvas[data-chart]').forEach(function (place) { charts.push(draw(place)); });
  }
  drawAll();
  var scheme = window.matchMedia('(prefers-color-scheme: dark)');
  if (scheme.addEventListener) scheme.addEventListener('change', drawAll);
  var width = window.innerWidth;
  window.addEventListener('resize', function () {
    if (window.innerWidth === width) return;
    width = window.innerWidth;
    drawAll();
  });
})();
`;
