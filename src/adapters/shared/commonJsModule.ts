/**
 * The exports of a CommonJS package loaded with `import()`. Node's own loader offers them both
 * as named exports and as `default`; the bundle (dist/agent.js) offers only `default` for a
 * package that nothing imports statically. Reading `default` first works in both.
 */
export function commonJsExports<Exports extends object>(module: Exports): Exports {
  const { default: exports } = module as { default?: Exports };
  return exports ?? module;
}
