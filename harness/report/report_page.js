(function () {
  'use strict';
  var errors = [];
  window.addEventListener('error', function (e) { errors.push(String(e.message || e)); });
  var consoleError = console.error;
  console.error = function () {
    errors.push(Array.prototype.join.call(arguments, ' '));
    return consoleError.apply(console, arguments);
  };
  function sortKey(cell) {
    var v = cell.getAttribute('data-value');
    if (v !== null && v !== '') return { n: parseFloat(v) };
    return { s: cell.textContent.trim().toLowerCase() };
  }
  function compare(a, b) {
    if ('n' in a && 'n' in b) return a.n - b.n;
    if ('n' in a) return -1;
    if ('n' in b) return 1;
    return a.s < b.s ? -1 : a.s > b.s ? 1 : 0;
  }
  function sortBy(th) {
    var table = th.closest('table'), column = th.cellIndex, body = table.tBodies[0];
    var dir = th.getAttribute('data-dir') === 'asc' ? 'desc' : 'asc';
    table.querySelectorAll('th').forEach(function (h) { h.removeAttribute('data-dir'); });
    th.setAttribute('data-dir', dir);
    // Tables of findings keep each finding in a <tbody> of its own: sort those, else the rows.
    var grouped = table.tBodies.length > 1;
    var items = Array.prototype.slice.call(grouped ? table.tBodies : body.rows);
    items.sort(function (x, y) {
      var a = grouped ? x.rows[0] : x, b = grouped ? y.rows[0] : y;
      var c = compare(sortKey(a.cells[column]), sortKey(b.cells[column]));
      return dir === 'asc' ? c : -c;
    });
    items.forEach(function (r) { (grouped ? table : body).appendChild(r); });
  }
  document.addEventListener('DOMContentLoaded', function () {
    document.querySelectorAll('table.sortable th').forEach(function (th) {
      th.title = 'sort by this column';
      th.addEventListener('click', function () { sortBy(th); });
    });
  });
  window.addEventListener('load', function () {
    var charts = document.querySelectorAll('svg[data-chart]'), empty = [];
    charts.forEach(function (svg) {
      var marks = svg.querySelectorAll('.mark').length, box = svg.getBoundingClientRect();
      svg.setAttribute('data-rendered-marks', String(marks));
      if (marks === 0 || box.width === 0 || box.height === 0) empty.push(svg.getAttribute('data-chart'));
    });
    document.body.setAttribute('data-charts', String(charts.length));
    document.body.setAttribute('data-report-status',
      errors.length ? 'error: ' + errors.join(' | ') : empty.length ? 'empty chart: ' + empty.join(' ') : 'ok');
  });
})();
