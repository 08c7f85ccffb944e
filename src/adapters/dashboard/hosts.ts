import { hostname, networkInterfaces } from 'node:os';

/** The names of this machine the dashboard always answers at: no other site's page can be addressed to them. */
export const LOOPBACK_NAMES: readonly string[] = ['localhost', '127.0.0.1', '::1'];

/** A host name or address as compared: lower case, an IPv6 address without its brackets. */
export function normalHost(host: string): string {
  return host
    .trim()
    .toLowerCase()
    .replace(/^\[(.*)\]$/, '$1');
}

/**
 * The host a `Host` (or `X-Forwarded-Host`) value names, without its port, normalised; null when
 * it names none (missing, empty, or not a host with an optional port).
 */
export function hostOfHeader(value: string | undefined): string | null {
  const text = (value ?? '').trim();
  const bracketed = /^\[([0-9a-fA-F:.]+)\](?::\d{1,5})?$/.exec(text);
  if (bracketed) return normalHost(bracketed[1]!);
  const named = /^([^\s:[\]/@]+)(?::\d{1,5})?$/.exec(text);
  return named ? normalHost(named[1]!) : null;
}

/**
 * The names a dashboard with a token answers at by default, besides the loopback names: the
 * address it listens on, or for a wildcard address (0.0.0.0, ::) every address of this machine
 * and its host name.
 */
export function defaultAllowedHosts(listenHost: string): string[] {
  const host = normalHost(listenHost);
  if (host !== '0.0.0.0' && host !== '::') return [host];
  const addresses = Object.values(networkInterfaces()).flatMap((entries) =>
    (entries ?? []).map((entry) => normalHost(entry.address.replace(/%.*$/, ''))),
  );
  return [...new Set([...addresses, normalHost(hostname())])];
}
