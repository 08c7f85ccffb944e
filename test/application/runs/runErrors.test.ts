import { describe, expect, it } from '@jest/globals';
import { AgentRunError } from '../../../src/application/ports/AgentRunner.js';
import {
  chatFailureReply,
  deliveryError,
  interruptedError,
  isUnexpectedFailure,
  RUN_CANCELLED,
  runError,
  runFailureMessage,
  scriptProblem,
  unexpectedFailureMessage,
} from '../../../src/application/runs/runErrors.js';

const agentError = () => new AgentRunError('failed', 'The model answered HTTP 503: overloaded.');

describe('runErrors, one mapping of failures to words for every run kind', () => {
  it('keeps an agent run error’s own sentence, and names anything else as a failed run', () => {
    expect(runFailureMessage(agentError())).toBe('The model answered HTTP 503: overloaded.');
    expect(runFailureMessage(new Error('boom'))).toBe('run failed: boom');
    expect(isUnexpectedFailure(agentError())).toBe(false);
    expect(isUnexpectedFailure(new TypeError('x is undefined'))).toBe(true);
    expect(unexpectedFailureMessage(new Error('EACCES'))).toBe('webhook event failed unexpectedly: EACCES');
    expect(chatFailureReply(agentError())).toBe('Sorry, I could not answer that: The model answered HTTP 503: overloaded.');
  });

  it('says a stopped run was interrupted, with the reason the stop gave', () => {
    const stopped = new AbortController();
    stopped.abort('the command was stopped by SIGINT');
    expect(interruptedError(stopped.signal)).toBe('interrupted: the command was stopped by SIGINT');
    const silent = new AbortController();
    silent.abort();
    expect(interruptedError(silent.signal)).toBe(`interrupted: ${RUN_CANCELLED}`);
  });

  it('records the error of each outcome', () => {
    expect(runError({ status: 'ok' })).toBeNull();
    expect(runError({ status: 'error', error: 'x' })).toBe('x');
    expect(runError({ status: 'blocked_config', error: 'y' })).toBe('y');
    expect(runError({ status: 'delivery_failed', deliveryError: 'z' } as never)).toBe('z');
  });

  it('puts what went wrong with a script in one sentence', () => {
    const result = { stdout: '', stderr: '', exitCode: 0, signal: null, timedOut: false, startProblem: null };
    expect(scriptProblem(result as never, 60_000)).toBeNull();
    expect(scriptProblem({ ...result, exitCode: 2 } as never, 60_000)).toBe('The script exited with code 2.');
    expect(scriptProblem({ ...result, timedOut: true } as never, 90_000)).toBe('The script timed out after 90 s.');
    expect(scriptProblem({ ...result, exitCode: null, signal: 'SIGKILL' } as never, 60_000)).toBe(
      'The script was ended by signal SIGKILL.',
    );
  });

  it('words a delivery failure as each kind records it', () => {
    expect(deliveryError('cron', 'telegram:1', 'bad\nrequest\u0007')).not.toMatch(/[\n\u0007]/);
    expect(deliveryError('webhook', 'telegram:1', 'bad\nrequest')).toBe('delivery to telegram:1 failed: bad\nrequest');
  });
});
