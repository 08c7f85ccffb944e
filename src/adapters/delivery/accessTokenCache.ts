import type { PlatformSettings } from './PlatformSettings.js';

/** A token as the platform's token endpoint issued it. */
export interface IssuedToken {
  value: string;
  /** Its lifetime from now, as the platform gave it; 0 or less when it gave none usable. */
  expiresInSeconds: number;
}

/**
 * How long before its expiry a token is replaced. A send takes at most one request timeout, so a
 * minute leaves room; QQ also hands out a new token only within 60 s of the old one's expiry.
 */
export const TOKEN_MARGIN_MS = 60_000;

/**
 * The access token of a platform that issues short-lived ones (WeCom, QQ Bot): asked for once,
 * kept until shortly before the expiry the platform gave, and shared by concurrent sends so that
 * a burst of parts makes one token request, not one each.
 */
export class AccessTokenCache {
  private cached: { value: string; renewAt: number } | null = null;
  private pending: Promise<string> | null = null;

  constructor(
    private readonly issue: () => Promise<IssuedToken>,
    /** Milliseconds since the epoch. */
    private readonly now: () => number,
  ) {}

  /** The token in use, or null before the first one was issued; for cutting it out of error text. */
  get current(): string | null {
    return this.cached?.value ?? null;
  }

  /**
   * A token with more than the margin left: the cached one, else a new one. Rejects as `issue`
   * does; `issue` stands in for the constructor's when this call asks for the token, so that a
   * credentials check words its errors as one (a request already under way is joined as it is).
   */
  get(issue: () => Promise<IssuedToken> = this.issue): Promise<string> {
    if (this.cached !== null && this.now() < this.cached.renewAt) return Promise.resolve(this.cached.value);
    this.pending ??= issue()
      .then((token) => {
        const lifetimeMs = Math.max(0, token.expiresInSeconds) * 1000;
        // A token that lives no longer than the margin (or whose lifetime was not given) is used
        // for the send that asked for it and half its life after, never past its expiry.
        const keepMs = lifetimeMs > 2 * TOKEN_MARGIN_MS ? lifetimeMs - TOKEN_MARGIN_MS : lifetimeMs / 2;
        this.cached = { value: token.value, renewAt: this.now() + keepMs };
        return token.value;
      })
      .finally(() => {
        this.pending = null;
      });
    return this.pending;
  }

  /**
   * Forgets `token` after the platform said it is invalid or expired, so that the next `get`
   * asks for a new one. A token another send has already replaced is left alone.
   */
  discard(token: string): void {
    if (this.cached?.value === token) this.cached = null;
  }
}

/**
 * The platform's settings with the issued token counted among its secrets, so that PlatformHttp
 * cuts it out of every error text as it does the configured secrets.
 */
export function settingsHidingToken(settings: PlatformSettings, tokens: AccessTokenCache): PlatformSettings {
  return Object.create(settings, {
    secrets: {
      get: (): readonly string[] => {
        const token = tokens.current;
        return token !== null && token.length >= 4 ? [...settings.secrets, token] : settings.secrets;
      },
    },
  }) as PlatformSettings;
}
