/** One key of a pool, as handed out for one call. The value is never logged or shown. */
export interface PooledKey {
  readonly value: string;
  /** 1-based position in the pool, for messages ("key 2 of 3"). */
  readonly position: number;
}

/**
 * The API keys of one provider, for same-provider rotation on rate limits. Keys are
 * tried in list order: the first one that is not cooling down is used, so a pool behaves like a
 * single key until that key is rate-limited. A rate-limited key cools down until the time the
 * provider named (`Retry-After`) and is skipped until then.
 *
 * One pool lives as long as the process, so a key that cooled down in one run is still skipped
 * by the next. Times are milliseconds on one monotonic clock, passed in by the caller.
 */
export class CredentialPool {
  private readonly keys: readonly string[];
  /** Epoch milliseconds until which each key is cooling down; 0 when it is not. */
  private readonly coolingUntil: number[];

  /**
   * @param keys the keys, in the order they are tried; at least one
   * @param source where the keys came from, for messages: `OPENAI_API_KEYS`, `providers.x.api_keys`
   */
  constructor(
    keys: readonly string[],
    readonly source: string,
  ) {
    if (keys.length === 0) throw new TypeError('A credential pool needs at least one key.');
    this.keys = [...keys];
    this.coolingUntil = keys.map(() => 0);
  }

  get size(): number {
    return this.keys.length;
  }

  /** The first key that is not cooling down at `now`, or null when every key is. */
  nextAvailable(now: number): PooledKey | null {
    const index = this.coolingUntil.findIndex((until) => until <= now);
    return index < 0 ? null : { value: this.keys[index]!, position: index + 1 };
  }

  /** Whether a key other than `key` is not cooling down at `now`: one that can take a call `key` was refused. */
  hasAnotherAvailable(key: PooledKey, now: number): boolean {
    return this.coolingUntil.some((until, index) => index !== key.position - 1 && until <= now);
  }

  /** Skips `key` for `durationMs` from `now`. A longer cool-down already running is kept. */
  coolDown(key: PooledKey, durationMs: number, now: number): void {
    const index = key.position - 1;
    const until = now + Math.max(0, durationMs);
    this.coolingUntil[index] = Math.max(this.coolingUntil[index] ?? 0, until);
  }

  /** Milliseconds from `now` until some key can be used again; 0 when one can be at once. */
  msUntilAvailable(now: number): number {
    return Math.max(0, Math.min(...this.coolingUntil) - now);
  }

  /** Why the provider cannot be used at `now`: every key is resting; when the first is usable again. */
  restingProblem(now: number): string {
    const wait = Math.ceil(this.msUntilAvailable(now) / 1000);
    const which = this.size === 1 ? `the key from ${this.source} is` : `all ${this.size} keys from ${this.source} are`;
    return `rate-limited: ${which} cooling down (the first is usable again in ${wait} s)`;
  }

  /** `text` with every key of this pool replaced by `[key hidden]`: for provider messages that quote one. */
  redact(text: string): string {
    return this.keys.reduce((redacted, key) => redacted.split(key).join('[key hidden]'), text);
  }

  /** "key 2 of 3 from OPENAI_API_KEYS", or "the key from OPENAI_API_KEY" for a pool of one. */
  describe(key: PooledKey): string {
    return this.size === 1 ? `the key from ${this.source}` : `key ${key.position} of ${this.size} from ${this.source}`;
  }
}
