import { readFileSync } from 'node:fs';
import { isServiceCredential, NO_CHILD_ENVIRONMENT_POLICY } from '../../domain/childEnvironment.js';
import { ERROR_CODES } from '../../domain/errorCodes.js';
import { ConfigError } from './ConfigError.js';

/** What marks a variable that names the file holding another's value (the Docker secrets convention). */
const FILE_SUFFIX = '_FILE';

/**
 * `env` with each credential given as a file read into its variable: `TELEGRAM_BOT_TOKEN_FILE=
 * /run/secrets/telegram` gives `TELEGRAM_BOT_TOKEN` the file's content, without its last line
 * break (docs/configuration.md, Secrets in files). The process's own environment then holds the
 * file's path, never the credential. Only the names of credentials (isServiceCredential) are
 * read this way. A file that cannot be read, or a variable given both ways, is refused in one
 * sentence. `env` itself is left as it is.
 */
export function withCredentialFiles(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  let resolved: NodeJS.ProcessEnv | null = null;
  for (const [name, path] of Object.entries(env)) {
    if (!name.toUpperCase().endsWith(FILE_SUFFIX) || path === undefined || path === '') continue;
    const target = name.slice(0, -FILE_SUFFIX.length);
    if (target === '' || !isServiceCredential(target, NO_CHILD_ENVIRONMENT_POLICY)) continue;
    if (env[target] !== undefined && env[target] !== '') {
      throw new ConfigError(
        ERROR_CODES.CONFIG.INVALID,
        `Both ${target} and ${name} are set; set only one of them (${name} names a file that holds ${target}).`,
      );
    }
    resolved ??= { ...env };
    resolved[target] = readCredential(name, path);
  }
  return resolved ?? env;
}

function readCredential(name: string, path: string): string {
  try {
    return readFileSync(path, 'utf8').replace(/\r?\n$/, '');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? String(error);
    throw new ConfigError(
      ERROR_CODES.CONFIG.UNREADABLE,
      `${name} names ${path}, which cannot be read (${code}); point it at the file that holds the secret, readable by this user.`,
    );
  }
}
