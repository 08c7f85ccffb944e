import type { GatewayRegistration } from '../../application/ports/GatewayRegistry.js';
import type { Logger } from '../../application/ports/Logger.js';
import type { ReplicaLeases } from '../../application/ports/ReplicaLeases.js';
import { errorText } from '../../domain/errors.js';

/** How long a lease holds without renewal when `database.lease_seconds` is not set. */
export const DEFAULT_LEASE_SECONDS = 30;

/** A lease held on a shared store: `update` changes what it says (the listener, the provider, the chat receivers) and renews it at once. */
export interface HeldLease {
  update(change: Partial<Pick<GatewayRegistration, 'listener' | 'provider' | 'chatReceivers'>>): Promise<void>;
  /** Stops renewing and gives the lease up. */
  release(): Promise<void>;
}

/**
 * Holds this gateway's lease on a shared store (docs/scaling.md): taken at start, renewed every
 * third of `leaseMs` for `leaseMs` (`database.lease_seconds`, 30 s by default), given up at stop.
 * A renewal that fails (the database away) is logged once, and its end once; the renewals go on.
 */
export async function holdReplicaLease(leases: ReplicaLeases, registration: GatewayRegistration, leaseMs: number, log: Logger): Promise<HeldLease> {
  const claimant = `${registration.host}:${registration.pid}`;
  let current = registration;
  const renew = () => leases.renew({ ...current, claimant, leaseUntil: new Date(Date.now() + leaseMs) });
  await renew();
  let failing = false;
  const timer = setInterval(() => {
    renew().then(
      () => {
        if (failing) log.info('the gateway lease is renewed again');
        failing = false;
      },
      (error: unknown) => {
        if (!failing) log.error(`the gateway lease could not be renewed; other gateways recover this one's runs once it lapses: ${errorText(error)}`);
        failing = true;
      },
    );
  }, Math.max(1000, Math.floor(leaseMs / 3)));
  timer.unref();
  return {
    update: async (change) => {
      current = { ...current, ...change };
      await renew();
    },
    release: async () => {
      clearInterval(timer);
      await leases.release(claimant);
    },
  };
}
