import 'reflect-metadata';
import { Container } from 'inversify';
import { PosixProcessTreeKiller } from '../../src/adapters/process/PosixProcessTreeKiller.js';
import { TOKENS } from '../../src/application/ports/tokens.js';
import { runtimeModule } from '../../src/composition/modules/runtimeModule.js';
import { RecordingLogger } from '../support/fakes/RecordingLogger.js';

describe('runtimeModule', () => {
  it('binds the POSIX process-tree killer on this platform, once for every user', () => {
    const container = new Container();
    container.bind(TOKENS.Logger).toConstantValue(new RecordingLogger());
    container.load(runtimeModule);

    const killer = container.get(TOKENS.ProcessTreeKiller);

    expect(killer).toBeInstanceOf(PosixProcessTreeKiller);
    expect(container.get(TOKENS.ProcessTreeKiller)).toBe(killer);
  });
});
