/**
 * The dashboard's one style sheet, served by the gateway at /assets/dashboard.css. Colours are
 * custom properties, set for light and for dark (`prefers-color-scheme`); every pair of text and
 * background colour here has a contrast of at least 4.5:1 (WCAG AA) in both. A status word is
 * shown as a badge (`statusBadge`, views.ts): `.badge.status-<word>` takes the tone of its word.
 * At 390 px wide nothing makes the page scroll sideways: tables scroll in their own `.table-wrap`.
 */
export const DASHBOARD_CSS = `
:root {
  color-scheme: light dark;
  --bg: #ffffff; --fg: #1f2328; --muted: #59636e; --line: #d0d7de; --surface: #f6f8fa; --link: #0550ae;
  --accent: #0969da; --on-accent: #ffffff; --danger: #cf222e; --shadow: 0 4px 16px #1f232833;
  --good-fg: #116329; --good-bg: #dafbe1; --bad-fg: #a40e26; --bad-bg: #ffebe9; --warn-fg: #6c4400; --warn-bg: #fff8c5;
  --info-fg: #0550ae; --info-bg: #ddf4ff; --neutral-fg: #424a53; --neutral-bg: #eaeef2; --config-fg: #6639ba; --config-bg: #fbefff;
  --chart-ok: #2da44e; --chart-error: #cf222e; --chart-delivery_failed: #e16f24; --chart-blocked_config: #8250df;
  --chart-delivery_queued: #bf8700; --chart-running: #0969da; --chart-skipped: #8c959f; --chart-grid: #d0d7de;
}
@media (prefers-color-scheme: dark) {
  :root {
    --bg: #0d1117; --fg: #e6edf3; --muted: #9198a1; --line: #30363d; --surface: #161b22; --link: #4493f8;
    --accent: #1f6feb; --on-accent: #ffffff; --danger: #b62324; --shadow: 0 4px 16px #01040999;
    --good-fg: #56d364; --good-bg: #12261e; --bad-fg: #ff8182; --bad-bg: #2d1215; --warn-fg: #e3b341; --warn-bg: #2e2307;
    --info-fg: #79c0ff; --info-bg: #0c2d4b; --neutral-fg: #c9d1d9; --neutral-bg: #262c36; --config-fg: #d2a8ff; --config-bg: #2a1b45;
    --chart-ok: #3fb950; --chart-error: #f85149; --chart-delivery_failed: #f0883e; --chart-blocked_config: #a371f7;
    --chart-delivery_queued: #d29922; --chart-running: #58a6ff; --chart-skipped: #6e7681; --chart-grid: #30363d;
  }
}
* { box-sizing: border-box; }
html { background: var(--bg); color: var(--fg); }
body { font: 15px/1.5 system-ui, -apple-system, "Segoe UI", sans-serif; margin: 0; background: var(--bg); color: var(--fg); overflow-wrap: anywhere; }
a { color: var(--link); }
a:hover { text-decoration-thickness: 2px; }
:focus-visible { outline: 2px solid var(--accent); outline-offset: 2px; }
.skip { position: absolute; left: -999px; top: 0; background: var(--bg); padding: .4rem .8rem; z-index: 10; }
.skip:focus { left: .5rem; }
header.top { display: flex; gap: .4rem 1.2rem; align-items: center; padding: .5rem 1.2rem; border-bottom: 1px solid var(--line); background: var(--surface); flex-wrap: wrap; }
header.top .brand { font-weight: 700; font-size: 1.05rem; color: var(--fg); text-decoration: none; }
header.top nav { display: flex; flex-wrap: wrap; gap: .2rem .3rem; }
header.top nav a { padding: .25rem .55rem; border-radius: 6px; text-decoration: none; color: var(--fg); }
header.top nav a:hover { background: var(--neutral-bg); }
header.top nav a[aria-current="page"] { background: var(--info-bg); color: var(--info-fg); font-weight: 600; }
details.menu { margin-left: auto; position: relative; }
details.menu > summary { list-style: none; cursor: pointer; padding: .25rem .6rem; border: 1px solid var(--line); border-radius: 6px; background: var(--bg); }
details.menu > summary::-webkit-details-marker { display: none; }
details.menu > summary::after { content: " \\25BE"; }
details.menu .menu-body { position: absolute; right: 0; top: calc(100% + .3rem); min-width: 15rem; max-width: calc(100vw - 1.5rem); z-index: 5; background: var(--bg); border: 1px solid var(--line); border-radius: 8px; padding: .6rem .8rem; box-shadow: var(--shadow); }
details.menu .menu-body form { margin: .4rem 0 0; }
details.menu .menu-body p { margin: 0 0 .3rem; }
kbd { font: .85em ui-monospace, monospace; border: 1px solid var(--line); border-bottom-width: 2px; border-radius: 4px; padding: 0 .3em; background: var(--surface); }
main { padding: 1rem 1.2rem 3rem; max-width: 80rem; }
h1 { font-size: 1.4rem; margin: .3rem 0 1rem; }
h2 { font-size: 1.12rem; margin: 1.8rem 0 .6rem; }
h3 { font-size: 1rem; margin: 1.2rem 0 .4rem; }
.table-wrap { overflow-x: auto; max-width: 100%; margin: .4rem 0 1rem; }
table { border-collapse: collapse; width: 100%; }
caption { text-align: left; color: var(--muted); padding: 0 0 .3rem; font-size: .9rem; }
th, td { text-align: left; padding: .4rem .6rem; border-bottom: 1px solid var(--line); vertical-align: top; overflow-wrap: normal; }
td { overflow-wrap: anywhere; min-width: 5rem; }
thead th { font-weight: 600; background: var(--surface); white-space: nowrap; }
tbody tr:hover { background: var(--surface); }
td.number, th.number { text-align: right; font-variant-numeric: tabular-nums; }
dl { display: grid; grid-template-columns: max-content minmax(0, 1fr); gap: .3rem 1rem; }
dt { font-weight: 600; }
dd { margin: 0; min-width: 0; }
pre { white-space: pre-wrap; word-break: break-word; background: var(--surface); border: 1px solid var(--line); padding: .6rem; border-radius: 6px; margin: .2rem 0 .8rem; max-width: 100%; overflow-x: auto; }
code { font: .9em ui-monospace, monospace; }
form.inline { display: inline-flex; flex-wrap: wrap; gap: .4rem; align-items: center; margin: 0 .6rem .6rem 0; max-width: 100%; }
form.stacked { display: grid; gap: .6rem; max-width: 40rem; }
form.stacked label { display: grid; gap: .2rem; font-weight: 600; }
form.stacked label.check { display: flex; gap: .5rem; align-items: center; font-weight: 400; }
input, select, textarea, button { font: inherit; padding: .35rem .6rem; border-radius: 6px; max-width: 100%; }
input, select, textarea { background: var(--bg); color: var(--fg); border: 1px solid var(--muted); }
textarea { min-height: 6rem; }
button, .button { cursor: pointer; background: var(--surface); color: var(--fg); border: 1px solid var(--line); font-weight: 500; text-decoration: none; display: inline-block; }
button:hover, .button:hover { background: var(--neutral-bg); }
button.primary, .button.primary { background: var(--accent); color: var(--on-accent); border-color: var(--accent); }
button.danger { background: var(--danger); color: #ffffff; border-color: var(--danger); }
.problem { color: var(--bad-fg); background: var(--bad-bg); border-radius: 6px; padding: .4rem .7rem; font-weight: 600; }
.notice { color: var(--good-fg); background: var(--good-bg); border-radius: 6px; padding: .4rem .7rem; font-weight: 600; }
.muted { color: var(--muted); }
.badge { display: inline-block; padding: 0 .55em; border-radius: 999px; font-size: .85em; font-weight: 600; line-height: 1.6; white-space: nowrap; color: var(--tone-fg, var(--neutral-fg)); background: var(--tone-bg, var(--neutral-bg)); border: 1px solid currentColor; }
.status-ok, .status-delivered, .status-accepted { --tone-fg: var(--good-fg); --tone-bg: var(--good-bg); --chart: var(--chart-ok); }
.status-error, .status-run_failed, .status-failed, .status-refused, .status-cancelled { --tone-fg: var(--bad-fg); --tone-bg: var(--bad-bg); --chart: var(--chart-error); }
.status-delivery_failed { --tone-fg: var(--bad-fg); --tone-bg: var(--bad-bg); --chart: var(--chart-delivery_failed); }
.status-blocked_config { --tone-fg: var(--config-fg); --tone-bg: var(--config-bg); --chart: var(--chart-blocked_config); }
.status-delivery_queued, .status-queued, .status-paused, .status-abandoned { --tone-fg: var(--warn-fg); --tone-bg: var(--warn-bg); --chart: var(--chart-delivery_queued); }
.status-running, .status-answered, .status-scheduled, .status-pending { --tone-fg: var(--info-fg); --tone-bg: var(--info-bg); --chart: var(--chart-running); }
.status-skipped, .status-silent, .status-not_run, .status-completed, .status-ignored, .status-duplicate, .status-none { --tone-fg: var(--neutral-fg); --tone-bg: var(--neutral-bg); --chart: var(--chart-skipped); }
.cards { display: grid; grid-template-columns: repeat(auto-fill, minmax(9.5rem, 1fr)); gap: .7rem; margin: .4rem 0 1rem; padding: 0; list-style: none; }
.card { border: 1px solid var(--line); border-left: 4px solid var(--tone-fg, var(--line)); border-radius: 8px; padding: .5rem .8rem; background: var(--bg); }
.card a { display: block; text-decoration: none; color: var(--fg); }
.card a:hover .count { text-decoration: underline; }
.card .count { display: block; font-size: 1.5rem; font-weight: 700; color: var(--tone-fg, var(--fg)); font-variant-numeric: tabular-nums; }
.card .label { font-size: .9rem; }
.grid-2 { display: grid; grid-template-columns: repeat(auto-fit, minmax(min(100%, 30rem), 1fr)); gap: 0 1.5rem; }
figure.chart { margin: .4rem 0 1.2rem; border: 1px solid var(--line); border-radius: 8px; padding: .6rem; min-width: 0; }
figure.chart figcaption { font-weight: 600; margin-bottom: .3rem; }
.chart-canvas { width: 100%; min-height: 200px; overflow: hidden; }
.chart-canvas .uplot { font-family: inherit; }
.legend { display: flex; flex-wrap: wrap; gap: .2rem 1rem; margin: .3rem 0; padding: 0; list-style: none; font-size: .9rem; }
.swatch { display: inline-block; width: .8em; height: .8em; border-radius: 2px; margin-right: .35em; vertical-align: -0.05em; background: var(--chart, var(--chart-skipped)); }
details.data > summary { cursor: pointer; color: var(--link); }
svg.spark { display: block; }
svg.spark rect { fill: var(--chart-running); }
svg.spark rect.base { fill: var(--line); }
.secret { display: flex; flex-wrap: wrap; gap: .5rem; align-items: center; }
.secret code { padding: .3rem .5rem; background: var(--surface); border: 1px solid var(--line); border-radius: 6px; word-break: break-all; }
ol.timeline { list-style: none; padding-left: 0; border-left: 2px solid var(--line); }
ol.timeline > li { margin: 0 0 .8rem; padding-left: .8rem; }
ol.timeline details { display: inline-block; vertical-align: top; width: calc(100% - 5rem); }
ol.timeline summary { cursor: pointer; }
@media (max-width: 40rem) {
  header.top { padding: .5rem .7rem; }
  header.top nav { order: 3; width: 100%; }
  main { padding: .8rem .7rem 2.5rem; }
  dl { grid-template-columns: minmax(0, 1fr); gap: 0; }
  dd { margin-bottom: .5rem; }
  ol.timeline details { width: 100%; }
  .table-wrap td, .table-wrap th { min-width: 6.5rem; }
  .card .count { font-size: 1.3rem; }
}
`;
