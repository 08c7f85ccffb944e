/**
 * The entry `table` holds under `name` itself, or undefined: never one it inherits. Every
 * lookup by a name a user wrote (a toolset, a platform, a macro) goes through here, since a
 * plain `table[name]` finds Object.prototype's members for `constructor`, `toString` or
 * `__proto__`, and `name in table` says they are there.
 */
export function ownEntry<T>(table: Readonly<Record<string, T>>, name: string): T | undefined {
  return Object.hasOwn(table, name) ? table[name] : undefined;
}
