/** How many accepted webhook events wait, read without taking part in the inbox. */
export interface WebhookBacklog {
  /**
   * Events accepted and not yet done (claimed ones included), as stored now. Opens nothing for
   * writing and takes no lock, so it works beside a running gateway and in a home this user
   * cannot write; 0 when there is no inbox.
   */
  waiting(): Promise<number>;
}
