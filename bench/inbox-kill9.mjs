// npm run bench:inbox-kill9 — the webhook inbox's promise under kill -9: 500 signed events
// (BENCH_EVENTS) posted to the built gateway, whose agent (a shell script) takes a moment and
// then records the event it was given; the gateway is killed with -9 three times (BENCH_KILLS),
// 1.5 s apart (BENCH_KILL_EVERY_MS), and started again each time. Then how many accepted events
// never ran (lost), how many agents finished after the gateway that started them was killed (an
// agent that outlived its gateway, finishing a run the restarted one repeats: there must be
// none), and how many runs were repeated because a kill fell between an agent's end and the
// record of its answer (the one moment where a run can be repeated: the agent had finished, its
// answer was not yet on disk).
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AGENT, benchConfig, freePort, kill, signedHeaders, sleep, startGateway } from './gatewayBench.mjs';

const EVENTS = Number(process.env.BENCH_EVENTS ?? 500);
const KILLS = Number(process.env.BENCH_KILLS ?? 3);
const KILL_EVERY_MS = Number(process.env.BENCH_KILL_EVERY_MS ?? 1500);
const CONNECTIONS = 16;
/** How long the runs may stay without progress, after the last start, before the ones missing count as lost. */
const QUIET_MS = 15_000;

if (!existsSync(AGENT)) {
  console.log('dist/agent.js is missing: run `npm run build` first; no figures.');
  process.exit(0);
}

const work = mkdtempSync(join(tmpdir(), 'agent-inbox-kill9-'));
let gateway = null;
try {
  const home = join(work, 'home');
  mkdirSync(home, { recursive: true });
  const runs = join(work, 'runs.log');
  // Reads its task, takes a moment (so that kills land in the middle of runs), then records it.
  // Each line also names the gateway that started the agent (its parent).
  const script = `while read -r line; do case $line in *EVENT-*) n=\${line##*EVENT-};; esac; done; sleep 0.2; echo "EVENT-$n $PPID" >> ${runs}; echo done`;
  const port = await freePort();
  writeFileSync(join(home, 'config.yaml'), benchConfig({ port, script, maxConcurrentRuns: 8 }));
  const records = () => (existsSync(runs) ? readFileSync(runs, 'utf8').split('\n').filter(Boolean) : []);
  const lines = () => records().map((line) => line.split(' ')[0]);
  /** The lines written until each kill, by the gateway pid killed. */
  const writtenUntilKill = new Map();
  console.log(
    `webhook inbox under kill -9: ${EVENTS} signed events, the gateway killed with -9 ${KILLS} times ${KILL_EVERY_MS} ms apart and started again`,
  );

  ({ gateway } = await startGateway(home, join(work, 'gateway.log')));
  const accepted = [];
  let next = 0;
  const posting = Promise.all(
    Array.from({ length: CONNECTIONS }, async () => {
      while (next < EVENTS) {
        const number = next++;
        const body = JSON.stringify({ action: 'opened', number, pull_request: { title: `Change ${number}` } });
        // A request the killed gateway never answered is sent again, with the same delivery id, as code hosts retry.
        for (;;) {
          const response = await fetch(`http://127.0.0.1:${port}/webhooks/bench`, {
            method: 'POST',
            headers: signedHeaders(body, number),
            body,
          }).catch(() => null);
          await response?.arrayBuffer();
          if (response && response.status >= 200 && response.status < 300) {
            accepted.push(number);
            break;
          }
          await sleep(50);
        }
      }
    }),
  );
  for (let kills = 0; kills < KILLS; kills += 1) {
    await sleep(KILL_EVERY_MS);
    await kill(gateway, 'SIGKILL');
    writtenUntilKill.set(String(gateway.pid), records().length);
    console.log(`  kill -9 #${kills + 1}: ${lines().length} runs recorded so far`);
    ({ gateway } = await startGateway(home, join(work, 'gateway.log')));
  }
  await posting;
  let seen = -1;
  let lastProgress = performance.now();
  const ranOnce = () => new Set(lines()).size;
  while (ranOnce() < new Set(accepted).size && performance.now() - lastProgress < QUIET_MS) {
    if (lines().length !== seen) {
      seen = lines().length;
      lastProgress = performance.now();
    }
    await sleep(50);
  }
  const ran = new Map();
  for (const line of lines()) ran.set(line, (ran.get(line) ?? 0) + 1);
  const unique = new Set(accepted);
  const lost = [...unique].filter((number) => !ran.has(`EVENT-${number}`)).length;
  const doubled = [...ran.values()].reduce((sum, times) => sum + Math.max(0, times - 1), 0);
  const afterKill = records().filter((line, index) => {
    const until = writtenUntilKill.get(line.split(' ')[1]);
    return until !== undefined && index >= until;
  }).length;
  if (process.env.BENCH_KEEP)
    console.log(
      `  twice: ${[...ran]
        .filter(([, times]) => times > 1)
        .map(([line]) => line)
        .join(' ')}`,
    );
  console.log(
    `  accepted ${unique.size} (posted ${EVENTS}), ran ${ran.size}, lost ${lost}, finished after their gateway was killed ${afterKill}, ` +
      `repeated (killed between an agent's end and its answer's record) ${doubled - afterKill}   target: none lost, none after a kill: ${lost === 0 && afterKill === 0 ? 'met' : 'MISSED'}`,
  );
} finally {
  if (gateway) await kill(gateway, 'SIGTERM');
  if (process.env.BENCH_KEEP) console.log(`  kept: ${work}`);
  else rmSync(work, { recursive: true, force: true });
}
