/**
 * The webhooks page's routes (webhooksPage.ts) over the use cases of `agent webhook subscribe`,
 * `remove`, `list`, `runs` and `test`. Every POST here is behind the session's CSRF token or the
 * bearer token, as every change of the dashboard (dashboardApp.ts).
 */
import type { Express, Request } from 'express';
import { ERROR_CODES } from '../../domain/errorCodes.js';
import { AppError, InvalidWebhookError } from '../../domain/errors.js';
import { countPerHour } from '../../domain/runs/runStatistics.js';
import { listenerVerdict, testEventSentence } from '../../domain/webhook/listenerAnswer.js';
import { subscriptionRoute } from '../../domain/webhook/WebhookSubscription.js';
import type { DashboardDependencies } from './dashboardDependencies.js';
import { pageResponses } from './dashboardPages.js';
import { handle, param, routeEvents } from './routeHelpers.js';
import {
  EMPTY_SUBSCRIPTION,
  removeSubscriptionPage,
  subscribedPage,
  testedEventView,
  webhooksPage,
  type ListedRoute,
  type SubscriptionFormValues,
  type TestedEvent,
} from './webhooksPage.js';

/** How many webhook runs the page reads: enough for the last 24 hours of busy routes and each route's last delivery. */
const RUNS_READ = 1000;

function commaList(text: string): string[] | undefined {
  const items = text
    .split(',')
    .map((item) => item.trim())
    .filter((item) => item !== '');
  return items.length > 0 ? items : undefined;
}

function subscriptionValues(request: Request): SubscriptionFormValues {
  const field = (name: string) => (typeof request.body?.[name] === 'string' ? (request.body[name] as string) : '');
  return {
    name: field('name').trim(),
    events: field('events'),
    prompt: field('prompt'),
    deliver: field('deliver').trim(),
    chat_id: field('chat_id').trim(),
    deliver_only: field('deliver_only') !== '',
  };
}

export function registerWebhookPages(app: Express, deps: DashboardDependencies): void {
  const { context, page, said } = pageResponses(deps);
  const now = () => deps.clock?.now() ?? new Date();

  const routesPage = async (request: Request, form: SubscriptionFormValues) => {
    const search = typeof request.query.q === 'string' ? request.query.q.trim() : '';
    const [listing, runs] = await Promise.all([deps.webhooks.listing(), deps.webhooks.runs(RUNS_READ)]);
    const at = now();
    const routes: ListedRoute[] = listing.routes
      .filter((route) => search === '' || route.name.toLowerCase().includes(search.toLowerCase()))
      .map((route) => {
        const own = runs.filter((run) => run.route === route.name);
        return {
          route,
          runs: own,
          perHour: countPerHour(
            own.map((run) => run.receivedAt),
            at,
            24,
          ),
        };
      });
    const tested = testedOf(request, runs);
    const problems = [...listing.unusable.flatMap((route) => route.problems), ...listing.subscriptionProblems];
    if (listing.storeProblem !== null) problems.push(`No subscription is listed or served: ${listing.storeProblem}`);
    return { routes, search, tested, form, problems };
  };

  /** The test event the address names (`tested`, `delivery`), with its run when one is recorded. */
  const testedOf = (request: Request, runs: Awaited<ReturnType<DashboardDependencies['webhooks']['runs']>>): TestedEvent | null => {
    const route =
      typeof request.query.tested === 'string' ? request.query.tested : typeof request.query.route === 'string' ? request.query.route : '';
    const deliveryId = typeof request.query.delivery === 'string' ? request.query.delivery : '';
    if (route === '' || deliveryId === '') return null;
    return { route, deliveryId, run: runs.find((run) => run.route === route && run.deliveryId === deliveryId) ?? null };
  };

  app.get(
    '/webhooks',
    handle(async (request, response) => {
      page(response, webhooksPage(context(response, said(request)), await routesPage(request, EMPTY_SUBSCRIPTION)));
    }),
  );
  // Where a test event sent from the page stands, for its live refresh.
  app.get(
    '/fragments/webhooks/test',
    handle(async (request, response) => {
      const tested = testedOf(request, await deps.webhooks.runs(RUNS_READ));
      if (tested === null) return void response.status(404).type('text').send('Name the route and the delivery id (?route=…&delivery=…).');
      page(response, testedEventView(tested, deps.timeZone));
    }),
  );

  app.post(
    '/webhooks',
    handle(async (request, response) => {
      const form = subscriptionValues(request);
      try {
        const listing = await deps.webhooks.listing();
        if (listing.routes.some((route) => route.source === 'subscription' && route.name === form.name)) {
          throw new InvalidWebhookError(
            ERROR_CODES.WEBHOOK.NAME_TAKEN,
            `A subscription named "${form.name}" exists already; choose another name, or remove that one first.`,
          );
        }
        const { subscription } = await deps.webhooks.subscribe({
          name: form.name,
          events: commaList(form.events),
          prompt: form.prompt.trim() === '' ? null : form.prompt,
          deliver: form.deliver === '' ? null : form.deliver,
          deliverChatId: form.chat_id === '' ? null : form.chat_id,
          deliverOnly: form.deliver_only,
        });
        page(
          response,
          subscribedPage(context(response, { notice: `Created webhook subscription ${subscription.name}.` }), {
            route: subscriptionRoute(subscription),
            url: deps.webhooks.urlOf(subscription.name),
            secret: subscription.secret,
          }),
          201,
        );
      } catch (error) {
        if (!(error instanceof AppError)) throw error;
        page(response, webhooksPage(context(response, { problem: error.message }), await routesPage(request, form)), 400);
      }
    }),
  );

  app.get(
    '/webhooks/:name/remove',
    handle(async (request, response) => {
      page(response, removeSubscriptionPage(context(response), param(request, 'name')));
    }),
  );
  app.post(
    '/webhooks/:name/remove',
    handle(async (request, response) => {
      const name = param(request, 'name');
      if (request.body?.confirm !== 'yes') return void response.redirect(303, `/webhooks/${encodeURIComponent(name)}/remove`);
      try {
        const removed = await deps.webhooks.remove(name);
        response.redirect(303, `/webhooks?done=${encodeURIComponent(`Removed webhook subscription ${removed.name}.`)}`);
      } catch (error) {
        if (!(error instanceof AppError)) throw error;
        response.redirect(303, `/webhooks?problem=${encodeURIComponent(error.message)}`);
      }
    }),
  );

  app.post(
    '/webhooks/:name/test',
    handle(async (request, response) => {
      const name = param(request, 'name');
      try {
        const sent = await deps.webhooks.sendTest(name);
        // An event the route ignored ran nothing: that is said as a problem, with the reason.
        const verdict = listenerVerdict(sent.status, sent.body);
        const sentence = testEventSentence(verdict, await routeEvents(deps.webhooks, name));
        const followed =
          verdict.kind === 'accepted' && verdict.deliveryId
            ? `&tested=${encodeURIComponent(name)}&delivery=${encodeURIComponent(verdict.deliveryId)}`
            : '';
        response.redirect(303, `/webhooks?${verdict.kind === 'accepted' ? 'done' : 'problem'}=${encodeURIComponent(sentence)}${followed}`);
      } catch (error) {
        if (!(error instanceof AppError)) throw error;
        response.redirect(303, `/webhooks?problem=${encodeURIComponent(error.message)}`);
      }
    }),
  );
}
