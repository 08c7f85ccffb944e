// @ts-check
// The managed trigger provider (docs/managed-trigger.md). Plain ES module JavaScript so that it ships and
// loads exactly like any other plugin: no build step, nothing of the core imported.

/** Each portal call gives up after this long. */
export const REQUEST_TIMEOUT_MS = 15_000;
/** How often everything armed is compared with the job store. */
export const RECONCILE_EVERY_MS = 10 * 60_000;
/**
 * The least time between two reconciles that follow fires: each fire is followed by one, but every
 * fire within this interval shares the next, so a burst of fires does not read every job per fire.
 */
export const RECONCILE_AFTER_FIRES_MS = 10_000;

const REQUIRED_SETTINGS = ['portal_url', 'callback_url', 'expected_audience', 'jwks_url'];
const TOKEN_VARIABLE = 'AGENT_CRON_SCHEDULER_TOKEN';

/**
 * @typedef {{ job_id: string, fire_at: string, schedule_id?: string }} ArmedFire
 * @typedef {{ fetch?: typeof fetch, setInterval?: (callback: () => void, ms: number) => unknown, clearInterval?: (handle: unknown) => void, reconcileEveryMs?: number, setTimeout?: (callback: () => void, ms: number) => unknown, clearTimeout?: (handle: unknown) => void, reconcileAfterFiresMs?: number }} ManagedOptions
 */

/**
 * The plugin's entry point.
 * @param {any} context the SchedulerContext: jobs, fire, clock, log, settings (`cron.managed`), env
 * @param {ManagedOptions} [options] what tests replace: fetch and the reconcile timers
 */
export function createSchedulerProvider(context, options = {}) {
  return new ManagedSchedulerProvider(context, options);
}

/** A failed portal call: `refused` (401/403: the token or the URL is wrong) is never retried. */
class PortalError extends Error {
  /** @param {string} message @param {boolean} refused */
  constructor(message, refused) {
    super(message);
    this.refused = refused;
  }
}

export class ManagedSchedulerProvider {
  /** @param {any} context @param {ManagedOptions} options */
  constructor(context, options) {
    this.name = 'managed';
    this.context = context;
    this.fetch = options.fetch ?? globalThis.fetch;
    this.setInterval = options.setInterval ?? ((callback, ms) => setInterval(callback, ms).unref());
    this.clearInterval = options.clearInterval ?? ((handle) => clearInterval(/** @type {any} */ (handle)));
    this.reconcileEveryMs = options.reconcileEveryMs ?? RECONCILE_EVERY_MS;
    this.setTimeout = options.setTimeout ?? ((callback, ms) => setTimeout(callback, ms).unref());
    this.clearTimeout = options.clearTimeout ?? ((handle) => clearTimeout(/** @type {any} */ (handle)));
    this.reconcileAfterFiresMs = options.reconcileAfterFiresMs ?? RECONCILE_AFTER_FIRES_MS;
    /** @type {unknown} */
    this.interval = null;
    /** @type {unknown} the reconcile that follows the fires since the last one, when it is waiting */
    this.afterFires = null;
    /** When the last reconcile that followed fires started (ms on the context's clock). */
    this.lastAfterFires = Number.NEGATIVE_INFINITY;
    this.started = false;
    /** Set once the portal refused the token: no call is made after that (restart with a good one). */
    this.refusedBecause = null;
    /** Portal work runs one call sequence at a time, so an arm and a cancel of one job never cross. */
    /** @type {Promise<unknown>} */
    this.work = Promise.resolve();
    /** @type {Promise<void> | null} the reconcile queued and not started yet */
    this.reconcileWaiting = null;
  }

  /** @returns {string | null} */
  problem() {
    const settings = this.context.settings ?? {};
    const missing = REQUIRED_SETTINGS.filter((key) => typeof settings[key] !== 'string' || settings[key].trim() === '');
    if (missing.length > 0)
      return `${missing.map((key) => `cron.managed.${key}`).join(', ')} ${missing.length === 1 ? 'is' : 'are'} not set in config.yaml`;
    const token = this.context.env?.[TOKEN_VARIABLE];
    if (typeof token !== 'string' || token.trim() === '')
      return `${TOKEN_VARIABLE} is not set (the portal's bearer token; it never goes in config.yaml)`;
    return null;
  }

  /**
   * Reconciles now, then every 10 minutes and after fires: a job's run re-arms it at once, and a
   * reconcile follows within RECONCILE_AFTER_FIRES_MS. @param {any} [context]
   */
  async start(context) {
    if (context) this.context = context;
    if (this.started) return;
    this.started = true;
    this.context.fire.onRunFinished((/** @type {string} */ jobId) => {
      if (!this.started) return;
      void this.jobsChanged([jobId]).then(() => this.reconcileAfterFires());
    });
    this.interval = this.setInterval(() => void this.reconcile(), this.reconcileEveryMs);
    await this.reconcile();
  }

  async stop() {
    this.started = false;
    if (this.interval !== null) this.clearInterval(this.interval);
    this.interval = null;
    if (this.afterFires !== null) this.clearTimeout(this.afterFires);
    this.afterFires = null;
    await this.work;
  }

  /**
   * The reconcile that follows a fire: at once when none followed fires for
   * RECONCILE_AFTER_FIRES_MS, else when that much time has passed since the last; one waiting
   * covers every fire until it starts.
   */
  reconcileAfterFires() {
    if (!this.started || this.afterFires !== null) return;
    const wait = Math.max(0, this.lastAfterFires + this.reconcileAfterFiresMs - this.context.clock.now().getTime());
    this.afterFires = this.setTimeout(() => {
      this.afterFires = null;
      if (!this.started) return;
      this.lastAfterFires = this.context.clock.now().getTime();
      void this.reconcile();
    }, wait);
  }

  /**
   * Arms each job named at its `next_run_at` when it can fire, else cancels what is armed for it
   * (removed, paused, completed, exhausted). Never throws: a failure is logged and the next
   * reconcile puts it right.
   * @param {readonly string[]} jobIds
   */
  jobsChanged(jobIds) {
    return this.serially(async () => {
      const jobs = await this.loadJobs(new Set(jobIds));
      if (!jobs) return;
      for (const jobId of new Set(jobIds)) {
        const job = jobs.get(jobId);
        if (job && job.state === 'running') continue;
        if (job && isSchedulable(job)) await this.arm(job);
        else await this.cancel(jobId);
      }
    });
  }

  /**
   * Makes the portal hold exactly the fires the store asks for: arms what is missing or moved,
   * cancels what is armed for no schedulable job. A running job is left alone: its run's end re-arms it.
   */
  reconcile() {
    // A reconcile waiting for its turn covers every change made before it starts: a burst of
    // fires queues one, not one each.
    if (this.reconcileWaiting) return this.reconcileWaiting;
    const run = this.serially(async () => {
      this.reconcileWaiting = null;
      const armed = await this.list();
      if (!armed) return;
      const jobs = await this.loadJobs();
      if (!jobs) return;
      const armedByJob = new Map(armed.map((fire) => [fire.job_id, fire]));
      for (const job of jobs.values()) {
        if (!isSchedulable(job)) continue;
        const fire = armedByJob.get(job.id);
        if (!fire || Date.parse(fire.fire_at) !== Date.parse(job.next_run_at)) await this.arm(job);
      }
      for (const fire of armed) {
        const job = jobs.get(fire.job_id);
        if (job && (job.state === 'running' || isSchedulable(job))) continue;
        await this.cancel(fire.job_id);
      }
    });
    this.reconcileWaiting = run;
    return run;
  }

  /** @param {() => Promise<void>} task */
  serially(task) {
    const run = this.work.then(task).catch((/** @type {unknown} */ error) => {
      this.context.log.error(`the managed cron provider failed: ${describe(error)}`);
    });
    this.work = run;
    return run;
  }

  /**
   * The jobs by id: every job, or only those of `ids` when given (looked up one by one where the
   * store can, so a change to one job does not read them all).
   * @param {ReadonlySet<string>} [ids]
   * @returns {Promise<Map<string, any> | null>}
   */
  async loadJobs(ids) {
    try {
      if (ids && typeof this.context.jobs.findById === 'function') {
        const found = await Promise.all([...ids].map((id) => this.context.jobs.findById(id)));
        return new Map(found.filter((job) => job !== null).map((/** @type {any} */ job) => [job.id, job]));
      }
      const { jobs } = await this.context.jobs.load();
      return new Map(jobs.map((/** @type {any} */ job) => [job.id, job]));
    } catch (error) {
      this.context.log.error(`the managed cron provider could not read the jobs (${describe(error)}); the next reconcile tries again`);
      return null;
    }
  }

  /** @param {any} job */
  async arm(job) {
    const body = {
      job_id: job.id,
      fire_at: job.next_run_at,
      callback_url: `${trimSlash(this.context.settings.callback_url)}/api/cron/fire`,
      dedup_key: `${job.id}:${job.next_run_at}`,
    };
    if (await this.call('POST', '/api/agent-cron/provision', body, `arm job ${job.id} for ${job.next_run_at}`)) {
      this.context.log.info(`armed job '${job.name}' at the portal for ${job.next_run_at}`, { job: job.id });
    }
  }

  /** @param {string} jobId */
  async cancel(jobId) {
    if (await this.call('POST', '/api/agent-cron/cancel', { job_id: jobId }, `cancel the fire of job ${jobId}`)) {
      this.context.log.info(`cancelled the portal's fire of job ${jobId}`, { job: jobId });
    }
  }

  /** @returns {Promise<ArmedFire[] | null>} */
  async list() {
    const answer = await this.call('GET', '/api/agent-cron/list', undefined, 'list the armed fires');
    if (!answer) return null;
    const armed = answer.armed;
    if (!Array.isArray(armed)) {
      this.context.log.error('the portal answered the list of armed fires without an "armed" list; the next reconcile tries again');
      return null;
    }
    return armed.filter((fire) => fire && typeof fire.job_id === 'string' && typeof fire.fire_at === 'string');
  }

  /**
   * One portal call; the parsed answer, or null when it failed (logged).
   * @param {'GET' | 'POST'} method @param {string} path @param {unknown} body @param {string} what
   * @returns {Promise<any>}
   */
  async call(method, path, body, what) {
    if (this.refusedBecause) return null;
    try {
      return await this.request(method, path, body);
    } catch (error) {
      if (error instanceof PortalError && error.refused) {
        this.refusedBecause = error.message;
        this.context.log.error(
          `the portal refused to ${what} (${error.message}): a configuration problem — check ${TOKEN_VARIABLE} and cron.managed.portal_url, then restart; nothing more is sent to the portal until then`,
        );
      } else {
        this.context.log.warn(`could not ${what} at the portal (${describe(error)}); the next reconcile tries again`);
      }
      return null;
    }
  }

  /** @param {'GET' | 'POST'} method @param {string} path @param {unknown} body */
  async request(method, path, body) {
    const url = `${trimSlash(this.context.settings.portal_url)}${path}`;
    /** @type {Response} */
    let response;
    try {
      response = await this.fetch(url, {
        method,
        headers: {
          authorization: `Bearer ${this.context.env[TOKEN_VARIABLE]}`,
          accept: 'application/json',
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
      });
    } catch (error) {
      const cause =
        /** @type {any} */ (error)?.name === 'TimeoutError'
          ? `no answer within ${REQUEST_TIMEOUT_MS / 1000} s`
          : `unreachable: ${describe(error)}`;
      throw new PortalError(`${url} ${cause}`, false);
    }
    const text = await response.text().catch(() => '');
    if (response.status === 401 || response.status === 403) throw new PortalError(`${url} answered ${response.status}`, true);
    if (!response.ok) throw new PortalError(`${url} answered ${response.status}`, false);
    if (text.trim() === '') return {};
    try {
      return JSON.parse(text);
    } catch {
      throw new PortalError(`${url} answered ${response.status} with a body that is not JSON`, false);
    }
  }
}

/** A job the portal should hold one fire for. @param {any} job */
function isSchedulable(job) {
  return (
    job.enabled === true && job.state === 'scheduled' && typeof job.next_run_at === 'string' && !Number.isNaN(Date.parse(job.next_run_at))
  );
}

/** @param {string} url */
function trimSlash(url) {
  return String(url).replace(/\/+$/, '');
}

/** @param {unknown} error */
function describe(error) {
  if (error instanceof Error) {
    const cause = /** @type {any} */ (error).cause;
    return cause instanceof Error && cause.message && !error.message.includes(cause.message)
      ? `${error.message}: ${cause.message}`
      : error.message;
  }
  return String(error);
}
