/** One request waiting for the statement that carries it. */
interface Waiting<I, O> {
  item: I;
  resolve: (output: O) => void;
  reject: (error: unknown) => void;
}

/**
 * Sends requests of one kind (reads of jobs by id, writes of one job each) as few statements:
 * a request made while none of its kind is under way is sent at once, alone, so a lone request
 * waits for nothing; requests made while one is under way are sent together, in one statement,
 * when it ends (at most `maxBatch` in one). So under load a statement, and the disk write of its
 * commit, is shared by many requests, and alone each costs what it did.
 *
 * `send` answers with one output per item, in order; when it rejects, every request of the batch
 * is rejected with its error.
 */
export class StatementBatcher<I, O> {
  private waiting: Array<Waiting<I, O>> = [];
  private sending = false;

  constructor(
    private readonly send: (items: readonly I[]) => Promise<readonly O[]>,
    private readonly maxBatch = 256,
  ) {}

  /** Sends `item` with the next statement; resolves with its output. */
  submit(item: I): Promise<O> {
    return new Promise<O>((resolve, reject) => {
      this.waiting.push({ item, resolve, reject });
      if (!this.sending) void this.sendWaiting();
    });
  }

  private async sendWaiting(): Promise<void> {
    this.sending = true;
    while (this.waiting.length > 0) {
      const batch = this.waiting.splice(0, this.maxBatch);
      try {
        const outputs = await this.send(batch.map((waiting) => waiting.item));
        batch.forEach((waiting, index) => waiting.resolve(outputs[index]!));
      } catch (error) {
        for (const waiting of batch) waiting.reject(error);
      }
    }
    this.sending = false;
  }
}
