/**
 * The dashboard's style sheet and script, served by the gateway itself under /assets/ (no CDN:
 * the machines it runs on may have no internet). The script refreshes the parts of a page
 * marked `data-live` when the server's live stream says they changed (liveScript.ts).
 */
import { LIVE_JS } from './liveScript.js';
import { RUNS_CSS } from './runStyles.js';

export const DASHBOARD_CSS = `
:root { color-scheme: light dark; --line: #8884; --muted: #777; --bad: #c0392b; --good: #2e7d32; }
* { box-sizing: border-box; }
body { font: 15px/1.45 system-ui, sans-serif; margin: 0; }
header { display: flex; gap: 1.5rem; align-items: center; padding: .6rem 1.2rem; border-bottom: 1px solid var(--line); flex-wrap: wrap; }
header strong { font-size: 1.05rem; }
header nav a { margin-right: 1rem; }
header form { margin-left: auto; }
main { padding: 1rem 1.2rem 3rem; max-width: 75rem; }
h1 { font-size: 1.35rem; margin: .3rem 0 1rem; }
h2 { font-size: 1.1rem; margin: 1.6rem 0 .6rem; }
table { border-collapse: collapse; width: 100%; margin: .4rem 0 1rem; }
th, td { text-align: left; padding: .35rem .6rem; border-bottom: 1px solid var(--line); vertical-align: top; }
th { font-weight: 600; }
dl { display: grid; grid-template-columns: max-content 1fr; gap: .3rem 1rem; }
dt { font-weight: 600; }
dd { margin: 0; }
pre { white-space: pre-wrap; word-break: break-word; background: #8881; padding: .6rem; border-radius: 4px; margin: .2rem 0 .8rem; }
form.inline { display: inline-flex; gap: .4rem; align-items: center; margin: 0 .6rem .6rem 0; }
form.stacked { display: grid; gap: .6rem; max-width: 40rem; }
form.stacked label { display: grid; gap: .2rem; font-weight: 600; }
input, select, textarea, button { font: inherit; padding: .3rem .5rem; }
textarea { min-height: 6rem; }
button { cursor: pointer; }
.problem { color: var(--bad); font-weight: 600; }
.notice { color: var(--good); font-weight: 600; }
.muted { color: var(--muted); }
ol.timeline { list-style: none; padding-left: 0; border-left: 2px solid var(--line); }
ol.timeline > li { margin: 0 0 .8rem; padding-left: .8rem; }
ol.timeline details { display: inline-block; vertical-align: top; width: calc(100% - 5rem); }
ol.timeline summary { cursor: pointer; }
.cards { display: flex; gap: 1rem; flex-wrap: wrap; margin-bottom: 1rem; }
.card { border: 1px solid var(--line); border-radius: 6px; padding: .6rem .9rem; min-width: 11rem; }
.card b { display: block; font-size: 1.4rem; }
${RUNS_CSS}`;

export const DASHBOARD_JS = `
'use strict';
${LIVE_JS}
`;
