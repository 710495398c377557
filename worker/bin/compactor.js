#!/usr/bin/env node
// The `compactor` command: loads the TypeScript CLI through tsx, so a checkout runs with no build step.
import { register } from 'tsx/esm/api';

register();
const { main } = await import('../cli/cli.ts');
process.exitCode = await main(process.argv.slice(2));
