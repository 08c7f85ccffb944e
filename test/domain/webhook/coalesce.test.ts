import {
  CoalesceGroups,
  coalescedPrompt,
  coalesceOf,
  groupRunEvent,
  parseCoalesceWindow,
  type RouteCoalesce,
} from '../../../src/domain/webhook/coalesce.js';
import type { WebhookEvent } from '../../../src/domain/webhook/WebhookEvent.js';
import { ManualClock } from '../../support/fakes/ManualClock.js';

const T0 = '2026-06-01T08:00:00.000Z';
const route = (mode: RouteCoalesce['mode']) => ({
  name: 'github',
  prompt: 'PR {number} push {push}',
  coalesce: { key: '{repository.full_name}#{number}', windowMs: 3000, mode },
});

function anEvent(n: number, receivedAt: string): WebhookEvent {
  return { id: `e${n}`, route: 'github', event: 'pull_request', deliveryId: `d${n}`, payload: { number: 7, push: n }, receivedAt };
}

describe('coalescing webhook events', () => {
  const clock = new ManualClock(T0);
  const add = (groups: CoalesceGroups, id: string, key: string) =>
    groups.add({ id, route: 'github', receivedAtMs: clock.now().getTime(), coalesce: { key, windowMs: 3000 } });

  it('groups events by key, each pushing the group back to its own time plus the window', () => {
    const groups = new CoalesceGroups();
    add(groups, 'e1', 'a');
    clock.advance(2000);
    add(groups, 'e2', 'a');
    add(groups, 'e3', 'b');
    clock.advance(2999);
    expect(groups.due(clock.now().getTime())).toBeNull();
    clock.advance(1);
    const due = groups.due(clock.now().getTime());
    expect(due?.members.map((member) => member.id)).toEqual(['e1', 'e2']);
    groups.close(due!);
    expect(groups.due(clock.now().getTime())?.members.map((member) => member.id)).toEqual(['e3']);
  });

  it('opens a new group for an event of a key whose group was closed', () => {
    const groups = new CoalesceGroups();
    add(groups, 'e1', 'a');
    clock.advance(3000);
    groups.close(groups.due(clock.now().getTime())!);
    add(groups, 'e2', 'a');
    expect(groups.due(clock.now().getTime())).toBeNull();
    clock.advance(3000);
    expect(groups.due(clock.now().getTime())?.id).toBe('e2');
  });

  it('renders the key against the payload as route prompts are rendered', () => {
    expect(coalesceOf(route('latest'), { number: 7, repository: { full_name: 'octo/app' } })).toEqual({
      key: 'octo/app#7',
      windowMs: 3000,
    });
    expect(coalesceOf({}, { number: 7 })).toBeUndefined();
  });

  it('gives a latest run the last payload, and an all run every payload in order, the newest 20 of a larger group', () => {
    const members = Array.from({ length: 25 }, (_, index) => anEvent(index + 1, T0));
    const run = groupRunEvent('e1', members);
    expect(run.id).toBe('e1');
    expect(coalescedPrompt(route('latest'), run)).toBe('PR 7 push 25');
    const all = coalescedPrompt(route('all'), run);
    expect(all).toContain('25 webhook events');
    expect(all).not.toContain('PR 7 push 5\n');
    expect(all.indexOf('PR 7 push 6')).toBeLessThan(all.indexOf('PR 7 push 25'));
    expect(all.match(/^--- Event \d+ of 20/gm)).toHaveLength(20);
  });

  it('reads windows such as 500ms, 30s, 5m and 1h, and nothing else', () => {
    expect([parseCoalesceWindow('500ms'), parseCoalesceWindow('30s'), parseCoalesceWindow('5m'), parseCoalesceWindow('1h')]).toEqual([
      500, 30_000, 300_000, 3_600_000,
    ]);
    for (const wrong of ['0s', '5', '1.5s', 'soon', '25h', 30]) expect(parseCoalesceWindow(wrong)).toBeNull();
  });
});
