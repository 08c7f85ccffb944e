/**
 * What every dashboard page is built in: the page itself (head, header with the navigation and
 * the menu on the right, main), tables in their scrolling wrapper, forms that post with the CSRF
 * token, status badges and times.
 */
import { wallClockAt } from '../../domain/zonedTime.js';
import { html, type Html } from './html.js';

/** What every page of a signed-in user carries. */
export interface PageContext {
  timeZone: string;
  /** The session's CSRF token, put in every form that changes something. */
  csrf: string;
  /** Whether signing in (and so signing out) is a thing: a token is set. */
  signedIn: boolean;
  /** A sentence saying what just happened, or what was refused. */
  notice?: string | null;
  problem?: string | null;
  /** The path of the page asked for, which marks its entry of the navigation as the current page. */
  path?: string;
}

/** What a page adds to the head: style sheets and scripts of /assets/, after the dashboard's own. */
export interface PageAssets {
  styles?: readonly string[];
  scripts?: readonly string[];
}

const pad = (value: number) => String(value).padStart(2, '0');

/** `YYYY-MM-DD HH:MM:SS` in `timeZone`; `-` for none. */
export function when(iso: string | Date | null, timeZone: string): string {
  if (iso === null) return '-';
  const instant = typeof iso === 'string' ? new Date(iso) : iso;
  if (Number.isNaN(instant.getTime())) return String(iso);
  const c = wallClockAt(instant, timeZone);
  return `${c.year}-${pad(c.month)}-${pad(c.day)} ${pad(c.hour)}:${pad(c.minute)}:${pad(c.second)}`;
}

export function csrfField(context: PageContext): Html {
  return html`<input type="hidden" name="csrf" value="${context.csrf}">`;
}

/** A form of one button that posts to `action` (with the CSRF token); `kind` `primary` or `danger` colours the button. */
export function postButton(
  context: PageContext,
  action: string,
  label: string,
  extra: Html | null = null,
  kind: 'primary' | 'danger' | null = null,
): Html {
  return html`<form class="inline" method="post" action="${action}">${csrfField(context)}${extra}<button type="submit"${kind ? html` class="${kind}"` : null}>${label}</button></form>`;
}

/**
 * A status word as a coloured badge: `<span class="badge status-<word>">`. The style sheet
 * (dashboardStyles.ts) gives every run status, webhook run outcome, job state and delivery
 * outcome a tone with AA contrast in light and dark; `label` is the text shown (the word itself
 * by default). Null and undefined show as `-`.
 */
export function statusBadge(status: string | null | undefined, label: string | null = null): Html {
  if (status === null || status === undefined || status === '') return html`<span class="badge status-none">-</span>`;
  const tone = status.replace(/[^a-z0-9_-]/gi, '_');
  return html`<span class="badge status-${tone}">${label ?? status}</span>`;
}

/** The entries of the navigation: its label, where it goes, and the paths it is the current page of. */
const NAVIGATION: ReadonlyArray<{ label: string; href: string; current: (path: string) => boolean }> = [
  { label: 'Overview', href: '/', current: (path) => path === '/' },
  { label: 'Jobs', href: '/jobs', current: (path) => path === '/jobs' || (path.startsWith('/jobs/') && path !== '/jobs/new') },
  { label: 'Runs', href: '/runs', current: (path) => path === '/runs' || path.startsWith('/runs/') },
  { label: 'Webhooks', href: '/webhooks', current: (path) => path === '/webhooks' || path.startsWith('/webhooks/') },
  { label: 'New job', href: '/jobs/new', current: (path) => path === '/jobs/new' },
];

/** The menu on the right of the header: the keyboard shortcuts, and Sign out when signing in is a thing. */
function menu(context: PageContext): Html {
  return html`<details class="menu">
<summary>Menu</summary>
<div class="menu-body">
<p><b>Keyboard</b></p>
<p><kbd>/</kbd> search · <kbd>g</kbd> <kbd>o</kbd> overview · <kbd>g</kbd> <kbd>j</kbd> jobs · <kbd>g</kbd> <kbd>r</kbd> runs · <kbd>g</kbd> <kbd>w</kbd> webhooks</p>
${context.signedIn ? postButton(context, '/sign-out', 'Sign out') : html`<p class="muted">No sign-in: this dashboard has no token.</p>`}
</div>
</details>`;
}

function head(title: string, assets: PageAssets): Html {
  return html`<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark">
<title>${title} · agent</title>
<link rel="stylesheet" href="/assets/dashboard.css">
${(assets.styles ?? []).map((href) => html`<link rel="stylesheet" href="${href}">`)}
<script src="/assets/dashboard.js" defer></script>
<script src="/assets/shortcuts.js" defer></script>
${(assets.scripts ?? []).map((src) => html`<script src="${src}" defer></script>`)}`;
}

export function layout(context: PageContext, title: string, body: Html, assets: PageAssets = {}): Html {
  const path = context.path ?? '';
  return html`<!doctype html>
<html lang="en">
<head>
${head(title, assets)}
</head>
<body>
<a class="skip" href="#main">Skip to the page</a>
<header class="top">
<a class="brand" href="/">agent</a>
<nav aria-label="Main">${NAVIGATION.map((entry) => html`<a href="${entry.href}"${entry.current(path) ? html` aria-current="page"` : null}>${entry.label}</a>`)}</nav>
${menu(context)}
</header>
<main id="main">
<h1>${title}</h1>
${context.notice ? html`<p class="notice" role="status">${context.notice}</p>` : null}
${context.problem ? html`<p class="problem" role="alert">${context.problem}</p>` : null}
${body}
</main>
</body>
</html>`;
}

export function signInPage(problem: string | null): Html {
  return html`<!doctype html>
<html lang="en">
<head>
${head('Sign in', {})}
</head>
<body>
<main id="main">
<h1>Sign in</h1>
${problem ? html`<p class="problem" role="alert">${problem}</p>` : null}
<form class="stacked" method="post" action="/sign-in">
<label for="token">Token</label>
<input id="token" name="token" type="password" autocomplete="current-password" required autofocus>
<button type="submit" class="primary">Sign in</button>
</form>
</main>
</body>
</html>`;
}

/** A header of `table`: its text, and `number` for a column of numbers (right-aligned). */
export type TableHeader = string | { text: string; number: true };

/**
 * A table with its caption (its accessible name) and column headers, in a wrapper that scrolls
 * sideways on its own when the table is wider than the page; `empty` is said instead when there
 * are no rows.
 */
export function table(caption: string, headers: readonly TableHeader[], rows: readonly Html[], empty: string): Html {
  if (rows.length === 0) return html`<p class="muted">${empty}</p>`;
  const th = (header: TableHeader) =>
    typeof header === 'string' ? html`<th scope="col">${header}</th>` : html`<th scope="col" class="number">${header.text}</th>`;
  return html`<div class="table-wrap" tabindex="0" role="region" aria-label="${caption}"><table><caption>${caption}</caption><thead><tr>${headers.map(th)}</tr></thead><tbody>${rows}</tbody></table></div>`;
}
