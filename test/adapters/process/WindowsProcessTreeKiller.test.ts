import { taskkillArgv, WindowsProcessTreeKiller, type RunProgram } from '../../../src/adapters/process/WindowsProcessTreeKiller.js';
import { RecordingLogger } from '../../support/fakes/RecordingLogger.js';

/** Stands in for taskkill, which these tests never run: answers with `exitCode`, records argv. */
function fakeTaskkill(exitCode: number | null, output = ''): { calls: string[][]; run: RunProgram } {
  const calls: string[][] = [];
  return { calls, run: async (argv) => (calls.push([...argv]), { exitCode, output }) };
}

describe('taskkillArgv', () => {
  it('force-kills the whole tree with taskkill from System32', () => {
    expect(taskkillArgv(4242, 'force', 'C:\\Windows')).toEqual(['C:\\Windows\\System32\\taskkill.exe', '/T', '/F', '/PID', '4242']);
  });

  it('leaves out /F for a graceful request', () => {
    expect(taskkillArgv(4242, 'graceful', 'D:\\WINNT')).toEqual(['D:\\WINNT\\System32\\taskkill.exe', '/T', '/PID', '4242']);
  });

  it.each([0, -1, 1.5, Number.NaN])('refuses %p as a pid', (pid) => {
    expect(() => taskkillArgv(pid, 'force', 'C:\\Windows')).toThrow(RangeError);
  });
});

describe('WindowsProcessTreeKiller', () => {
  it('runs the forced tree kill and reports the root killed', async () => {
    const taskkill = fakeTaskkill(0);

    const report = await new WindowsProcessTreeKiller({ systemRoot: 'C:\\Windows', run: taskkill.run }).killTree(4242);

    expect(taskkill.calls).toEqual([['C:\\Windows\\System32\\taskkill.exe', '/T', '/F', '/PID', '4242']]);
    expect(report).toEqual({ rootPid: 4242, killed: [4242], survivors: [], fallback: false });
  });

  it('reports nothing killed and nothing left when the process was already gone', async () => {
    const report = await new WindowsProcessTreeKiller({ run: fakeTaskkill(128).run }).killTree(4242);

    expect(report).toEqual({ rootPid: 4242, killed: [], survivors: [], fallback: false });
  });

  it('reports the root as a survivor and warns when taskkill fails', async () => {
    const logger = new RecordingLogger();

    const report = await new WindowsProcessTreeKiller({ run: fakeTaskkill(1, 'ERROR: Access is denied.').run, logger }).killTree(4242);

    expect(report).toEqual({ rootPid: 4242, killed: [], survivors: [4242], fallback: false });
    expect(logger.entries).toEqual([expect.objectContaining({ level: 'warn', message: expect.stringContaining('Access is denied') })]);
  });

  it('asks the tree to close without /F for a graceful signal', async () => {
    const taskkill = fakeTaskkill(0);

    const report = await new WindowsProcessTreeKiller({ systemRoot: 'C:\\Windows', run: taskkill.run }).signalTree(4242, 'SIGTERM');

    expect(taskkill.calls).toEqual([['C:\\Windows\\System32\\taskkill.exe', '/T', '/PID', '4242']]);
    expect(report).toEqual({ rootPid: 4242, signalled: [4242], refused: [], fallback: false });
  });
});
