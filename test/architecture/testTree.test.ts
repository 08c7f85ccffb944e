import { describe, expect, it } from '@jest/globals';
import { readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const TEST = fileURLToPath(new URL('..', import.meta.url));

/** The test tree mirrors src (docs/architecture.md): one folder per layer, the rest for what spans them. */
describe('the test tree', () => {
  it('has a folder per layer of src and one support folder, nothing beside them', () => {
    const folders = readdirSync(TEST, { withFileTypes: true })
      .filter((entry) => entry.isDirectory())
      .map((entry) => entry.name)
      .sort();
    expect(folders).toEqual([
      'adapters',
      'application',
      'architecture',
      'composition',
      'contract',
      'docs',
      'domain',
      'e2e',
      'plugins',
      'support',
    ]);
  });

  it('keeps the fakes, helpers and harnesses in test/support', () => {
    const support = readdirSync(new URL('../support', import.meta.url), { withFileTypes: true });
    expect(support.filter((entry) => entry.isDirectory()).map((entry) => entry.name)).toEqual(
      expect.arrayContaining(['fakes', 'platforms']),
    );
  });
});
