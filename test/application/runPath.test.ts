import { AgentRunError } from '../../src/application/ports/AgentRunner.js';
import { cronHarness } from '../support/cronHarness.js';

const HOUR = 3_600_000;

async function dueJob(h: ReturnType<typeof cronHarness>, input: Partial<Parameters<typeof h.createJob.execute>[0]> = {}) {
  const job = await h.createJob.execute({ schedule: 'every 1h', prompt: 'Summarise the inbox', name: 'Inbox', ...input });
  h.clock.advance(HOUR);
  return job;
}

describe('the run path', () => {
  it('refuses to spend a run when no model is configured', async () => {
    const h = cronHarness();
    h.agent.configured = false;
    const job = await dueJob(h);

    await h.runDueJobs.execute();

    expect(h.agent.requests).toHaveLength(0);
    expect(h.repository.get(job.id)).toMatchObject({ last_status: 'blocked_config', repeat: { completed: 0 } });
    expect(h.repository.get(job.id)!.last_error).toContain('No model is configured');
  });

  it('refuses a job whose provider override is unknown', async () => {
    const h = cronHarness();
    const job = await dueJob(h, { provider: 'nonesuch' });

    await h.runDueJobs.execute();

    expect(h.repository.get(job.id)!.last_status).toBe('blocked_config');
    expect(h.repository.get(job.id)!.last_error).toContain('nonesuch');
  });

  it('refuses a job that delivers to a platform that is not configured', async () => {
    const h = cronHarness();
    const job = await dueJob(h, { deliver: 'slack:#ops' });

    await h.runDueJobs.execute();

    expect(h.agent.requests).toHaveLength(0);
    expect(h.repository.get(job.id)!.last_status).toBe('blocked_config');
    expect(h.repository.get(job.id)!.last_error).toContain('platforms.slack');
  });

  it('refuses a job whose script is no longer inside the scripts directory', async () => {
    const h = cronHarness();
    h.scripts.scripts['check.sh'] = { stdout: 'fine' };
    const job = await dueJob(h, { script: 'check.sh' });
    delete h.scripts.scripts['check.sh'];

    await h.runDueJobs.execute();

    expect(h.repository.get(job.id)!.last_status).toBe('blocked_config');
  });

  it('gives a fresh session memory, then each skill in order, then the task, and no job tool', async () => {
    const h = cronHarness();
    h.memory.documents.push({ name: 'MEMORY.md', content: 'The user is Ada.' });
    h.skills.skills['triage'] = 'How to triage.';
    h.skills.skills['tone'] = 'Be brief.';
    await dueJob(h, { skills: ['triage', 'missing', 'tone'] });

    await h.runDueJobs.execute();

    const [request] = h.agent.requests;
    expect(request!.context.system).toEqual([{ name: 'MEMORY.md', content: 'The user is Ada.' }]);
    expect(request!.context.skills.map((s) => s.name)).toEqual(['triage', 'missing', 'tone']);
    expect(request!.context.skills[1]!.content).toContain('was not found');
    expect(request!.context.task).toMatch(/unattended[\s\S]*\[SILENT\][\s\S]*Summarise the inbox$/);
    expect(request!.toolsets).not.toContain('cronjob');
    expect(h.log.entries.some((e) => e.level === 'warn' && e.message.includes('missing'))).toBe(true);
  });

  it('puts the script output before the prompt', async () => {
    const h = cronHarness();
    h.scripts.scripts['probe.sh'] = { stdout: 'disk 91% full\n' };
    await dueJob(h, { script: 'probe.sh' });

    await h.runDueJobs.execute();

    expect(h.agent.requests[0]!.context.task).toContain('## Script Output\n\ndisk 91% full\n\nSummarise the inbox');
  });

  it.each([
    ['its exit code', { exitCode: 3, stderr: 'no network\n' }, 'The script exited with code 3.\n\nno network'],
    ['the timeout', { exitCode: null, timedOut: true, stderr: 'waiting\n' }, 'The script timed out after 3600 s.\n\nwaiting'],
    [
      'the signal that ended it',
      { exitCode: null, signal: 'SIGKILL', stderr: 'going down\n' },
      'The script was ended by signal SIGKILL.\n\ngoing down',
    ],
    [
      'why it could not be started',
      { exitCode: null, startProblem: 'The script "probe.sh" could not be started (ENOENT); check its shebang line.' },
      'The script "probe.sh" could not be started (ENOENT); check its shebang line.\n\nSummarise the inbox',
    ],
  ])('gives the agent a Script Error block naming %s, and still runs it', async (_what, result, block) => {
    const h = cronHarness();
    h.scripts.scripts['probe.sh'] = result;
    const job = await dueJob(h, { script: 'probe.sh' });

    await h.runDueJobs.execute();

    const task = h.agent.requests[0]!.context.task;
    expect(task).toContain(`## Script Error\n\n${block}`);
    expect(task).not.toContain('code null');
    expect(h.repository.get(job.id)).toMatchObject({ last_status: 'ok', repeat: { completed: 1 } });
  });

  it('does not wake the agent when the script says so, and the run is a silent ok', async () => {
    const h = cronHarness();
    h.scripts.scripts['gate.sh'] = { stdout: 'nothing new\n{"wakeAgent": false}\n' };
    const job = await dueJob(h, { script: 'gate.sh', deliver: 'telegram' });

    await h.runDueJobs.execute();

    expect(h.agent.requests).toHaveLength(0);
    expect(h.channel.sent).toHaveLength(0);
    expect(h.repository.get(job.id)!.last_status).toBe('ok');
  });

  it('wraps a delivered answer with the job header and the footer', async () => {
    const h = cronHarness();
    h.agent.reply('Three new mails.');
    const job = await dueJob(h, { deliver: 'telegram:-100123' });

    await h.runDueJobs.execute();

    expect(h.channel.sent).toEqual([
      {
        target: { kind: 'platform', platform: 'telegram', destination: '-100123', threadId: null },
        text: `Cronjob Response: Inbox\n(job_id: ${job.id})\n-------------\n\nThree new mails.\n\nNote: The agent cannot see this message, and therefore cannot respond to it.`,
      },
    ]);
    expect(h.repository.get(job.id)!.last_status).toBe('ok');
  });

  it('delivers the bare answer when wrap_response is off', async () => {
    const h = cronHarness({ settings: { wrapResponse: false } });
    h.agent.reply('Three new mails.');
    await dueJob(h, { deliver: 'telegram' });

    await h.runDueJobs.execute();

    expect(h.channel.sent[0]!.text).toBe('Three new mails.');
  });

  it.each(['[SILENT]', '[silent] nothing to report', 'Checked everything.\n[SILENT]'])(
    'delivers nothing for %j but still writes the output file',
    async (answer) => {
      const h = cronHarness();
      h.agent.reply(answer);
      const job = await dueJob(h, { deliver: 'telegram' });

      await h.runDueJobs.execute();

      expect(h.channel.sent).toHaveLength(0);
      expect(h.repository.get(job.id)!.last_status).toBe('ok');
      expect(h.outputs.latest(job.id)).toContain(answer);
    },
  );

  it('records an empty answer as an error', async () => {
    const h = cronHarness();
    h.agent.reply('   ');
    const job = await dueJob(h);

    await h.runDueJobs.execute();

    expect(h.repository.get(job.id)).toMatchObject({ last_status: 'error', last_error: 'agent produced an empty response' });
  });

  it('records delivery_failed with the delivery error and no last_error', async () => {
    const h = cronHarness();
    h.channel.failing.add('telegram');
    const job = await dueJob(h, { deliver: 'telegram' });

    await h.runDueJobs.execute();

    expect(h.repository.get(job.id)).toMatchObject({
      last_status: 'delivery_failed',
      last_error: null,
      last_delivery_error: 'telegram: telegram refused the message',
    });
  });

  it("keeps the control characters of a platform's garbage answer out of last_delivery_error and the report", async () => {
    const h = cronHarness({ platforms: ['telegram', 'slack'] });
    h.channel.failing.add('telegram');
    h.channel.failing.add('slack');
    h.channel.refusals.set('telegram', 'telegram refused the message (HTTP 400: \u0000\u0000\u001b[31mred\u001b]0;pwned\u0007)');
    h.channel.refusals.set('slack', 'slack said:\nline two\u009b2J');
    const job = await dueJob(h, { deliver: 'telegram:1,slack:C0123456' });

    await h.runDueJobs.execute();

    const stored = h.repository.get(job.id)!;
    expect(stored.last_delivery_error).toBe(
      'telegram:1: telegram refused the message (HTTP 400: \\u0000\\u0000\\u001b[31mred\\u001b]0;pwned\\u0007)\n' +
        'slack:C0123456: slack said:\\nline two\\u009b2J',
    );
    const report = h.outputs.latest(job.id)!;
    expect(report).toContain('- Delivery error: telegram:1: telegram refused the message (HTTP 400: \\u0000\\u0000\\u001b[31mred');
    expect(report).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/);
  });

  it('delivers "all" to the home channel of every configured platform', async () => {
    const h = cronHarness({ platforms: ['telegram', 'slack', 'email'] });
    h.channel.homes.set('email', null);
    const job = await dueJob(h, { deliver: 'all' });

    await h.runDueJobs.execute();

    expect(h.channel.sent.map((sent) => sent.target.platform)).toEqual(['telegram', 'slack']);
    expect(h.repository.get(job.id)!.last_status).toBe('ok');
  });

  it('refuses "all" when no platform has a home channel, spending nothing', async () => {
    const h = cronHarness();
    h.channel.homes.set('telegram', null);
    const job = await dueJob(h, { deliver: 'all' });

    await h.runDueJobs.execute();

    expect(h.agent.requests).toHaveLength(0);
    expect(h.repository.get(job.id)).toMatchObject({ last_status: 'blocked_config' });
    expect(h.repository.get(job.id)!.last_error).toContain('"all" names no platform');
  });

  it('delivers to each of several targets on its own and writes one line per failed target', async () => {
    const h = cronHarness({ platforms: ['telegram', 'slack', 'discord'] });
    h.channel.failing.add('telegram');
    h.channel.failing.add('discord');
    const job = await dueJob(h, { deliver: 'telegram:1, slack:C0123456, discord:42' });

    await h.runDueJobs.execute();

    expect(h.channel.sent.map((sent) => sent.target.platform)).toEqual(['slack']);
    expect(h.repository.get(job.id)).toMatchObject({
      last_status: 'delivery_failed',
      last_delivery_error: 'telegram:1: telegram refused the message\ndiscord:42: discord refused the message',
    });
  });

  it('sends the failure notice of a failed run to every target', async () => {
    const h = cronHarness({ platforms: ['telegram', 'slack'] });
    h.agent.reply(new AgentRunError('failed', 'the model is down'));
    await dueJob(h, { deliver: 'telegram:1,slack:C0123456' });

    await h.runDueJobs.execute();

    expect(h.channel.sent.map((sent) => [sent.target.platform, sent.text])).toEqual([
      ['telegram', expect.stringMatching(/^⚠️ Cron job 'Inbox' failed: /)],
      ['slack', expect.stringMatching(/^⚠️ Cron job 'Inbox' failed: /)],
    ]);
  });

  it('delivers origin to the chat that created the job', async () => {
    const h = cronHarness();
    await dueJob(h, { deliver: 'origin', origin: { platform: 'telegram', chat_id: '42', thread_id: '7' } });

    await h.runDueJobs.execute();

    expect(h.channel.sent[0]!.target).toEqual({ kind: 'platform', platform: 'telegram', destination: '42', threadId: '7' });
  });

  it('treats origin without an origin chat as local', async () => {
    const h = cronHarness();
    const job = await dueJob(h, { deliver: 'origin' });

    await h.runDueJobs.execute();

    expect(h.channel.sent).toHaveLength(0);
    expect(h.repository.get(job.id)!.last_status).toBe('ok');
    expect(h.outputs.latest(job.id)).toContain('All good.');
  });

  it('writes an output file naming the job, run time, schedule, prompt and answer', async () => {
    const h = cronHarness({ settings: { timeZone: 'Europe/Berlin' } });
    h.agent.reply('The answer.');
    const job = await dueJob(h, { deliver: 'local' });

    await h.runDueJobs.execute();

    const [file] = h.outputs.files.get(job.id)!;
    expect(file!.name).toBe('2026-06-01_11-00-00.md');
    expect(file!.content).toContain('# Cron job: Inbox');
    expect(file!.content).toContain(`- Job id: ${job.id}`);
    expect(file!.content).toContain('- Run at: 2026-06-01 11:00 (Europe/Berlin)');
    expect(file!.content).toContain('- Schedule: every 1h');
    expect(file!.content).toContain('Summarise the inbox');
    expect(file!.content).toContain('The answer.');
  });

  it('keeps only the newest output files', async () => {
    const h = cronHarness({ settings: { outputRetention: 3 } });
    const job = await dueJob(h);
    for (let i = 0; i < 5; i += 1) {
      await h.runDueJobs.execute();
      h.clock.advance(HOUR);
    }

    expect(h.outputs.files.get(job.id)!.map((f) => f.name)).toEqual([
      '2026-06-01_11-00-00.md',
      '2026-06-01_12-00-00.md',
      '2026-06-01_13-00-00.md',
    ]);
  });
});

describe('model selection', () => {
  it('uses the configured model for a job that names no provider', async () => {
    const h = cronHarness({ settings: { defaultModel: { provider: 'command', model: 'small' } } });
    await h.runJobNow.execute({ job: (await h.createJob.execute({ schedule: 'every 1h', prompt: 'x' })).id });

    expect(h.agent.requests[0]!.selection).toEqual({ provider: 'command', model: 'small' });
  });

  it("does not pass the default provider's model name to a job that picks another provider", async () => {
    const h = cronHarness({ settings: { defaultModel: { provider: 'command', model: 'small' } } });
    h.agent.knownProviders.add('nightly');
    await h.runJobNow.execute({ job: (await h.createJob.execute({ schedule: 'every 1h', prompt: 'x', provider: 'nightly' })).id });

    expect(h.agent.requests[0]!.selection).toEqual({ provider: 'nightly', model: null });
  });
});
