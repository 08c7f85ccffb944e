import { readFileSync, statSync } from 'node:fs';

/**
 * `url` with the password libpq's variables give, when it has none of its own: `PGPASSWORD`, or
 * the matching line of the file `PGPASSFILE` names. node-postgres reads these from process.env
 * itself, but process.env holds no credential (main.ts takes them out, docs/processes.md): they
 * are read here from the environment the command was given. A password in the URL wins, as in
 * libpq. Without either variable, node-postgres still reads ~/.pgpass itself. A URL this cannot
 * read is returned as it is (databaseLocation says what is wrong with it).
 */
export function withLibpqPassword(url: string, env: NodeJS.ProcessEnv): string {
  const password = env.PGPASSWORD;
  const passFile = env.PGPASSFILE;
  if (!password && !passFile) return url;
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return url;
  }
  if (
    (parsed.protocol !== 'postgres:' && parsed.protocol !== 'postgresql:') ||
    parsed.password !== '' ||
    parsed.searchParams.has('password')
  )
    return url;
  const found = password || (passFile ? passwordInFile(passFile, parsed, env) : undefined);
  if (!found) return url;
  // A URL without a host (a Unix socket given as ?host=/run/postgresql) cannot hold a password before its host.
  if (parsed.hostname === '') parsed.searchParams.set('password', found);
  else parsed.password = encodeURIComponent(found);
  return parsed.toString();
}

/**
 * The password of the first line of a libpq password file (`host:port:database:user:password`,
 * `*` for any, `\:` and `\\` escaped) that matches; undefined when none does or the file cannot
 * be read or is open to others (as libpq, which ignores such a file).
 */
function passwordInFile(path: string, url: URL, env: NodeJS.ProcessEnv): string | undefined {
  let text: string;
  try {
    if (process.platform !== 'win32' && (statSync(path).mode & 0o077) !== 0) return undefined;
    text = readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
  // A Unix socket is matched as `localhost`, as libpq does.
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1') || 'localhost';
  const port = url.port || env.PGPORT || '5432';
  const user = decodeURIComponent(url.username) || env.PGUSER || env.USER || '';
  const database = decodeURIComponent(url.pathname.replace(/^\//, '')) || env.PGDATABASE || user;
  const wanted = [host, port, database, user];
  for (const line of text.split(/\r?\n/)) {
    if (line.trim() === '' || line.trimStart().startsWith('#')) continue;
    const fields = fieldsOf(line);
    if (fields.length < 5) continue;
    if (wanted.every((value, index) => fields[index] === '*' || fields[index] === value)) return fields.slice(4).join(':');
  }
  return undefined;
}

/** The `:`-separated fields of a password file's line, `\:` and `\\` unescaped. */
function fieldsOf(line: string): string[] {
  const fields: string[] = [];
  let field = '';
  for (let i = 0; i < line.length; i += 1) {
    const char = line[i]!;
    if (char === '\\' && i + 1 < line.length) {
      field += line[i + 1];
      i += 1;
    } else if (char === ':') {
      fields.push(field);
      field = '';
    } else {
      field += char;
    }
  }
  fields.push(field);
  return fields;
}
