#!/usr/bin/env node
// The `compactor` command: loads the TypeScript CLI through tsx, so a checkout runs with no build step.
import { register } from 'tsx/esm/api';

// `compactor history | head` closes the pipe early: stop quietly, as other command-line tools do,
// instead of dying on an unhandled EPIPE with a stack trace.
process.stdout.on('error', (error) => {
  if (error.code === 'EPIPE') process.exit(process.exitCode ?? 0);
  throw error;
});

register();
const { main } = await import('../cli/cli.ts');
process.exitCode = await main(process.argv.slice(2));
