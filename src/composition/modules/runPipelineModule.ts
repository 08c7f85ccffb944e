import { ContainerModule } from 'inversify';
import { AnswerDelivery } from '../../application/runs/AnswerDelivery.js';
import { DailyBudgets } from '../../application/runs/DailyBudgets.js';
import { RedeliveryClaims } from '../../application/runs/RedeliveryClaims.js';
import { RunContexts } from '../../application/runs/RunContexts.js';
import { RunMeter } from '../../application/runs/RunMeter.js';
import { RunRecorder } from '../../application/runs/RunRecorder.js';
import { ShowRun } from '../../application/runs/ShowRun.js';
import { WebhookRunRecorder } from '../../application/webhook/WebhookRunRecorder.js';

/**
 * The run pipeline every run kind goes through (docs/architecture.md, The run pipeline): the
 * ledger's records, the answer's delivery, the context and its skills, the run's measure, and
 * the redelivery claim. Every container loads it; each is built only when a run first needs it.
 */
export const runPipelineModule = new ContainerModule(({ bind }) => {
  bind(RunRecorder).toSelf().inSingletonScope();
  bind(AnswerDelivery).toSelf().inSingletonScope();
  bind(RunContexts).toSelf().inSingletonScope();
  bind(RunMeter).toSelf().inSingletonScope();
  bind(RedeliveryClaims).toSelf().inSingletonScope();
  // One run with its transcript: `agent runs show` and the dashboard's run page.
  bind(ShowRun).toSelf().inSingletonScope();
  // The daily caps, held against the ledger's sums.
  bind(DailyBudgets).toSelf().inSingletonScope();
  // Webhook runs' own records, beside the ledger's: the worker's runs and `agent webhook redeliver`.
  bind(WebhookRunRecorder).toSelf().inSingletonScope();
});
