#!/usr/bin/env node
/**
 * The `compactor` command. The package's `bin` runs this file's build (`dist/worker/bin/compactor.js`);
 * a checkout without a build runs the sources through `worker/bin/compactor-dev.js`.
 */
import { enableCompileCache } from '../cli/compile-cache.ts';
import { missingPeer } from '../cli/missing-peer.ts';

enableCompileCache();

// `compactor history | head` closes the pipe early: stop quietly, as other command-line tools do,
// instead of dying on an unhandled EPIPE with a stack trace.
process.stdout.on('error', (error: NodeJS.ErrnoException) => {
  if (error.code === 'EPIPE') process.exit(process.exitCode ?? 0);
  throw error;
});

try {
  const { main } = await import('../cli/cli.ts');
  process.exitCode = await main(process.argv.slice(2));
} catch (error) {
  const hint = missingPeer(error);
  if (!hint) throw error;
  process.stderr.write(hint);
  process.exitCode = 1;
}
