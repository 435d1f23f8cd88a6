/*
 * check.js - helpers for tests that look at an SVG the way a browser shows it
 * (see browser_dump in tests/lib.sh). The page holds the SVG inline, then this
 * file, then the test's own script, which calls these helpers and report().
 * Everything reported is written into a <pre> at the end of the body, one line "@@ KEY=VALUE" each, once the page and its
 * SVG's own script have run, for `chromium --headless --dump-dom` to print.
 */
var results = [];

/* report(KEY, VALUE): one line "@@ KEY=VALUE" of the result. */
function report(key, value) {
  results.push("@@ " + key + '=' + String(value).replace(/\n/g, ' '));
}

/* The first frame (<g> in #frames) whose data-name is @name, or null. */
function frame(name) {
  var gs = document.getElementById('frames').getElementsByTagName('g');
  for (var i = 0; i < gs.length; i++)
    if (gs[i].getAttribute('data-name') === name) return gs[i];
  return null;
}
function rect_of(g) { return g.getElementsByTagName('rect')[0]; }

/* True when @el is drawn (not display:none, some size) inside the window. */
function on_screen(el) {
  if (!el) return false;
  var r = el.getBoundingClientRect();
  for (var n = el; n && n.nodeType === 1; n = n.parentNode)
    if (getComputedStyle(n).display === 'none') return false;
  return r.width > 0 && r.height > 0 && r.top >= 0 && r.left >= 0 &&
      r.bottom <= window.innerHeight && r.right <= window.innerWidth;
}

/* The labels a user can read: the text of every drawn frame label, '|'-separated. */
function visible_labels() {
  var ts = document.getElementById('frames').getElementsByTagName('text'), out = [];
  for (var i = 0; i < ts.length; i++) {
    var b = ts[i].getBoundingClientRect();
    if (ts[i].textContent && b.width > 0 && getComputedStyle(ts[i].parentNode).display !== 'none')
      out.push(ts[i].textContent);
  }
  return out.join('|');
}

/* A mouse click on @el, as a user's: it bubbles to the page's own handlers. */
function click(el) {
  el.dispatchEvent(new MouseEvent('click', {bubbles: true, cancelable: true, view: window}));
}

/* "r,g,b" of a fill "rgb(r,g,b)". */
function fill_of(g) { return rect_of(g).getAttribute('fill').replace(/[^0-9,]/g, ''); }

/*
 * Scroll the window to @y and send the scroll event the browser sends on its
 * next frame (headless Chromium under --virtual-time-budget may draw none).
 */
function scroll_to(y) {
  window.scrollTo(0, y);
  window.dispatchEvent(new Event('scroll'));
}

/* The mouse over @el: the page's own mouseover handlers run. */
function hover(el) {
  el.dispatchEvent(new MouseEvent('mouseover', {bubbles: true, view: window}));
}

function write_results() {
  var pre = document.createElement('pre');
  pre.id = 'result';
  pre.textContent = '\n' + results.join('\n') + '\n';
  document.body.appendChild(pre);
}

/* After load, run_checks(); if it returns a promise, the results are written when it settles. */
window.addEventListener('load', function () {
  setTimeout(function () {
    var p;
    try {
      if (typeof run_checks === 'function') p = run_checks();
    } catch (e) {
      report('error', e && e.stack ? e.stack : e);
    }
    if (p && typeof p.then === 'function')
      p.then(write_results, function (e) { report('error', e); write_results(); });
    else
      write_results();
  }, 0);
});
