import type { GatewayRegistration, GatewayRegistry } from '../../src/application/ports/GatewayRegistry.js';

const mine: GatewayRegistration = {
  pid: 10,
  host: 'h',
  startedAt: '2026-03-01T12:00:00.000Z',
  listener: '127.0.0.1:8644',
  provider: 'built-in ticker',
};

/**
 * What every store of a home's gateway registration promises: the fake and the file. (Gateways
 * sharing a database register in its leases: see the ReplicaLeases contract.) `make` gives an
 * empty registry.
 */
export function describeGatewayRegistryContract(
  name: string,
  make: () => Promise<{ registry: GatewayRegistry; cleanup?: () => Promise<void> }>,
): void {
  describe(`${name} (GatewayRegistry contract)`, () => {
    let registry: GatewayRegistry;
    let cleanup: (() => Promise<void>) | undefined;

    beforeEach(async () => {
      ({ registry, cleanup } = await make());
    });

    afterEach(async () => {
      await cleanup?.();
    });

    it('reads back what was registered, and nothing before', async () => {
      expect(await registry.read()).toBeNull();
      await registry.register(mine);
      expect(await registry.read()).toEqual(mine);
    });

    it('keeps where each chat receiver stands, and the next states written', async () => {
      const receivers = [
        { platform: 'slack', state: 'down' as const, since: '2026-03-01T12:00:01.000Z', error: 'auth.test failed (HTTP 503)' },
        { platform: 'telegram', state: 'up' as const, since: '2026-03-01T12:00:02.000Z', error: null },
      ];
      await registry.register({ ...mine, chatReceivers: receivers });
      expect(await registry.read()).toEqual({ ...mine, chatReceivers: receivers });
      await registry.register({ ...mine, chatReceivers: [{ ...receivers[0]!, state: 'up', error: null }, receivers[1]!] });
      expect((await registry.read())?.chatReceivers?.map((receiver) => receiver.state)).toEqual(['up', 'up']);
    });

    it('replaces a registration with the next one', async () => {
      await registry.register(mine);
      await registry.register({ ...mine, pid: 11, listener: null });
      expect(await registry.read()).toEqual({ ...mine, pid: 11, listener: null });
    });

    it("removes only its own registration: another gateway's is left alone", async () => {
      await registry.register(mine);
      await registry.unregister({ ...mine, pid: 11 });
      await registry.unregister({ ...mine, host: 'other' });
      expect(await registry.read()).toEqual(mine);
      await registry.unregister(mine);
      expect(await registry.read()).toBeNull();
      await expect(registry.unregister(mine)).resolves.toBeUndefined();
    });
  });
}
