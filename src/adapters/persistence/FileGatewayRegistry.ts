import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { inject, injectable } from 'inversify';
import type { GatewayRegistration, GatewayRegistry } from '../../application/ports/GatewayRegistry.js';
import type { AgentPaths } from '../../application/ports/Settings.js';
import { TOKENS } from '../../application/ports/tokens.js';
import { chatReceiverStatusesFrom } from '../../domain/chat/chatReceivers.js';
import { isJsonObject } from '../../domain/webhook/payloadPath.js';
import { ensurePrivateDirectory, readTextIfPresent, withoutByteOrderMark, writeFileAtomically } from './fileSystem.js';

/** The file a running gateway registers itself in. */
export function gatewayFileOf(home: string): string {
  return join(home, 'gateway.json');
}

/**
 * `$AGENT_HOME/gateway.json` (0600): `{"pid", "host", "started_at", "listener", "provider",
 * "chat_receivers": [{"platform", "state", "since", "error"}]}`,
 * written whole by rename. A file that cannot be understood counts as no registration; one that
 * cannot be read is CONTEXT.UNREADABLE.
 */
@injectable()
export class FileGatewayRegistry implements GatewayRegistry {
  private readonly file: string;
  private readonly home: string;

  constructor(@inject(TOKENS.AgentPaths) paths: AgentPaths) {
    this.home = paths.home;
    this.file = gatewayFileOf(paths.home);
  }

  async read(): Promise<GatewayRegistration | null> {
    // A registration this user may not read is an error, not "no gateway".
    const text = await readTextIfPresent(this.file);
    if (text === null) return null;
    try {
      return registrationFrom(JSON.parse(withoutByteOrderMark(text)));
    } catch {
      return null;
    }
  }

  async register(registration: GatewayRegistration): Promise<void> {
    const stored = {
      pid: registration.pid,
      host: registration.host,
      started_at: registration.startedAt,
      listener: registration.listener,
      provider: registration.provider,
      chat_receivers: registration.chatReceivers ?? [],
    };
    // A fresh home is made here (0700) rather than failing the first registration.
    await ensurePrivateDirectory(this.home);
    await writeFileAtomically(this.file, `${JSON.stringify(stored, null, 2)}\n`);
  }

  async unregister(registration: GatewayRegistration): Promise<void> {
    const current = await this.read();
    if (current && (current.pid !== registration.pid || current.host !== registration.host)) return;
    await rm(this.file, { force: true }).catch(() => undefined);
  }
}

function registrationFrom(value: unknown): GatewayRegistration | null {
  if (!isJsonObject(value)) return null;
  const { pid, host, started_at: startedAt, listener, provider, chat_receivers: chatReceivers } = value;
  if (typeof pid !== 'number' || !Number.isSafeInteger(pid) || pid <= 0) return null;
  if (typeof host !== 'string' || typeof startedAt !== 'string' || typeof provider !== 'string') return null;
  if (listener !== null && typeof listener !== 'string') return null;
  const receivers = chatReceiverStatusesFrom(chatReceivers);
  return { pid, host, startedAt, listener, provider, ...(receivers.length > 0 ? { chatReceivers: receivers } : {}) };
}
