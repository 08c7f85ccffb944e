/**
 * The words a platform setting's key holds when its value is a credential: a token, a secret, a
 * password or a webhook URL (`bot_token`, `app_secret`, `password`, `webhook_url`). One list for
 * both sides: its variables are kept from children (childEnvironment), and its values are cut out
 * of every message a sender writes (PlatformSettings).
 */
export const SECRET_SETTING_WORDS: readonly string[] = ['token', 'secret', 'password', 'webhook_url'];

/** Whether the value of a platform setting under `key` may be a credential, never to be shown; any case. */
export function isSecretSetting(key: string): boolean {
  const lower = key.toLowerCase();
  return SECRET_SETTING_WORDS.some((word) => lower.includes(word));
}

/**
 * The environment variable that sets `platforms.<platform>.<key>`: `<NAME>_<KEY>` in upper case,
 * every character but a letter or a digit made `_` (`TELEGRAM_BOT_TOKEN`). With an empty key, the
 * prefix of all of a platform's variables (`TELEGRAM_`).
 */
export function environmentVariableFor(platform: string, key: string): string {
  return `${platform}_${key}`.toUpperCase().replace(/[^A-Z0-9]/g, '_');
}
