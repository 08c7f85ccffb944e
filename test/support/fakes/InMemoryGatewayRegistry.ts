import type { GatewayRegistration, GatewayRegistry } from '../../../src/application/ports/GatewayRegistry.js';

/** A GatewayRegistry in memory: one registration or none. */
export class InMemoryGatewayRegistry implements GatewayRegistry {
  constructor(public registration: GatewayRegistration | null = null) {}

  async read(): Promise<GatewayRegistration | null> {
    return this.registration ? { ...this.registration } : null;
  }

  async register(registration: GatewayRegistration): Promise<void> {
    this.registration = { ...registration };
  }

  async unregister(registration: GatewayRegistration): Promise<void> {
    if (this.registration && (this.registration.pid !== registration.pid || this.registration.host !== registration.host)) return;
    this.registration = null;
  }
}
