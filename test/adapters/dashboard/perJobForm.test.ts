import request from 'supertest';
import { dashboardHarness, signInTo } from '../../support/dashboardHarness.js';

/** The job form's toolsets, working folder and carried answers: created, shown, edited back and forth. */
describe("the dashboard's job form: toolsets, working folder and answers carried forward", () => {
  it('creates a job with them, shows them on its page and in its form, and changes them back', async () => {
    const { app, h } = dashboardHarness();
    h.workdirs.folders.set('/srv/site', 'Use pnpm.');
    const digest = await h.createJob.execute({ schedule: 'every 1h', prompt: 'Digest', name: 'digest' });
    const { cookie, csrf } = await signInTo(app);

    const created = await request(app).post('/jobs').set('cookie', cookie).type('form').send({
      csrf,
      schedule: 'every 1h',
      prompt: 'Report',
      name: 'report',
      toolsets: 'web, clarify',
      workdir: '/srv/site',
      context_from: 'digest',
      continue: 'yes',
    });
    expect(created.status).toBe(303);
    const job = h.repository.get('000000000002')!;
    expect(job).toMatchObject({ toolsets: ['web', 'clarify'], workdir: '/srv/site', context_from: [digest.id], continue: true });

    const page = await request(app).get(`/jobs/${job.id}`).set('cookie', cookie);
    expect(page.text).toContain('<dt>Toolsets</dt><dd>web, clarify</dd>');
    expect(page.text).toContain('<dt>Working folder</dt><dd>/srv/site (its AGENTS.md, when there, is given to the agent)</dd>');
    expect(page.text).toContain(
      `<dt>Context from</dt><dd>the last ok answer of &#39;digest&#39; (${digest.id}); its own last ok answer, each cut to 8 KB</dd>`,
    );
    const form = await request(app).get(`/jobs/${job.id}/edit`).set('cookie', cookie);
    expect(form.text).toContain('<input name="toolsets" type="text" value="web, clarify"');
    expect(form.text).toContain('<input name="workdir" type="text" value="/srv/site"');
    expect(form.text).toContain('<input name="context_from" type="text" value="digest"');
    expect(form.text).toContain('<input name="continue" type="checkbox" value="yes" checked>');

    const saved = await request(app).post(`/jobs/${job.id}/edit`).set('cookie', cookie).type('form').send({
      csrf,
      schedule: 'every 1h',
      prompt: 'Report',
      name: 'report',
      deliver: job.deliver,
      skills: '',
      toolsets: '',
      workdir: '',
      context_from: '',
    });
    expect(saved.status).toBe(303);
    expect(h.repository.get(job.id)).toMatchObject({ toolsets: null, workdir: null, context_from: [], continue: false });
  });

  it('makes a job that runs after another, shows the link in its form by name, and changes it, a cycle refused in one sentence', async () => {
    const { app, h } = dashboardHarness();
    const fetch = await h.createJob.execute({ schedule: 'every 1h', prompt: 'Fetch', name: 'fetch' });
    const { cookie, csrf } = await signInTo(app);

    const created = await request(app)
      .post('/jobs')
      .set('cookie', cookie)
      .type('form')
      .send({ csrf, schedule: '', prompt: 'Summarise', name: 'summary', after: 'fetch:any' });
    expect(created.status).toBe(303);
    const summary = h.repository.get('000000000002')!;
    expect(summary).toMatchObject({ schedule: { kind: 'after' }, after: [{ job: fetch.id, on: 'any' }] });
    const form = await request(app).get(`/jobs/${summary.id}/edit`).set('cookie', cookie);
    expect(form.text).toContain('<input name="after" type="text" value="fetch:any"');

    const edited = await request(app).post(`/jobs/${summary.id}/edit`).set('cookie', cookie).type('form').send({
      csrf,
      schedule: 'after',
      prompt: 'Summarise',
      name: 'summary',
      deliver: summary.deliver,
      after: 'fetch',
    });
    expect(edited.status).toBe(303);
    expect(h.repository.get(summary.id)!.after).toEqual([{ job: fetch.id, on: 'ok' }]);

    const cycle = await request(app).post(`/jobs/${fetch.id}/edit`).set('cookie', cookie).type('form').send({
      csrf,
      schedule: 'every 1h',
      prompt: 'Fetch',
      name: 'fetch',
      deliver: fetch.deliver,
      after: 'summary',
    });
    expect(cycle.status).toBe(400);
    expect(cycle.text).toContain('already runs after');
    expect(h.repository.get(fetch.id)!.after ?? []).toEqual([]);
  });

  it('refuses an unknown toolset with the sentence of the CLI, keeping what was typed', async () => {
    const { app } = dashboardHarness();
    const { cookie, csrf } = await signInTo(app);

    const refused = await request(app)
      .post('/jobs')
      .set('cookie', cookie)
      .type('form')
      .send({ csrf, schedule: 'every 1h', prompt: 'Report', toolsets: 'shell' });

    expect(refused.status).toBe(400);
    expect(refused.text).toMatch(/role="alert">The job names an unknown toolset &quot;shell&quot;; the known ones are cronjob, terminal/);
    expect(refused.text).toContain('<input name="toolsets" type="text" value="shell"');
  });

  it('takes them in the JSON API too', async () => {
    const { app, h } = dashboardHarness();
    h.workdirs.folders.set('/srv/site', null);
    const auth = { authorization: 'Bearer dashboard-secret-token' };

    const created = await request(app)
      .post('/api/jobs')
      .set(auth)
      .send({ schedule: 'every 1h', prompt: 'Report', toolsets: ['web'], workdir: '/srv/site', continue: true });
    expect(created.status).toBe(201);
    const id = (created.body.job ?? created.body).id as string;
    const patched = await request(app).patch(`/api/jobs/${id}`).set(auth).send({ toolsets: null, workdir: null, continue: false });
    expect(patched.status).toBe(200);
    expect(h.repository.get(id)).toMatchObject({ toolsets: null, workdir: null, continue: false });
  });
});
