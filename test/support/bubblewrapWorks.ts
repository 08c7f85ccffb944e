import { BubblewrapSandbox } from '../../src/adapters/process/BubblewrapSandbox.js';

/**
 * Whether bubblewrap can make its sandbox on this machine (installed, user namespaces allowed),
 * probed the way the agent probes it. Tests of the sandbox skip themselves where it cannot.
 */
export async function bubblewrapWorks(): Promise<boolean> {
  const probe = new BubblewrapSandbox(
    { mode: 'auto', network: true, readable: [], writable: [] },
    { agentHome: '/nonexistent', configFile: '/nonexistent' },
  );
  return (await probe.status()).active;
}
