import { bubblewrapArguments, isSandboxCommandLine, visibleDirectory, type SandboxPlan } from '../../src/domain/sandboxPlan.js';

const PLAN: SandboxPlan = {
  hiddenDirectories: ['/home/ops', '/tmp', '/tmp/agent/'],
  sealedDirectories: ['/tmp/agent'],
  hiddenFiles: ['/etc/agent/config.yaml', '/home/ops/.agent.yaml'],
  readable: ['/tmp/agent/scripts', '/usr/bin/sh', '/tmp/agent/workspace/tool'],
  writable: ['/tmp/agent/workspace'],
  cwd: '/tmp/agent/workspace',
  network: true,
  dropCapabilities: false,
};

/** The pairs and triples of options, in order, as `--option arg …` strings. */
function mounts(args: string[]): string[] {
  const shown: string[] = [];
  for (let i = 0; i < args.length; i += 1) {
    const option = args[i]!;
    if (option === '--tmpfs' || option === '--remount-ro' || option === '--chdir') shown.push(`${option} ${args[++i]}`);
    else if (option === '--bind' || option === '--ro-bind') shown.push(`${option} ${args[++i]} ${args[++i]}`);
  }
  return shown;
}

describe('the sandbox plan', () => {
  test('hides the shallower directories first, seals the home after binding the workspace back, and skips what a hidden place covers', () => {
    expect(mounts(bubblewrapArguments(PLAN))).toEqual([
      '--ro-bind / /',
      '--tmpfs /tmp',
      '--tmpfs /home/ops',
      '--tmpfs /tmp/agent',
      // Read-only what lies hidden and outside the workspace; /usr/bin/sh is visible anyway.
      '--ro-bind /tmp/agent/scripts /tmp/agent/scripts',
      '--bind /tmp/agent/workspace /tmp/agent/workspace',
      // The file outside every hidden place is masked; the one in the home is hidden already.
      '--ro-bind /dev/null /etc/agent/config.yaml',
      '--remount-ro /tmp/agent',
      '--chdir /tmp/agent/workspace',
    ]);
  });

  test('seals a home that lies inside a writable directory after binding that directory, and masks a config file it reveals', () => {
    const plan: SandboxPlan = {
      ...PLAN,
      hiddenDirectories: ['/tmp'],
      sealedDirectories: ['/tmp/work/home'],
      hiddenFiles: ['/tmp/work/config.yaml'],
      readable: [],
      writable: ['/tmp/work/home/workspace', '/tmp/work'],
    };
    expect(mounts(bubblewrapArguments(plan))).toEqual([
      '--ro-bind / /',
      '--tmpfs /tmp',
      '--bind /tmp/work /tmp/work',
      '--tmpfs /tmp/work/home',
      '--bind /tmp/work/home/workspace /tmp/work/home/workspace',
      '--ro-bind /dev/null /tmp/work/config.yaml',
      '--remount-ro /tmp/work/home',
      '--chdir /tmp/agent/workspace',
    ]);
  });

  test('drops capabilities and the network only when asked, and always its own PID namespace and death with its parent', () => {
    const args = bubblewrapArguments({ ...PLAN, network: false, dropCapabilities: true });
    expect(args.slice(0, 6)).toEqual(['--die-with-parent', '--unshare-pid', '--unshare-ipc', '--unshare-net', '--cap-drop', 'ALL']);
    expect(bubblewrapArguments(PLAN)).not.toContain('--unshare-net');
    expect(bubblewrapArguments(PLAN)).not.toContain('--cap-drop');
  });

  test('never hides the root itself', () => {
    expect(mounts(bubblewrapArguments({ ...PLAN, hiddenDirectories: ['/'], sealedDirectories: [] }))).not.toContain('--tmpfs /');
  });

  test('starts where the child can see, else in the workspace', () => {
    expect(visibleDirectory(PLAN, '/srv/app')).toBe('/srv/app');
    expect(visibleDirectory(PLAN, '/tmp/agent/scripts')).toBe('/tmp/agent/scripts');
    expect(visibleDirectory(PLAN, '/home/ops/project')).toBe('/tmp/agent/workspace');
  });

  test('knows its own command line from another bwrap', () => {
    const ours = ['/usr/bin/bwrap', ...bubblewrapArguments(PLAN), '--', 'sh'].join('\0');
    expect(isSandboxCommandLine(ours)).toBe(true);
    expect(isSandboxCommandLine(['bwrap', '--ro-bind', '/', '/', '--', 'sh'].join('\0'))).toBe(false);
    expect(isSandboxCommandLine(['sh', '--setenv', 'AGENT_SANDBOX', 'bwrap'].join('\0'))).toBe(false);
  });
});
