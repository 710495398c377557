#!/usr/bin/env node
// The `compactor` command from the TypeScript sources, through tsx: what a checkout (and its tests)
// run with no build step. The package's `bin` is the built `dist/worker/bin/compactor.js`.
import { register } from 'tsx/esm/api';

register();
await import('./compactor.ts');
