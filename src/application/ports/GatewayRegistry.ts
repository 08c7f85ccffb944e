import type { ChatReceiverStatus } from '../../domain/chat/chatReceivers.js';

/** What a running gateway says about itself on its home, for `agent status`. */
export interface GatewayRegistration {
  pid: number;
  /** The host name of the gateway's machine (several machines may share a home). */
  host: string;
  /** When it started, ISO 8601 UTC. */
  startedAt: string;
  /** `host:port` of its HTTP listener; null when it serves none. */
  listener: string | null;
  /** The trigger provider that fires its jobs (`built-in`, `managed`, a plugin's name). */
  provider: string;
  /** Where each of its chat receivers stands (docs/chat-platforms.md); empty or absent when it receives no chat. */
  chatReceivers?: readonly ChatReceiverStatus[];
}

/**
 * Where the gateway of a home registers itself. A registration says a gateway started; whether it
 * still runs is for the reader to check (a gateway killed with -9 leaves its registration behind).
 */
export interface GatewayRegistry {
  /** The registration stored now; null when there is none or it cannot be understood. Writes nothing. */
  read(): Promise<GatewayRegistration | null>;
  /** Replaces the registration with `registration`, atomically and readable by this user only; called again as the receivers' states change. */
  register(registration: GatewayRegistration): Promise<void>;
  /** Removes the registration if it is still `registration`'s (another gateway's is left alone). Never throws. */
  unregister(registration: GatewayRegistration): Promise<void>;
}
