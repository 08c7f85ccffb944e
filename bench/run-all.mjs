// npm run bench: every figure of bench/README.md, in one run.
await import('./cli-startup.mjs');
console.log('');
await import('./tick.mjs');
console.log('');
await import('./tree-kill.mjs');
console.log('');
await import('./delivery.mjs');
console.log('');
await import('./firing.mjs');
