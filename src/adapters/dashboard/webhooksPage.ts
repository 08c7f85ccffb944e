/**
 * The webhooks page (docs/dashboard.md, Webhooks): every route and subscription with its events
 * per hour and its last delivery; a form that makes a subscription (its secret shown once), a
 * confirmed removal, and a test event whose outcome the page shows as the run goes.
 */
import type { ListedWebhookRun } from '../../application/webhook/ListWebhookRuns.js';
import type { WebhookRoute } from '../../domain/webhook/WebhookRoute.js';
import { html, type Html } from './html.js';
import { csrfField, layout, postButton, statusBadge, table, when, type PageContext } from './pageShell.js';

/** What the New subscription form holds. */
export interface SubscriptionFormValues {
  name: string;
  events: string;
  prompt: string;
  deliver: string;
  chat_id: string;
  deliver_only: boolean;
}

export const EMPTY_SUBSCRIPTION: SubscriptionFormValues = {
  name: '',
  events: '',
  prompt: '',
  deliver: '',
  chat_id: '',
  deliver_only: false,
};

/** A route as the page lists it: the route, its events per hour over the last 24 hours (the current hour last) and its runs, newest first. */
export interface ListedRoute {
  route: WebhookRoute;
  perHour: number[];
  runs: ListedWebhookRun[];
}

/** A test event sent from the page, followed until its run ends. */
export interface TestedEvent {
  route: string;
  deliveryId: string;
  /** Its run, once the listener recorded one. */
  run: ListedWebhookRun | null;
}

function deliveryOf(route: WebhookRoute): string {
  const chatId = route.deliverExtra?.chat_id;
  return chatId ? `${route.deliver}:${chatId}` : route.deliver;
}

/** 24 bars of a route's events per hour, drawn on the server (no script), with the counts in words beside. */
function sparkline(perHour: readonly number[]): Html {
  const highest = Math.max(1, ...perHour);
  const total = perHour.reduce((sum, count) => sum + count, 0);
  const bars = perHour.map((count, index) => {
    const height = count === 0 ? 0 : Math.max(2, Math.round((count / highest) * 20));
    return html`<rect x="${index * 4}" y="${22 - height}" width="3" height="${height}"></rect>`;
  });
  return html`<svg class="spark" width="96" height="22" viewBox="0 0 96 22" aria-hidden="true" focusable="false"><rect class="base" x="0" y="21" width="96" height="1"></rect>${bars}</svg><span>${total} in 24 h, ${perHour[perHour.length - 1] ?? 0} this hour</span>`;
}

function runLink(run: ListedWebhookRun): Html {
  return run.ledger
    ? html`<a href="/runs/${encodeURIComponent(run.eventId)}">Details<span class="muted"> of run ${run.eventId}</span></a>`
    : html`-`;
}

function lastDelivery(run: ListedWebhookRun | undefined, timeZone: string): Html {
  if (!run) return html`<span class="muted">none yet</span>`;
  return html`${when(run.receivedAt, timeZone)} ${statusBadge(run.outcome)} ${runLink(run)}`;
}

function routeRow(context: PageContext, listed: ListedRoute): Html {
  const { route } = listed;
  const name = encodeURIComponent(route.name);
  const actions =
    route.source === 'subscription'
      ? html`${postButton(context, `/webhooks/${name}/test`, 'Send test event')}<form class="inline" method="get" action="/webhooks/${name}/remove"><button type="submit">Remove</button></form>`
      : html`<span class="muted">in config.yaml</span>`;
  return html`<tr><th scope="row">${route.name}</th><td>${route.source === 'config' ? 'config.yaml' : 'subscription'}</td><td>${route.events.length > 0 ? route.events.join(', ') : 'any'}</td><td>${deliveryOf(route)}</td><td>${sparkline(listed.perHour)}</td><td>${lastDelivery(listed.runs[0], context.timeZone)}</td><td>${actions}</td></tr>`;
}

/** Where a test event stands: served alone under /fragments/webhooks/test for its live refresh. */
export function testedEventView(tested: TestedEvent, timeZone: string): Html {
  const { run } = tested;
  if (!run) return html`<p>Test event ${tested.deliveryId} to ${tested.route}: ${statusBadge('pending', 'waiting for its run')}</p>`;
  return html`<p>Test event ${tested.deliveryId} to ${tested.route}, received ${when(run.receivedAt, timeZone)}: ${statusBadge(run.outcome)}${run.error ? html` <span>${run.error}</span>` : null} ${runLink(run)}</p>`;
}

function subscriptionForm(context: PageContext, values: SubscriptionFormValues): Html {
  return html`<form class="stacked" method="post" action="/webhooks">
${csrfField(context)}
<label>Name<input name="name" type="text" required maxlength="64" value="${values.name}" placeholder="github-prs"></label>
<label>Events<input name="events" type="text" value="${values.events}" placeholder="comma-separated, e.g. pull_request, push (empty: any)"></label>
<label>Prompt<textarea name="prompt" placeholder="e.g. Review {pull_request.title} (empty: the whole payload)">${values.prompt}</textarea></label>
<label>Deliver<input name="deliver" type="text" value="${values.deliver}" placeholder="log (the default), repo_comment, telegram, slack, …"></label>
<label>Chat id<input name="chat_id" type="text" value="${values.chat_id}" placeholder="the platform's home channel when empty"></label>
<label class="check"><input name="deliver_only" type="checkbox" value="yes"${values.deliver_only ? html` checked` : null}>Deliver only: send the rendered template as it is, without running the agent</label>
<button type="submit" class="primary">Create subscription</button>
</form>`;
}

export function webhooksPage(
  context: PageContext,
  view: { routes: ListedRoute[]; search: string; tested: TestedEvent | null; form: SubscriptionFormValues },
): Html {
  const testedPart = view.tested
    ? html`<section aria-labelledby="tested"><h2 id="tested">Test event</h2><div data-live="/fragments/webhooks/test?route=${encodeURIComponent(view.tested.route)}&amp;delivery=${encodeURIComponent(view.tested.deliveryId)}">${testedEventView(view.tested, context.timeZone)}</div></section>`
    : null;
  return layout(
    context,
    'Webhooks',
    html`${testedPart}
<form class="inline" method="get" action="/webhooks" role="search" aria-label="Filter the routes">
<label for="search">Search</label>
<input id="search" name="q" type="search" value="${view.search}" placeholder="a route's name">
<button type="submit">Filter</button>
</form>
${table(
  'Routes and subscriptions',
  ['Name', 'Source', 'Events', 'Delivers to', 'Events per hour, last 24 h', 'Last delivery', 'Actions'],
  view.routes.map((listed) => routeRow(context, listed)),
  view.search !== ''
    ? 'No route matches.'
    : 'No route yet: make a subscription below, add one in config.yaml, or use "agent webhook subscribe".',
)}
<section aria-labelledby="new-subscription"><h2 id="new-subscription">New subscription</h2>
<p class="muted">Served at once at /webhooks/&lt;name&gt; on the webhook listener, as "agent webhook subscribe" makes it; its signing secret is generated and shown once.</p>
${subscriptionForm(context, view.form)}
</section>
${view.routes
  .filter((listed) => listed.runs.length > 0)
  .map(
    (listed) => html`<section aria-label="Route ${listed.route.name}">
<h2>${listed.route.name} <span class="muted">(${listed.route.source === 'config' ? 'config.yaml' : 'subscription'})</span></h2>
${table(
  `Recent events of ${listed.route.name}`,
  ['Received', 'Event', 'Delivery id', 'Outcome', 'Run'],
  listed.runs
    .slice(0, 10)
    .map(
      (run) =>
        html`<tr><td>${when(run.receivedAt, context.timeZone)}</td><td>${run.event}</td><td>${run.deliveryId}</td><td>${statusBadge(run.outcome)}</td><td>${runLink(run)}</td></tr>`,
    ),
  'No events yet.',
)}
</section>`,
  )}`,
  );
}

/** The page a new subscription is answered with: its URL and its secret, shown this once. */
export function subscribedPage(context: PageContext, view: { route: WebhookRoute; url: string; secret: string }): Html {
  return layout(
    context,
    `Subscription ${view.route.name} created`,
    html`<p>Senders sign each delivery with this secret (HMAC-SHA256, as docs/webhooks.md says). <strong>It is shown this once</strong>: copy it now; "agent webhook list" never shows it.</p>
<dl>
<dt>URL</dt><dd><code>${view.url}</code></dd>
<dt>Secret</dt><dd class="secret"><code id="secret">${view.secret}</code><button type="button" data-copy="secret" hidden>Copy</button></dd>
<dt>Events</dt><dd>${view.route.events.length > 0 ? view.route.events.join(', ') : 'any'}</dd>
<dt>Delivers to</dt><dd>${deliveryOf(view.route)}</dd>
</dl>
<p><a href="/webhooks">Back to the webhooks</a></p>`,
  );
}

export function removeSubscriptionPage(context: PageContext, name: string): Html {
  return layout(
    context,
    `Remove subscription ${name}?`,
    html`<p>The listener stops serving /webhooks/${name} at once: deliveries to it are refused from then on. Its recent runs stay in the run ledger. This cannot be undone.</p>
${postButton(context, `/webhooks/${encodeURIComponent(name)}/remove`, 'Remove', html`<input type="hidden" name="confirm" value="yes">`, 'danger')}
<a href="/webhooks">Cancel</a>`,
  );
}
