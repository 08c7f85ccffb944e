import type { GatewayRegistration } from '../../application/ports/GatewayRegistry.js';
import type { Logger } from '../../application/ports/Logger.js';
import type { LeaseRenewal, ReplicaLeases } from '../../application/ports/ReplicaLeases.js';
import { errorText } from '../../domain/errors.js';

/** How long a lease holds without renewal when `database.lease_seconds` is not set. */
export const DEFAULT_LEASE_SECONDS = 30;
/** How soon a renewal that failed is tried again. */
const RETRY_MS = 1000;

/** A lease held on a shared store: `update` changes what it says (the listener, the provider, the chat receivers) and renews it at once. */
export interface HeldLease {
  update(change: Partial<Pick<GatewayRegistration, 'listener' | 'provider' | 'chatReceivers'>>): Promise<void>;
  /** Stops renewing and gives the lease up. */
  release(): Promise<void>;
}

/**
 * Holds this gateway's lease on a shared store (docs/scaling.md,
 * docs/adr/0014-no-run-twice-after-an-outage.md): taken at start, renewed every third of `leaseMs`
 * for `leaseMs` (`database.lease_seconds`, 30 s by default), given up at stop. A renewal that
 * fails (the database away) is logged once, and tried again every second, so that the lease is
 * renewed within a second of the database's return, long before any other gateway may judge it
 * gone; the store stops this gateway's claims meanwhile. The end of the failure is logged once,
 * saying whether the lease had lapsed and whether other gateways took its runs over.
 */
export async function holdReplicaLease(
  leases: ReplicaLeases,
  registration: GatewayRegistration,
  leaseMs: number,
  log: Logger,
): Promise<HeldLease> {
  const claimant = `${registration.host}:${registration.pid}`;
  let current = registration;
  let failing = false;
  let stopped = false;
  const renew = () => leases.renew({ ...current, claimant, leaseUntil: new Date(Date.now() + leaseMs) }, leaseMs).then(renewed, failed);
  const renewed = (renewal: LeaseRenewal) => {
    if (renewal.state === 'lost') {
      log.warn(
        'the gateway lease had lapsed and other gateways took over the runs it held; what those runs finish here is not recorded as done (the other gateways run them), and this gateway holds a new lease now',
        { epoch: renewal.epoch },
      );
    } else if (renewal.state === 'resumed') {
      log.info('the gateway lease is renewed again; it had lapsed, but no other gateway took over its runs', { epoch: renewal.epoch });
    } else if (failing) {
      log.info('the gateway lease is renewed again');
    }
    failing = false;
  };
  const failed = (error: unknown) => {
    if (!failing) {
      log.error(
        `the gateway lease could not be renewed; this gateway starts no run until it is renewed (tried again every second), and other gateways recover its runs only if it stays away for a whole lease once they can reach the database: ${errorText(error)}`,
      );
    }
    failing = true;
  };
  // The first renewal takes the lease; failing, the gateway does not start.
  await leases.renew({ ...current, claimant, leaseUntil: new Date(Date.now() + leaseMs) }, leaseMs);
  const every = Math.max(1000, Math.floor(leaseMs / 3));
  let timer: NodeJS.Timeout;
  let renewing: Promise<void> = Promise.resolve();
  const schedule = (ms: number) => {
    timer = setTimeout(() => {
      renewing = renew().finally(() => {
        if (!stopped) schedule(failing ? RETRY_MS : every);
      });
    }, ms);
    timer.unref();
  };
  schedule(every);
  return {
    update: async (change) => {
      current = { ...current, ...change };
      await leases.renew({ ...current, claimant, leaseUntil: new Date(Date.now() + leaseMs) }, leaseMs).then(renewed);
    },
    release: async () => {
      stopped = true;
      clearTimeout(timer);
      // A renewal under way would take the lease again after it was given up.
      await renewing;
      await leases.release(claimant);
    },
  };
}
