import { ToolInputError } from '../../application/agent/ports/Tool.js';

/**
 * Reads the arguments a model sent to one tool. Each wrong shape throws a ToolInputError whose
 * sentence names the tool, the argument and what it must be, so the model can call again.
 *
 * `undefined` and `null` both mean "not given" unless a reader says otherwise (`nullable…`):
 * models often send every optional argument, set to null.
 */
export class ToolArguments {
  constructor(
    private readonly tool: string,
    private readonly args: Record<string, unknown>,
  ) {}

  /** Whether the model sent the argument, null included. */
  has(name: string): boolean {
    return this.args[name] !== undefined;
  }

  /** Refuses argument names the tool does not know (usually a misspelling). */
  rejectUnknown(known: readonly string[]): void {
    const unknown = Object.keys(this.args).filter((name) => !known.includes(name));
    if (unknown.length > 0) {
      throw new ToolInputError(
        `${this.tool} has no argument ${unknown.map((name) => `"${name}"`).join(', ')}; its arguments are ${known.join(', ')}.`,
      );
    }
  }

  string(name: string): string | undefined {
    const value = this.args[name];
    if (value === undefined || value === null) return undefined;
    if (typeof value !== 'string') throw this.wrong(name, 'a string', value);
    return value;
  }

  requiredString(name: string, what: string): string {
    const value = this.string(name);
    if (value === undefined || value.trim() === '') {
      throw new ToolInputError(`${this.tool} needs "${name}": ${what}.`);
    }
    return value;
  }

  /** A string, or null when the model sent null (to clear a setting); undefined when absent. */
  nullableString(name: string): string | null | undefined {
    return this.args[name] === null ? null : this.string(name);
  }

  /** A whole number, or null when the model sent null; undefined when absent. */
  nullableInteger(name: string): number | null | undefined {
    const value = this.args[name];
    if (value === undefined || value === null) return value;
    if (typeof value !== 'number' || !Number.isSafeInteger(value)) throw this.wrong(name, 'a whole number', value);
    return value;
  }

  /** A number, null when given null; undefined when absent. */
  nullableNumber(name: string): number | null | undefined {
    return this.args[name] === null ? null : this.number(name);
  }

  number(name: string): number | undefined {
    const value = this.args[name];
    if (value === undefined || value === null) return undefined;
    if (typeof value !== 'number' || !Number.isFinite(value)) throw this.wrong(name, 'a number', value);
    return value;
  }

  /** true or false; undefined when absent or null. */
  boolean(name: string): boolean | undefined {
    const value = this.args[name];
    if (value === undefined || value === null) return undefined;
    if (typeof value !== 'boolean') throw this.wrong(name, 'true or false', value);
    return value;
  }

  /** A list of non-empty strings; undefined when absent or null. */
  stringList(name: string): string[] | undefined {
    const value = this.args[name];
    if (value === undefined || value === null) return undefined;
    if (!Array.isArray(value) || !value.every((item) => typeof item === 'string' && item.trim() !== '')) {
      throw this.wrong(name, 'a list of non-empty strings', value);
    }
    return value.map((item: string) => item.trim());
  }

  private wrong(name: string, expected: string, value: unknown): ToolInputError {
    return new ToolInputError(`${this.tool}: "${name}" must be ${expected}, not ${shown(value)}.`);
  }
}

function shown(value: unknown): string {
  const text = JSON.stringify(value) ?? String(value);
  return text.length <= 40 ? text : `${text.slice(0, 39)}…`;
}
