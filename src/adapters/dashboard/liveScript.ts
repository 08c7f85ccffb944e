/**
 * The live part of the dashboard's script (docs/dashboard.md, Live): the page listens to
 * `/events` (Server-Sent Events) and, for each event, fetches again the parts marked `data-live`
 * whose topics (`data-live-on`, all events when absent) it names, and puts the HTML the server
 * escaped in their place (a part saying `data-live-since`, the time it was made, asks for what changed since), keeping open what the reader opened (`<details>` with an id). A part
 * whose fetch is under way is fetched again once it ends. When the stream is lost the browser
 * comes back on its own with the last event's id; when it gave up (the gateway was gone a long
 * time, or answered with an error), the page opens a new stream after a wait, saying the last
 * event it saw. A page with no live part opens no stream.
 */
export const LIVE_JS = `
(function () {
  var parts = Array.prototype.slice.call(document.querySelectorAll('[data-live]'));
  if (parts.length === 0 || typeof EventSource === 'undefined') return;
  var since = null;
  var run = null;
  parts.forEach(function (part) {
    since = since || part.getAttribute('data-live-since');
    run = run || part.getAttribute('data-live-run');
  });
  var state = new Map();
  function refresh(part) {
    var now = state.get(part) || {};
    state.set(part, now);
    if (now.busy) { now.again = true; return; }
    now.busy = true;
    fetch(part.getAttribute('data-live'), { headers: { accept: 'text/html' }, credentials: 'same-origin' })
      .then(function (response) { return response.ok ? response.text() : null; })
      .then(function (text) {
        if (text === null || text === part.innerHTML) return;
        var open = Array.prototype.map.call(part.querySelectorAll('details[id][open]'), function (each) { return each.id; });
        part.innerHTML = text;
        open.forEach(function (id) { var again = document.getElementById(id); if (again && part.contains(again)) again.open = true; });
      })
      .catch(function () {})
      .then(function () { now.busy = false; if (now.again) { now.again = false; refresh(part); } });
  }
  function changed(topics) {
    parts.forEach(function (part) {
      var on = part.getAttribute('data-live-on');
      var wanted = on ? on.split(' ') : null;
      if (!wanted || wanted.some(function (topic) { return topics.indexOf(topic) >= 0; })) refresh(part);
    });
  }
  var last = since;
  var wait = 1000;
  function connect() {
    var query = [];
    if (run) query.push('run=' + encodeURIComponent(run));
    if (last) query.push('last=' + encodeURIComponent(last));
    var source = new EventSource('/events' + (query.length ? '?' + query.join('&') : ''));
    function seen(event) { if (event.lastEventId) last = event.lastEventId; wait = 1000; }
    source.addEventListener('hello', seen);
    source.addEventListener('change', function (event) {
      seen(event);
      try { changed(JSON.parse(event.data).topics || []); } catch (error) { changed([]); }
    });
    source.onerror = function () {
      if (source.readyState !== EventSource.CLOSED) return;
      setTimeout(connect, wait);
      wait = Math.min(wait * 2, 30000);
    };
  }
  connect();
})();
`;
