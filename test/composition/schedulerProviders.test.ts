import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { YamlConfigLoader } from '../../src/adapters/config/YamlConfigLoader.js';
import { providerSettings } from '../../src/composition/schedulerProviders.js';

describe("a plugin provider's settings", () => {
  let home: string;
  beforeEach(() => (home = mkdtempSync(join(tmpdir(), 'agent-provider-settings-'))));
  afterEach(() => rmSync(home, { recursive: true, force: true }));

  it('are its cron.<name> section of config.yaml', () => {
    writeFileSync(join(home, 'config.yaml'), 'cron:\n  provider: my-scheduler\n  my-scheduler:\n    endpoint: https://scheduler.example\n');
    const { config } = new YamlConfigLoader(join(home, 'config.yaml')).load();

    expect(providerSettings(config, 'my-scheduler')).toEqual({ endpoint: 'https://scheduler.example' });
  });
});
