/** "typing…" in a conversation while its turn runs. */
import type { ConversationKey } from '../../domain/chat/inboundMessage.js';
import type { Timer } from '../ports/Timer.js';

/** How often "typing…" is shown again while a turn runs (platforms drop it after ~5 s). */
export const TYPING_EVERY_MS = 4_000;

/** Shows "typing…" in a conversation, where its platform can. */
export type ShowTyping = (conversation: ConversationKey) => Promise<void>;

/** Shows "typing…" now and every few seconds until the returned controller is aborted; nothing without `show`. */
export function showTypingWhile(conversation: ConversationKey, show: ShowTyping | undefined, timer: Timer): AbortController {
  const done = new AbortController();
  if (!show) return done;
  void (async () => {
    while (!done.signal.aborted) {
      await show(conversation).catch(() => undefined);
      await timer.wait(TYPING_EVERY_MS, done.signal, { background: true });
    }
  })();
  return done;
}
