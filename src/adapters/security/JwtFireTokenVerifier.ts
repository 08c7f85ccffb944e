import { createHash, createPublicKey, type KeyObject } from 'node:crypto';
import jwt, { type JwtPayload } from 'jsonwebtoken';
import { STORE_RETRY_AFTER_SECONDS } from '../../application/cron/FireJobSlot.js';
import type { Clock } from '../../application/ports/Clock.js';
import type { FireTokenVerdict, FireTokenVerifier } from '../../application/ports/FireTokenVerifier.js';
import type { Logger } from '../../application/ports/Logger.js';
import type { UsedFireTokens } from '../../application/ports/UsedFireTokens.js';
import { errorText } from '../../domain/errors.js';

/** Only asymmetric algorithms: a token signed with a shared secret (or none) is never accepted. */
export const FIRE_TOKEN_ALGORITHMS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384'] as const;
/** Clock skew allowed on `exp`, `nbf` and `iat`. */
export const FIRE_TOKEN_LEEWAY_SECONDS = 30;
/** The longest a fire token may live: `exp` at most this long after `iat`. */
export const FIRE_TOKEN_MAX_LIFETIME_SECONDS = 5 * 60;
/** Keys are fetched again after this long, so that a key the portal withdrew stops being trusted. */
export const JWKS_MAX_AGE_MS = 10 * 60_000;
/** However many tokens name an unknown `kid`, the JWKS is fetched at most once per this interval. */
export const JWKS_MIN_REFETCH_MS = 10_000;
const JWKS_TIMEOUT_MS = 10_000;
/** The used `jti`s past their expiry are forgotten in the store at most this often: a statement (or a directory read) a minute, not one per fire. */
export const USED_TOKENS_PRUNE_INTERVAL_MS = 60_000;
/**
 * A used `jti` is forgotten only this long after its token expired on this gateway's clock, so
 * that a replica whose clock runs ahead (by less than this) forgets none that another still accepts.
 */
export const USED_TOKENS_KEPT_AFTER_EXPIRY_MS = 5 * 60_000;

export interface FireTokenSettings {
  /** `cron.managed.jwks_url`. */
  jwksUrl: string;
  /** `cron.managed.expected_audience`: the token's `aud`. */
  audience: string;
  /** `cron.managed.portal_url`: the token's `iss`. */
  issuer: string;
}

/** Where the public keys come from: `kid` → PEM, all of them, fetched anew; rejects when it cannot. */
export type SigningKeysFetcher = () => Promise<Map<string, string>>;

/**
 * The JWKS at `url`, through jwks-rsa (which turns RSA and EC JWKs into PEM keys). Loaded on first
 * use: only a gateway that serves fires needs it, and its `jose` is an ES module that jest's
 * CommonJS loader cannot require (the unit tests pass a fetcher of their own; the end-to-end
 * tests run this one).
 */
export function jwksFetcher(url: string): SigningKeysFetcher {
  let client: Promise<{ getSigningKeys(): Promise<Array<{ kid: string; getPublicKey(): string }>> }> | null = null;
  return async () => {
    client ??= import('jwks-rsa').then(
      ({ default: jwksRsa }) => new jwksRsa.JwksClient({ jwksUri: url, cache: false, rateLimit: false, timeout: JWKS_TIMEOUT_MS }),
    );
    const keys = await (await client).getSigningKeys();
    return new Map(keys.filter((key) => typeof key.kid === 'string').map((key) => [key.kid, key.getPublicKey()]));
  };
}

class RefusedToken extends Error {}

/**
 * The fire token check of docs/managed-trigger.md ("The token checks") with jsonwebtoken and
 * jwks-rsa. Keys are looked up by the token's `kid` in a cache of the JWKS; an unknown `kid`
 * fetches the JWKS again, at most once per `JWKS_MIN_REFETCH_MS` whatever the number of tokens,
 * so forged `kid`s cannot flood the portal.
 * A JWKS that cannot be fetched or read refuses the token (and is logged); the keys already known
 * stay in use. Each key is read once per fetch, not at every token: a key the JWKS holds but that
 * cannot be read is left out (and logged), so its tokens are refused like those of an unknown
 * `kid`.
 *
 * A token's `job_id` claim binds it to the body's job and its `fire_at` claim, when it has one, to
 * the body's slot (the same instant). Used `jti`s are remembered in the store (`UsedFireTokens`:
 * the files under `$AGENT_HOME` or the database), by their sha256, until their token expires
 * (with the leeway): a token fires at most once, across restarts and replicas. A store that cannot
 * be used refuses the token with a Retry-After, as a store of jobs that cannot be read does.
 */
export class JwtFireTokenVerifier implements FireTokenVerifier {
  private keys = new Map<string, KeyObject>();
  private fetchedAt = Number.NEGATIVE_INFINITY;
  private lastFetchAttempt = Number.NEGATIVE_INFINITY;
  private fetching: Promise<void> | null = null;
  /** When the expired `jti`s were last forgotten in the store (ms). */
  private lastPruned = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly settings: FireTokenSettings,
    private readonly clock: Clock,
    private readonly log: Logger,
    private readonly usedTokens: UsedFireTokens,
    private readonly fetchKeys: SigningKeysFetcher = jwksFetcher(settings.jwksUrl),
  ) {}

  async verify(token: string, jobId: string | null, fireAt: string | null): Promise<FireTokenVerdict> {
    let claims: { jti: string; exp: number };
    try {
      claims = await this.check(token, jobId, fireAt);
    } catch (error) {
      return { valid: false, reason: error instanceof RefusedToken ? error.message : errorText(error) };
    }
    if (jobId === null) return { valid: true, release: async () => undefined };
    const id = createHash('sha256').update(claims.jti).digest('hex');
    const now = this.clock.now();
    await this.forgetExpiredNowAndThen(now);
    try {
      // An expired token is refused by its `exp` above, so its jti need not be kept longer.
      const fresh = await this.usedTokens.remember(id, new Date((claims.exp + FIRE_TOKEN_LEEWAY_SECONDS) * 1000), now);
      if (!fresh) return { valid: false, reason: 'its jti was used already (a replay)' };
    } catch (error) {
      return {
        valid: false,
        reason: `the fire tokens used before cannot be looked at: ${errorText(error)}`,
        retryAfterSeconds: STORE_RETRY_AFTER_SECONDS,
      };
    }
    return { valid: true, release: () => this.release(id) };
  }

  private async release(id: string): Promise<void> {
    try {
      await this.usedTokens.forget(id);
    } catch (error) {
      this.log.warn(`a fire token answered 503 could not be forgotten, so the portal's retry with it will be refused: ${errorText(error)}`);
    }
  }

  /** Forgets the expired `jti`s at most once per USED_TOKENS_PRUNE_INTERVAL_MS; a failure is only logged. */
  private async forgetExpiredNowAndThen(now: Date): Promise<void> {
    if (now.getTime() - this.lastPruned < USED_TOKENS_PRUNE_INTERVAL_MS) return;
    this.lastPruned = now.getTime();
    try {
      await this.usedTokens.forgetExpired(new Date(now.getTime() - USED_TOKENS_KEPT_AFTER_EXPIRY_MS));
    } catch (error) {
      this.log.warn(`the expired fire tokens could not be forgotten; trying again in a minute: ${errorText(error)}`);
    }
  }

  private async check(token: string, jobId: string | null, fireAt: string | null): Promise<{ jti: string; exp: number }> {
    const decoded = jwt.decode(token, { complete: true });
    if (!decoded || typeof decoded.payload === 'string') throw new RefusedToken('it is not a JSON Web Token');
    const { alg, kid } = decoded.header;
    if (!(FIRE_TOKEN_ALGORITHMS as readonly string[]).includes(alg))
      throw new RefusedToken(`its algorithm ${alg} is not an allowed asymmetric one`);
    if (typeof kid !== 'string' || kid === '') throw new RefusedToken('it names no key (kid)');
    const key = await this.keyFor(kid);
    if (key === null) throw new RefusedToken(`its key ${kid} is not in the JWKS`);
    const nowSeconds = Math.floor(this.clock.now().getTime() / 1000);
    const payload = jwt.verify(token, key, {
      algorithms: [...FIRE_TOKEN_ALGORITHMS],
      audience: this.settings.audience,
      issuer: this.settings.issuer,
      clockTolerance: FIRE_TOKEN_LEEWAY_SECONDS,
      clockTimestamp: nowSeconds,
    }) as JwtPayload;
    if (payload.purpose !== 'cron_fire') throw new RefusedToken('its purpose is not cron_fire');
    if (typeof payload.exp !== 'number') throw new RefusedToken('it has no exp');
    if (typeof payload.iat !== 'number') throw new RefusedToken('it has no iat');
    // jsonwebtoken does not look at iat. One far ahead would carry exp that far ahead through the
    // lifetime check: a token good for a year, replayable after every restart.
    if (payload.iat > nowSeconds + FIRE_TOKEN_LEEWAY_SECONDS)
      throw new RefusedToken(`its iat is more than ${FIRE_TOKEN_LEEWAY_SECONDS} s ahead of this gateway's clock`);
    if (payload.exp - payload.iat > FIRE_TOKEN_MAX_LIFETIME_SECONDS) throw new RefusedToken('its exp is more than 5 minutes after its iat');
    if (typeof payload.jti !== 'string' || payload.jti === '') throw new RefusedToken('it has no jti');
    if (typeof payload.job_id !== 'string') throw new RefusedToken('it has no job_id');
    if (jobId !== null && payload.job_id !== jobId) throw new RefusedToken(`it is bound to another job (${payload.job_id})`);
    if (jobId !== null && payload.fire_at !== undefined) this.checkSlot(payload.fire_at, fireAt);
    return { jti: payload.jti, exp: payload.exp };
  }

  /** A `fire_at` claim fires only that slot: the body's `fire_at`, the same instant. */
  private checkSlot(claimed: unknown, fireAt: string | null): void {
    if (typeof claimed !== 'string' || Number.isNaN(Date.parse(claimed))) throw new RefusedToken('its fire_at claim is not a time');
    if (fireAt === null || Date.parse(fireAt) !== Date.parse(claimed)) throw new RefusedToken(`it is bound to another slot (${claimed})`);
  }

  private async keyFor(kid: string): Promise<KeyObject | null> {
    // A fetch under way may bring the key: wait for it rather than refuse.
    if (this.fetching) await this.fetching;
    const now = this.clock.now().getTime();
    const expired = now - this.fetchedAt > JWKS_MAX_AGE_MS;
    if ((expired || !this.keys.has(kid)) && now - this.lastFetchAttempt >= JWKS_MIN_REFETCH_MS) await this.refresh();
    return this.keys.get(kid) ?? null;
  }

  /** One fetch at a time: tokens arriving meanwhile wait for it instead of fetching too. */
  private refresh(): Promise<void> {
    this.fetching ??= (async () => {
      this.lastFetchAttempt = this.clock.now().getTime();
      try {
        this.keys = this.readKeys(await this.fetchKeys());
        this.fetchedAt = this.clock.now().getTime();
      } catch (error) {
        this.log.warn(
          `the JWKS at ${this.settings.jwksUrl} could not be fetched or read: ${errorText(error)}; fire tokens are checked against the keys known before`,
        );
      } finally {
        this.fetching = null;
      }
    })();
    return this.fetching;
  }

  /** The PEM keys fetched, read once here rather than at every token; one that cannot be read is left out. */
  private readKeys(pems: ReadonlyMap<string, string>): Map<string, KeyObject> {
    const keys = new Map<string, KeyObject>();
    for (const [kid, pem] of pems) {
      try {
        keys.set(kid, createPublicKey(pem));
      } catch (error) {
        this.log.warn(
          `the key ${kid} of the JWKS at ${this.settings.jwksUrl} cannot be read (${errorText(error)}); tokens naming it are refused`,
        );
      }
    }
    return keys;
  }
}
