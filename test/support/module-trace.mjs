// Preloaded with `node --import`: when the process exits, writes to the file named by
// MODULE_TRACE_FILE the URL of every module it resolved, one a line, so a test can tell which
// packages a command loaded. Uses module.registerHooks (Node 22.15 and later).
import { writeFileSync } from 'node:fs';
import { registerHooks } from 'node:module';

const resolved = new Set();
registerHooks({
  resolve(specifier, context, nextResolve) {
    const result = nextResolve(specifier, context);
    resolved.add(result.url);
    return result;
  },
});
process.on('exit', () => {
  if (process.env.MODULE_TRACE_FILE) writeFileSync(process.env.MODULE_TRACE_FILE, [...resolved].join('\n'));
});
