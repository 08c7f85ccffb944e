/**
 * The dashboard's script, served by the gateway itself under /assets/ (no CDN: the machines it
 * runs on may have no internet); the style sheet is dashboardStyles.ts (with the run pages' few
 * rules, runStyles.ts), the other scripts pageScripts.ts and chartLibrary.ts. The script
 * refreshes the parts of a page marked `data-live` when the server's live stream says they
 * changed (liveScript.ts).
 */
import { DASHBOARD_CSS as STYLES } from './dashboardStyles.js';
import { LIVE_JS } from './liveScript.js';
import { RUNS_CSS } from './runStyles.js';

export const DASHBOARD_CSS = `${STYLES}${RUNS_CSS}`;

export const DASHBOARD_JS = `
'use strict';
${LIVE_JS}
`;
