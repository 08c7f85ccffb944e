/**
 * What the API routes and the page routes share: the async route wrapper, a request's parameters,
 * and the event kinds of a webhook route.
 */
import type { NextFunction, Request, Response } from 'express';
import type { DashboardDependencies } from './dashboardDependencies.js';

/** The most runs a page lists. */
export const RUNS_SHOWN = 20;

/** An async route whose errors reach the error handler. */
export function handle(route: (request: Request, response: Response) => Promise<void>) {
  return (request: Request, response: Response, next: NextFunction) => void route(request, response).catch(next);
}

export function param(request: Request, name: string): string {
  const value = request.params[name];
  return typeof value === 'string' ? value : '';
}

export function reasonOf(request: Request): string | null {
  const reason = request.body?.reason;
  return typeof reason === 'string' && reason.trim() !== '' ? reason : null;
}

/** The event kinds a route takes (empty: any, or the route is not listed). */
export async function routeEvents(webhooks: DashboardDependencies['webhooks'], name: string): Promise<readonly string[]> {
  try {
    return (await webhooks.listing()).routes.find((route) => route.name === name)?.events ?? [];
  } catch {
    return [];
  }
}
