import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { dashboardProblems, dashboardSettingsFrom } from '../../../src/adapters/config/dashboardSettings.js';
import { YamlConfigLoader } from '../../../src/adapters/config/YamlConfigLoader.js';

describe('the dashboard settings', () => {
  let home: string;
  beforeEach(() => (home = mkdtempSync(join(tmpdir(), 'agent-dashboard-config-'))));
  afterEach(() => rmSync(home, { recursive: true, force: true }));

  const load = (lines: string[]) => {
    const file = join(home, 'config.yaml');
    writeFileSync(file, ['dashboard:', '  enabled: true', ...lines.map((line) => `  ${line}`), ''].join('\n'));
    return () => new YamlConfigLoader(file).load().config;
  };
  const problems = (lines: string[], env: NodeJS.ProcessEnv = {}) => dashboardProblems(load(lines)(), env, 'config.yaml');

  it('reads allowed_hosts and trust_proxy, off and unset by default', () => {
    expect(dashboardSettingsFrom(load([])(), {})).toMatchObject({ allowedHosts: null, trustProxy: false });
    expect(
      dashboardSettingsFrom(
        load(['allowed_hosts: [" dash.example.com ", "192.168.1.5", "[fd00::5]", "fd00::6"]', 'trust_proxy: true'])(),
        {},
      ),
    ).toMatchObject({
      allowedHosts: ['dash.example.com', '192.168.1.5', '[fd00::5]', 'fd00::6'],
      trustProxy: true,
    });
  });

  it('refuses an allowed host with a scheme or a port, and a trust_proxy that is not true or false', () => {
    expect(load(['allowed_hosts: ["https://dash.example.com"]'])).toThrow(
      /dashboard\.allowed_hosts\[0\] must be a host name or address without a scheme or port, such as dash\.example\.com/,
    );
    expect(load(['allowed_hosts: [dash.example.com, "dash.example.com:8645"]'])).toThrow(
      /dashboard\.allowed_hosts\[1\] must be a host name or address without a scheme or port/,
    );
    expect(load(['allowed_hosts: dash.example.com'])).toThrow(/dashboard\.allowed_hosts must be a list of host names/);
    expect(load(['trust_proxy: "yes"'])).toThrow(/dashboard\.trust_proxy must be true or false/);
  });

  it('refuses a token shorter than 128 bits (22 characters) beyond loopback, saying where it came from', () => {
    expect(problems(['host: 0.0.0.0'], { AGENT_DASHBOARD_TOKEN: 'x' })).toEqual([
      {
        effect: 'refused',
        key: 'dashboard.token',
        message:
          'config.yaml: dashboard.host is 0.0.0.0, which other machines can reach, and AGENT_DASHBOARD_TOKEN is only 1 character long; set a token of at least 22 characters (128 bits), such as the output of "openssl rand -base64 24", or set dashboard.host to 127.0.0.1.',
      },
    ]);
    expect(problems(['host: 192.168.1.5', 'token: twenty-one-characters'])).toEqual([
      expect.objectContaining({ key: 'dashboard.token', message: expect.stringContaining('dashboard.token is only 21 characters long') }),
    ]);
    expect(problems(['host: 0.0.0.0', 'token: twenty-two-characters!'])).toEqual([]);
    expect(problems(['host: 127.0.0.1'], { AGENT_DASHBOARD_TOKEN: 'x' })).toEqual([]);
    expect(problems(['host: ::1', 'token: x'])).toEqual([]);
  });

  it('still refuses a dashboard others can reach without a token, and ignores allowed_hosts without one', () => {
    expect(problems(['host: 0.0.0.0'])).toEqual([
      expect.objectContaining({
        effect: 'refused',
        key: 'dashboard.host',
        message: expect.stringContaining('and no dashboard token is set'),
      }),
    ]);
    expect(problems(['allowed_hosts: [dash.example.com]'])).toEqual([
      expect.objectContaining({ effect: 'ignored', key: 'dashboard.allowed_hosts' }),
    ]);
    expect(problems(['allowed_hosts: [dash.example.com]'], { AGENT_DASHBOARD_TOKEN: 'x' })).toEqual([]);
  });
});
