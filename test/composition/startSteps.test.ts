import { describe, expect, it } from '@jest/globals';
import { StartSteps } from '../../src/composition/gateway/startSteps.js';

const settled = () => new Promise((resolve) => setImmediate(resolve));

describe('StartSteps, the gateway start as a list of steps', () => {
  it('starts the steps in order and stops them in reverse, the stops registered at the end first', async () => {
    const order: string[] = [];
    const steps = new StartSteps(new Promise(() => undefined));
    expect(
      await steps.step(
        'a',
        () => order.push('start a') && 'A',
        (a) => order.push(`stop ${a}`),
      ),
    ).toBe('A');
    await steps.step(
      'b',
      async () => order.push('start b'),
      () => order.push('stop b'),
    );
    await steps.step('c', () => order.push('start c'));
    steps.atStop('runs', () => order.push('stop runs'));
    await steps.stopAll(() => undefined);
    expect(order).toEqual(['start a', 'start b', 'start c', 'stop runs', 'stop b', 'stop A']);
  });

  it('starts nothing more once a stop was asked for, and stops only what started', async () => {
    let ask!: (reason: string) => void;
    const steps = new StartSteps(new Promise<string>((resolve) => (ask = resolve)));
    const order: string[] = [];
    await steps.step(
      'first',
      () => order.push('start first'),
      () => order.push('stop first'),
    );
    ask('SIGTERM');
    await settled();
    expect(steps.stopping).toBe(true);
    expect(
      await steps.step(
        'second',
        () => order.push('start second'),
        () => order.push('stop second'),
      ),
    ).toBeNull();
    steps.atStop('runs', () => order.push('stop runs'));
    await steps.stopAll(() => undefined);
    expect(order).toEqual(['start first', 'stop runs', 'stop first']);
  });

  it('runs every stop when one fails, and says which failed', async () => {
    const steps = new StartSteps(new Promise(() => undefined));
    const stopped: string[] = [];
    await steps.step(
      'lease',
      () => undefined,
      () => stopped.push('lease'),
    );
    await steps.step(
      'registration',
      () => undefined,
      () => {
        throw new Error('disk full');
      },
    );
    const failed: string[] = [];
    await steps.stopAll((name, error) => failed.push(`${name}: ${(error as Error).message}`));
    expect(failed).toEqual(['registration: disk full']);
    expect(stopped).toEqual(['lease']);
  });

  it('lets a failing start stop the start-up, with the steps started so far still stopped after', async () => {
    const steps = new StartSteps(new Promise(() => undefined));
    const stopped: string[] = [];
    await steps.step(
      'changes',
      () => undefined,
      () => stopped.push('changes'),
    );
    await expect(steps.step('listener', () => Promise.reject(new Error('port 8644 is in use')))).rejects.toThrow('port 8644 is in use');
    await steps.stopAll(() => undefined);
    expect(stopped).toEqual(['changes']);
  });
});
