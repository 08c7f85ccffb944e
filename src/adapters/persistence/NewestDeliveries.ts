/**
 * The newest delivery keys seen, at most `limit`, in a heap by time: a journal may hold many
 * more keys than a process remembers (DeliveryMemory's bound), and reading it must not hold
 * them all, nor churn through a memory that forgets all but the last.
 */
export class NewestDeliveries {
  private readonly keys: string[] = [];
  private readonly times: number[] = [];

  constructor(
    private readonly keep: (atMs: number) => boolean,
    private readonly limit: number,
  ) {}

  add(key: string, atMs: number): void {
    if (!Number.isFinite(atMs) || !this.keep(atMs) || this.limit === 0) return;
    if (this.keys.length < this.limit) {
      this.keys.push(key);
      this.times.push(atMs);
      this.siftUp(this.keys.length - 1);
    } else if (atMs > this.times[0]!) {
      this.keys[0] = key;
      this.times[0] = atMs;
      this.siftDown(0);
    }
  }

  oldestFirst(): Array<{ key: string; atMs: number }> {
    return this.keys.map((key, index) => ({ key, atMs: this.times[index]! })).sort((a, b) => a.atMs - b.atMs);
  }

  private siftUp(index: number): void {
    while (index > 0) {
      const parent = (index - 1) >> 1;
      if (this.times[parent]! <= this.times[index]!) return;
      this.swap(index, parent);
      index = parent;
    }
  }

  private siftDown(index: number): void {
    for (;;) {
      const left = 2 * index + 1;
      const right = left + 1;
      let oldest = index;
      if (left < this.keys.length && this.times[left]! < this.times[oldest]!) oldest = left;
      if (right < this.keys.length && this.times[right]! < this.times[oldest]!) oldest = right;
      if (oldest === index) return;
      this.swap(index, oldest);
      index = oldest;
    }
  }

  private swap(a: number, b: number): void {
    [this.keys[a], this.keys[b]] = [this.keys[b]!, this.keys[a]!];
    [this.times[a], this.times[b]] = [this.times[b]!, this.times[a]!];
  }
}
