/** Who may talk to the bot on one platform, and with which tools (`platforms.<name>`). */
export interface ChatAccess {
  /** The platform's user ids that may (`allowed_users`); null: anyone (`allow_all_users: true`). */
  allowedUsers: ReadonlySet<string> | null;
  /** The toolsets of this platform's turns (`toolsets`); null: every one (`agent-chat`). */
  toolsets: readonly string[] | null;
}

/** How the gateway takes chat turns (`chat.*`, `platforms.<name>.*`; docs/chat-platforms.md). */
export interface ChatSettings {
  /** Exchanges of a conversation given to its next turn (`chat.history_turns`). */
  historyTurns: number;
  /** Turns taken at once, across conversations (`chat.max_concurrent_turns`). */
  maxConcurrentTurns: number;
  /** The platforms whose receiving is on, by name. */
  platforms: Readonly<Record<string, ChatAccess>>;
}
