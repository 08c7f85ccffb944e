/**
 * Where a webhook answer delivered to `log` is written: the gateway log (docs/webhooks.md). The
 * gateway writes it to its own log; a command (`agent webhook redeliver`) hands it to the gateway
 * serving this home, and writes it to its own log only when none can take it.
 */
export interface AnswerLog {
  /**
   * Writes `text`, an answer of route `route`, with `about`'s fields (event id, delivery id …) as
   * one log entry. Resolves with where it went, for the user: `the gateway log (process 1234)`,
   * or `this command's log (stderr), as no gateway of this home runs on this machine`. Never throws.
   */
  write(route: string, text: string, about: Record<string, string>): Promise<string>;
}
