import type { GatewayRegistration } from '../../application/ports/GatewayRegistry.js';
import type { Logger } from '../../application/ports/Logger.js';
import type { ReplicaLeases } from '../../application/ports/ReplicaLeases.js';
import { errorText } from '../../domain/errors.js';

/** How often a gateway renews its lease on a shared job store. */
export const LEASE_RENEW_MS = 10_000;
/** How long a lease holds without renewal: after that the other gateways recover its runs. */
export const LEASE_MS = 30_000;

/**
 * Holds this gateway's lease on a shared job store (docs/scaling.md): taken at start, renewed
 * every 10 s for 30 s, given up at stop. A renewal that fails (the database away) is logged once,
 * and its end once; the renewals go on. Returns the function that stops renewing and releases it.
 */
export async function holdReplicaLease(leases: ReplicaLeases, registration: GatewayRegistration, log: Logger): Promise<() => Promise<void>> {
  const claimant = `${registration.host}:${registration.pid}`;
  const renew = () => leases.renew({ ...registration, claimant, leaseUntil: new Date(Date.now() + LEASE_MS) });
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
  }, LEASE_RENEW_MS);
  timer.unref();
  return async () => {
    clearInterval(timer);
    await leases.release(claimant);
  };
}
