import request from 'supertest';
import { aRun, aTranscript } from '../../contract/RunLedger.contract.js';
import { DASHBOARD_TOKEN, dashboardHarness, signInTo } from '../../support/dashboardHarness.js';

describe("the dashboard's run page", () => {
  it('shows the transcript as a timeline: model turns, and each tool call collapsed with its arguments and result, as text', async () => {
    const { h, app } = dashboardHarness();
    await h.ledger.save(aRun(1, { started_at: h.clock.now().toISOString() }));
    const transcript = aTranscript(1);
    const call = transcript[1]!;
    if (call.type === 'tool_call') call.result = '<script>alert(1)</script>';
    await h.ledger.saveTranscript(aRun(1), transcript);
    const { cookie } = await signInTo(app, '/');

    const page = await request(app).get('/runs/run-1').set('cookie', cookie);

    expect(page.status).toBe(200);
    expect(page.text).toContain('<h2>Transcript</h2>');
    expect(page.text).toContain('<ol class="timeline">');
    expect(page.text).toMatch(/<details id="call-call_1"><summary><b>Tool terminal<\/b>/);
    expect(page.text).toContain('<pre>{&quot;command&quot;:&quot;date&quot;}</pre>');
    expect(page.text).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
    expect(page.text).not.toContain('<script>alert(1)');
    expect(page.text).toContain('Calls terminal');
    expect(page.text).toContain('120 tokens in, 8 out');
    const api = await request(app).get('/api/runs/run-1').set('authorization', `Bearer ${DASHBOARD_TOKEN}`);
    expect(api.body).toMatchObject({ id: 'run-1', transcript });
  });

  it('says a run without a transcript has none', async () => {
    const { h, app } = dashboardHarness();
    await h.ledger.save(aRun(1, { started_at: h.clock.now().toISOString() }));
    const { cookie } = await signInTo(app, '/');

    const page = await request(app).get('/runs/run-1').set('cookie', cookie);

    expect(page.text).toContain('None: the run kept no transcript');
  });
});
