/**
 * The dashboard's script, served by the gateway itself under /assets/ (no CDN: the machines it
 * runs on may have no internet); the style sheet is dashboardStyles.ts, the other scripts
 * pageScripts.ts and chartLibrary.ts. The script only refreshes the parts of a page
 * marked `data-live`: it asks the server for that part again every second and puts the HTML the
 * server escaped in its place.
 */
export { DASHBOARD_CSS } from './dashboardStyles.js';

export const DASHBOARD_JS = `
'use strict';
(function () {
  var parts = document.querySelectorAll('[data-live]');
  if (parts.length === 0) return;
  function refresh(part) {
    fetch(part.getAttribute('data-live'), { headers: { accept: 'text/html' }, credentials: 'same-origin' })
      .then(function (response) { return response.ok ? response.text() : null; })
      .then(function (text) { if (text !== null && text !== part.innerHTML) part.innerHTML = text; })
      .catch(function () {});
  }
  setInterval(function () { parts.forEach(refresh); }, 1000);
})();
`;
