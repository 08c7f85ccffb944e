import { mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PosixProcessTreeKiller, treeMembers, type SendSignal } from '../../../src/adapters/process/PosixProcessTreeKiller.js';
import { parseProcStat, PsTreeListing, type ProcessEntry } from '../../../src/adapters/process/processTable.js';
import { RecordingLogger } from '../../support/fakes/RecordingLogger.js';
import { eventually, isRunning } from '../../support/processLiveness.js';
import {
  descendsFrom,
  killRecorded,
  liveSessionMembers,
  newSession,
  procStat,
  startTree,
  writeTreeScripts,
  type StartedTree,
} from '../../support/processTrees.js';

let dir: string;
let tree: StartedTree | undefined;

beforeEach(() => {
  dir = realpathSync(mkdtempSync(join(tmpdir(), 'agent-tree-kill-')));
  writeTreeScripts(dir);
  tree = undefined;
});

afterEach(() => {
  killRecorded(tree);
  rmSync(dir, { recursive: true, force: true });
});

const allGone = (pids: readonly number[]) => eventually(() => pids.every((pid) => !isRunning(pid)));

/** Sends real signals and remembers each one. */
function recordingSignals(refuseKillOf: readonly number[] = []): { sent: Array<[number, NodeJS.Signals | 0]>; send: SendSignal } {
  const sent: Array<[number, NodeJS.Signals | 0]> = [];
  return {
    sent,
    send: (pid, signal) => {
      sent.push([pid, signal]);
      if (signal === 'SIGKILL' && refuseKillOf.includes(pid)) {
        throw Object.assign(new Error(`kill ${pid}: operation not permitted`), { code: 'EPERM' });
      }
      process.kill(pid, signal);
    },
  };
}

describe('PosixProcessTreeKiller.killTree', () => {
  it('kills the root, its children and its grandchildren', async () => {
    tree = await startTree(
      dir,
      `sh -c 'echo "$$ child" >> "$PIDS"; sh "$DIR/sleeper.sh" grandchild-1 & sh "$DIR/sleeper.sh" grandchild-2 & wait' &
       sh "$DIR/sleeper.sh" sibling &
       wait`,
      ['child', 'grandchild-1', 'grandchild-2', 'sibling'],
    );

    const report = await new PosixProcessTreeKiller().killTree(tree.rootPid);

    expect(report).toEqual({ rootPid: tree.rootPid, killed: [...tree.pids()].sort((a, b) => a - b), survivors: [], fallback: false });
    expect(await allGone(tree.pids())).toBe(true);
  });

  it('finds the tree through ps-tree as well, for systems without /proc', async () => {
    tree = await startTree(
      dir,
      `sh -c 'echo "$$ child" >> "$PIDS"; sh "$DIR/sleeper.sh" grandchild & wait' &
       wait`,
      ['child', 'grandchild'],
    );

    const report = await new PosixProcessTreeKiller({ listing: new PsTreeListing() }).killTree(tree.rootPid);

    expect(report.killed).toEqual(expect.arrayContaining(tree.pids()));
    expect(report.survivors).toEqual([]);
    expect(await allGone(tree.pids())).toBe(true);
  });

  it('kills a child that moved to its own session with setsid, and what that child started', async () => {
    tree = await startTree(
      dir,
      `${newSession(dir)} sh -c 'echo "$$ escaped" >> "$PIDS"; sh "$DIR/sleeper.sh" below-escaped & wait' &
       wait`,
      ['escaped', 'below-escaped'],
    );
    expect(procStat(tree.pid('escaped'))?.sid).not.toBe(tree.rootPid);

    const report = await new PosixProcessTreeKiller().killTree(tree.rootPid);

    expect(report.killed).toEqual(expect.arrayContaining([tree.pid('escaped'), tree.pid('below-escaped')]));
    expect(await allGone(tree.pids())).toBe(true);
  });

  it('kills a double-forked daemon that stayed in the root’s session, though init is now its parent', async () => {
    tree = await startTree(dir, `sh -c 'sh "$DIR/sleeper.sh" daemon &'\nexec sleep 300`, ['daemon']);
    const daemon = tree.pid('daemon');
    expect(await eventually(() => !descendsFrom(daemon, tree!.rootPid))).toBe(true);

    const report = await new PosixProcessTreeKiller().killTree(tree.rootPid);

    expect(report.killed).toContain(daemon);
    expect(await allGone(tree.pids())).toBe(true);
  });

  it('cannot find a double-forked daemon that left the session once its parent exited (documented limit)', async () => {
    tree = await startTree(dir, `sh -c '${newSession(dir, { parentExits: true })} sh "$DIR/sleeper.sh" daemon &'\nexec sleep 300`, [
      'daemon',
    ]);
    const daemon = tree.pid('daemon');
    expect(await eventually(() => !descendsFrom(daemon, tree!.rootPid))).toBe(true);
    expect(procStat(daemon)?.sid).toBe(daemon);

    const report = await new PosixProcessTreeKiller().killTree(tree.rootPid);

    expect(report.killed).not.toContain(daemon);
    expect(await allGone([tree.rootPid])).toBe(true);
    expect(isRunning(daemon)).toBe(true);
  });

  it('leaves nothing of a tree that keeps forking while it is being killed', async () => {
    tree = await startTree(
      dir,
      `i=0
       while [ $i -lt 500 ]; do sh "$DIR/sleeper.sh" forked & i=$((i+1)); sleep 0.005; done
       wait`,
      Array.from({ length: 10 }, () => 'forked'),
    );

    const report = await new PosixProcessTreeKiller().killTree(tree.rootPid);

    expect(report.survivors).toEqual([]);
    expect(await allGone(tree.pids())).toBe(true);
    expect(await eventually(() => liveSessionMembers(tree!.rootPid).length === 0)).toBe(true);
  });

  it('kills a member that was stopped before cleanup', async () => {
    tree = await startTree(dir, `sh "$DIR/sleeper.sh" stopped &\nwait`, ['stopped']);
    const stopped = tree.pid('stopped');
    process.kill(stopped, 'SIGSTOP');
    expect(await eventually(() => procStat(stopped)?.state === 'T')).toBe(true);

    const report = await new PosixProcessTreeKiller().killTree(tree.rootPid);

    expect(report.killed).toContain(stopped);
    expect(await allGone(tree.pids())).toBe(true);
  });

  it('when termination fails, continues the members it stopped and leaves stopped the one stopped before', async () => {
    tree = await startTree(
      dir,
      `${newSession(dir)} sh "$DIR/sleeper.sh" running-before &
       ${newSession(dir)} sh "$DIR/sleeper.sh" stopped-before &
       sh "$DIR/sleeper.sh" ordinary &
       wait`,
      ['running-before', 'stopped-before', 'ordinary'],
    );
    const runningBefore = tree.pid('running-before');
    const stoppedBefore = tree.pid('stopped-before');
    process.kill(stoppedBefore, 'SIGSTOP');
    expect(await eventually(() => procStat(stoppedBefore)?.state === 'T')).toBe(true);
    const signals = recordingSignals([runningBefore, stoppedBefore]);
    const logger = new RecordingLogger();

    const report = await new PosixProcessTreeKiller({ sendSignal: signals.send, logger }).killTree(tree.rootPid);

    expect(report.survivors).toEqual([runningBefore, stoppedBefore].sort((a, b) => a - b));
    expect(report.fallback).toBe(true);
    expect(report.killed).toEqual(expect.arrayContaining([tree.rootPid, tree.pid('ordinary')]));
    expect(signals.sent).toContainEqual([runningBefore, 'SIGSTOP']);
    expect(signals.sent).toContainEqual([runningBefore, 'SIGCONT']);
    expect(signals.sent.filter(([pid]) => pid === stoppedBefore).map(([, signal]) => signal)).toEqual(['SIGKILL']);
    expect(procStat(runningBefore)?.state).not.toBe('T');
    expect(procStat(stoppedBefore)?.state).toBe('T');
    expect(logger.entries).toContainEqual(expect.objectContaining({ level: 'warn', message: expect.stringMatching(/best-effort/) }));
    expect(await allGone([tree.rootPid, tree.pid('ordinary')])).toBe(true);

    killRecorded(tree);
    expect(await allGone(tree.pids())).toBe(true);
  });

  it('falls back to killing the process group, and says so, when the processes cannot be listed', async () => {
    tree = await startTree(dir, `sh "$DIR/sleeper.sh" in-group &\nwait`, ['in-group']);
    const logger = new RecordingLogger();
    const unlistable = {
      list: () => Promise.reject(new Error('no /proc, no ps')),
      aliveAmong: async (pids: readonly number[]) => pids.filter(isRunning),
    };

    const report = await new PosixProcessTreeKiller({ listing: unlistable, logger }).killTree(tree.rootPid);

    expect(report).toMatchObject({ rootPid: tree.rootPid, fallback: true });
    expect(logger.entries).toContainEqual(expect.objectContaining({ level: 'warn', message: expect.stringMatching(/best-effort/) }));
    expect(await allGone(tree.pids())).toBe(true);
  });

  it('refuses to kill a tree this process belongs to', async () => {
    const signals = recordingSignals();

    const report = await new PosixProcessTreeKiller({ sendSignal: signals.send }).killTree(process.ppid);

    expect(report).toEqual({ rootPid: process.ppid, killed: [], survivors: [process.ppid], fallback: false });
    expect(signals.sent).toEqual([]);
  });
});

describe('PosixProcessTreeKiller.signalTree', () => {
  it('delivers SIGTERM to every member and stops no one', async () => {
    tree = await startTree(
      dir,
      `sh "$DIR/sleeper.sh" obedient &
       sh -c 'trap "" TERM; exec sh "$DIR/sleeper.sh" stubborn' &
       wait`,
      ['obedient', 'stubborn'],
    );
    const signals = recordingSignals();
    const killer = new PosixProcessTreeKiller({ sendSignal: signals.send });

    const report = await killer.signalTree(tree.rootPid, 'SIGTERM');

    expect(report).toEqual({ rootPid: tree.rootPid, signalled: [...tree.pids()].sort((a, b) => a - b), refused: [], fallback: false });
    expect(new Set(signals.sent.map(([, signal]) => signal))).toEqual(new Set(['SIGTERM']));
    expect(await allGone([tree.rootPid, tree.pid('obedient')])).toBe(true);
    expect(isRunning(tree.pid('stubborn'))).toBe(true);
    expect(procStat(tree.pid('stubborn'))?.state).not.toBe('T');
  });
});

describe('treeMembers', () => {
  const entry = (pid: number, ppid: number, more: Partial<ProcessEntry> = {}): ProcessEntry => ({
    pid,
    ppid,
    state: 'S',
    pgid: 100,
    sid: 100,
    ...more,
  });

  it('follows parent links across sessions, takes the root’s session and group, and leaves the rest', () => {
    const entries = [
      entry(1, 0, { pgid: 1, sid: 1 }),
      entry(50, 1, { pgid: 50, sid: 50 }), // the service
      entry(100, 50), // root
      entry(101, 100),
      entry(102, 101, { pgid: 102, sid: 102 }), // called setsid
      entry(103, 102, { pgid: 102, sid: 102 }),
      entry(104, 1), // reparented, still in the root's session
      entry(105, 1, { pgid: 105, sid: 105 }), // reparented daemon in its own session
      entry(106, 100, { state: 'Z' }),
      entry(107, 50, { pgid: 107, sid: 107 }), // another child of the service
    ];

    expect([...treeMembers(100, entries).keys()].sort((a, b) => a - b)).toEqual([100, 101, 102, 103, 104]);
  });

  it('keeps following members already known after their parent is gone', () => {
    const entries = [entry(100, 50), entry(110, 1, { pgid: 110, sid: 110 }), entry(111, 110, { pgid: 110, sid: 110 })];

    expect([...treeMembers(100, entries, [110]).keys()].sort((a, b) => a - b)).toEqual([100, 110, 111]);
  });
});

describe('parseProcStat', () => {
  it('reads state, parent, group and session after a command name holding spaces and parentheses', () => {
    expect(parseProcStat('4242 (odd) (name) T 4000 4100 4200 0 -1 4194304')).toEqual({
      pid: 4242,
      state: 'T',
      ppid: 4000,
      pgid: 4100,
      sid: 4200,
    });
  });

  it('returns null for text that is not a stat line', () => {
    expect(parseProcStat('')).toBeNull();
  });
});
