import type { PostgresDatabase } from '../../src/adapters/postgres/PostgresDatabase.js';

/**
 * Whether each chat message the database keeps was answered, in the order they came, once every
 * one is (or after about five seconds): a gateway sends an answer, then marks its message answered.
 */
export async function answeredFlags(database: PostgresDatabase): Promise<boolean[]> {
  const flags = async () =>
    (await database.query<{ answered: boolean }>('SELECT answered FROM agent_chat_messages ORDER BY seq')).map((row) => row.answered);
  for (let look = 0; look < 100 && (await flags()).includes(false); look += 1) await new Promise((resolve) => setTimeout(resolve, 50));
  return flags();
}
