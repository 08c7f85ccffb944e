import { once } from 'node:events';
import { createHmac, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ChildProcess } from 'node:child_process';
import { eventually } from '../support/processLiveness.js';
import { registerCleanup } from '../support/testProcesses.js';
import { createJob, errorSentence, inAScratchHomeEachTest, runAgent, startGatewayUntil, writeHomeFile } from './agentCli.js';

const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';

/** The receiver's own check (docs/events.md): HMAC-SHA256 of "<id>.<timestamp>.<body>" with the whsec_ key. */
function verifies(headers: IncomingHttpHeaders, body: string): boolean {
  const key = Buffer.from(SECRET.slice('whsec_'.length), 'base64');
  const expected = createHmac('sha256', key).update(`${headers['webhook-id']}.${headers['webhook-timestamp']}.${body}`).digest();
  return String(headers['webhook-signature'] ?? '')
    .split(' ')
    .some((each) => each.startsWith('v1,') && timingSafeEqual(Buffer.from(each.slice(3), 'base64'), expected));
}

interface Received {
  id: string;
  verified: boolean;
  body: { type: string; data: Record<string, unknown> };
}

/** A receiver on 127.0.0.1 answering each request with the next of `statuses` (the last from then on). */
async function receiver(statuses: number[]): Promise<{ url: string; received: Received[] }> {
  const received: Received[] = [];
  const server: Server = createServer((request, response) => {
    let body = '';
    request.setEncoding('utf8').on('data', (chunk: string) => (body += chunk));
    request.on('end', () => {
      received.push({
        id: String(request.headers['webhook-id']),
        verified: verifies(request.headers, body),
        body: JSON.parse(body) as Received['body'],
      });
      response.writeHead(statuses.length > 1 ? statuses.shift()! : statuses[0]!).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  registerCleanup(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/events`, received };
}

async function configure(home: string, url: string, events: string): Promise<void> {
  const { readFile } = await import('node:fs/promises');
  const { join } = await import('node:path');
  const config = await readFile(join(home, 'config.yaml'), 'utf8');
  await writeHomeFile(
    home,
    'config.yaml',
    `${config}events_out:\n  hook:\n    url: ${url}\n    secret: ${SECRET}\n    events: [${events}]\n    first_retry_seconds: 0.2\n`,
  );
}

describe('run events out through the bundle', () => {
  let home: string;
  const running: ChildProcess[] = [];
  // Before the home is removed (hooks run in the order they are declared): a gateway still
  // writing its outbox there would leave the removal a directory that is not empty.
  afterEach(async () => {
    await Promise.all(
      running.splice(0).map(async (child) => {
        if (child.exitCode !== null || child.signalCode !== null) return;
        const exited = once(child, 'exit');
        child.kill('SIGKILL');
        await exited;
      }),
    );
  });
  inAScratchHomeEachTest((scratch) => (home = scratch));

  it('sends a run event the command line added until the receiver takes it, signed, with one webhook-id', async () => {
    const { url, received } = await receiver([500, 500, 200]);
    await configure(home, url, 'run.finished');
    const id = await createJob(home, ['every 1h', 'Say hello', '--name', 'hello', '--deliver', 'local']);
    const { gateway, output } = await startGatewayUntil(home, 'gateway started');
    running.push(gateway);

    const ran = await runAgent(['cron', 'run', id, '--no-tick'], { home });
    expect(ran.code).toBe(0);

    expect(await eventually(() => received.length >= 3, 20_000)).toBe(true);
    expect(received).toHaveLength(3);
    expect(new Set(received.map((each) => each.id)).size).toBe(1);
    expect(received.every((each) => each.verified)).toBe(true);
    expect(received[0]!.body).toMatchObject({ type: 'run.finished', data: { kind: 'cron', subject: id, name: 'hello', status: 'ok' } });
    expect(output()).toContain('is tried again later: the receiver answered HTTP 500');
  });

  it('lists an event the receiver refused in "agent events failed --json", and "agent events resend" sends it again with its id', async () => {
    const { url, received } = await receiver([400, 200]);
    await configure(home, url, 'job.paused');
    const id = await createJob(home, ['every 1h', 'Say hello', '--name', 'hello', '--deliver', 'local']);
    const { gateway } = await startGatewayUntil(home, 'gateway started');
    running.push(gateway);

    expect((await runAgent(['cron', 'pause', id, '--no-tick'], { home })).code).toBe(0);
    expect(await eventually(() => received.length === 1, 20_000)).toBe(true);

    let failed: Array<Record<string, unknown>> = [];
    // The gateway records the refusal just after the receiver answered: looked at until it has, with a deadline.
    for (const deadline = Date.now() + 20_000; failed.length === 0 && Date.now() < deadline;) {
      failed = JSON.parse((await runAgent(['events', 'failed', '--json'], { home })).stdout) as Array<Record<string, unknown>>;
    }
    expect(failed[0]).toEqual({
      subscription: 'hook',
      event_id: received[0]!.id,
      type: 'job.paused',
      timestamp: expect.any(String),
      created_at: expect.any(String),
      failed_at: expect.any(String),
      attempts: 1,
      error: 'the receiver answered HTTP 400',
    });

    const unknown = await runAgent(['events', 'resend', 'msg_none'], { home });
    const neither = await runAgent(['events', 'resend'], { home });
    const resent = await runAgent(['events', 'resend', received[0]!.id], { home });

    expect(unknown.code).toBe(1);
    expect(errorSentence(unknown)).toBe('error: No event given up on has the id msg_none; "agent events failed" lists them.');
    expect(neither.code).toBe(2);
    expect(neither.stderr).toContain('Give the id of the event to resend (see "agent events failed"), or --all.');
    expect(resent.code).toBe(0);
    expect(resent.stdout).toBe(`Event ${received[0]!.id} waits again for events_out.hook; the gateway sends it.\n`);
    expect(await eventually(() => received.length === 2, 20_000)).toBe(true);
    expect(received[1]!.id).toBe(received[0]!.id);
    expect(received[1]!.verified).toBe(true);
    expect(JSON.parse((await runAgent(['events', 'failed', '--json'], { home })).stdout)).toEqual([]);
  });

  it('"agent events test" sends one sample event and prints the status; a refusal is one sentence and exit code 1', async () => {
    const { url, received } = await receiver([204, 503]);
    await configure(home, url, 'run.failed');

    const taken = await runAgent(['events', 'test', 'hook'], { home });
    expect(taken.code).toBe(0);
    expect(taken.stdout).toMatch(/^events_out\.hook: .* answered HTTP 204 to event msg_test_\d+\.\n$/);
    expect(received).toEqual([expect.objectContaining({ verified: true, body: expect.objectContaining({ type: 'event.test' }) })]);

    const refused = await runAgent(['events', 'test', 'hook'], { home });
    expect(refused.code).toBe(1);
    expect(errorSentence(refused)).toMatch(
      /^error: The receiver of events_out\.hook at .* did not take the sample event: it answered HTTP 503\.$/,
    );

    const unknown = await runAgent(['events', 'test', 'nope'], { home });
    expect(unknown.code).toBe(1);
    expect(errorSentence(unknown)).toBe("error: No events_out subscription is named 'nope' (the subscriptions are hook).");
  });
});
