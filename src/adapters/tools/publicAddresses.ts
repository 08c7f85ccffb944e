import { lookup as dnsLookup, type LookupAddress, type LookupOptions } from 'node:dns';
import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';

/** Which IP addresses a fetch may connect to. */
export type AddressPolicy = (address: string) => boolean;

/**
 * Public unicast addresses only: no loopback, private (RFC 1918, unique-local), link-local
 * (cloud metadata services live there), carrier-grade NAT, multicast, broadcast, unspecified,
 * reserved or documentation ranges, and no IPv6 forms that carry an IPv4 address inside
 * (6to4, Teredo, NAT64), since what they lead to cannot be told. An IPv4-mapped IPv6 address
 * (`::ffff:a.b.c.d`) and an IPv4-compatible one (`::a.b.c.d`, written `::7f00:1` too) are judged
 * as the IPv4 address they hold: ipaddr.js calls every address of ::/96 but `::` and `::1`
 * unicast, and `::127.0.0.1` or `::a9fe:a9fe` (the metadata service) would pass for public.
 * `::` and `::1` stay refused, as 0.0.0.0 and 0.0.0.1 are.
 */
export const publicAddressesOnly: AddressPolicy = (address) => {
  try {
    return withIPv4Inside(ipaddr.process(address)).range() === 'unicast';
  } catch {
    return false;
  }
};

/** An IPv4-compatible IPv6 address (its first 96 bits zero) as its last 32 bits; any other as it is. */
function withIPv4Inside(parsed: ipaddr.IPv4 | ipaddr.IPv6): ipaddr.IPv4 | ipaddr.IPv6 {
  if (parsed.kind() !== 'ipv6') return parsed;
  const bytes = parsed.toByteArray();
  return bytes.slice(0, 12).every((byte) => byte === 0) ? ipaddr.fromByteArray(bytes.slice(12)) : parsed;
}

/** A URL's host as an IP address, when it is one (`[::1]` included); null for a name. */
export function ipLiteralOf(url: URL): string | null {
  const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
  return isIP(host) === 0 ? null : host;
}

/** The refusal for a connection the policy does not allow; its message is what the model is told. */
export class AddressRefused extends Error {
  constructor(
    readonly host: string,
    readonly address: string,
  ) {
    super(
      host === address
        ? `${address} is a loopback, private or otherwise non-public address`
        : `${host} resolves to ${address}, a loopback, private or otherwise non-public address`,
    );
  }
}

type LookupCallback = (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/**
 * A `lookup` for net.connect that resolves the name and refuses the connection when any of its
 * addresses is outside `policy`. Checked when the connection is made, with the addresses it is
 * made to, so a name that answers differently a moment later (DNS rebinding) gains nothing.
 */
export function policedLookup(policy: AddressPolicy) {
  return (hostname: string, options: LookupOptions, callback: LookupCallback): void => {
    dnsLookup(hostname, { ...options, all: true }, (error, addresses) => {
      if (error) return callback(error, []);
      const refused = addresses.find((entry) => !policy(entry.address));
      if (refused) return callback(new AddressRefused(hostname, refused.address), []);
      if (options.all) return callback(null, addresses);
      const first = addresses[0];
      if (!first) return callback(Object.assign(new Error(`${hostname} has no address`), { code: 'ENOTFOUND' }), []);
      callback(null, first.address, first.family);
    });
  };
}
