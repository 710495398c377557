#!/usr/bin/env node
// `npm test` runs this first (the `pretest` script): on a Node that package.json's engines.node
// does not allow, it stops with one line saying how to get a Node that is (.ci/node.sh installs the
// pinned one from the npm registry). engines.node is a list of `^X.Y.Z` and `>=X[.Y[.Z]]` ranges
// joined by `||`; another form is an error here, so the check never passes by not understanding it.
import { readFileSync } from 'node:fs';

const range = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')).engines.node;

/** [major, minor, patch] of `1.2.3`, `1.2` or `1` (missing parts 0). */
function parse(version) {
  const parts = version.split('.').map(Number);
  if (parts.length > 3 || parts.some((p) => !Number.isInteger(p) || p < 0))
    throw new Error(`scripts/check-node.mjs: cannot read version "${version}" in engines.node "${range}"`);
  return [parts[0] ?? 0, parts[1] ?? 0, parts[2] ?? 0];
}

/** Negative, 0 or positive as a is below, equal to or above b. */
function compare(a, b) {
  return a[0] - b[0] || a[1] - b[1] || a[2] - b[2];
}

/** Whether `version` is in one `^X.Y.Z` or `>=X.Y.Z` range. */
function within(version, one) {
  const caret = /^\^\s*(\S+)$/.exec(one);
  if (caret) {
    const floor = parse(caret[1]);
    return version[0] === floor[0] && compare(version, floor) >= 0;
  }
  const atLeast = /^>=\s*(\S+)$/.exec(one);
  if (atLeast) return compare(version, parse(atLeast[1])) >= 0;
  throw new Error(`scripts/check-node.mjs: cannot read range "${one}" in engines.node "${range}"`);
}

const version = parse(process.versions.node);
if (!range.split('||').some((one) => within(version, one.trim()))) {
  console.error(
    `compactor needs Node ${range}, this is ${process.version}: run PATH="$(bash .ci/node.sh)":$PATH npm test (it installs Node 24 from the npm registry)`,
  );
  process.exit(1);
}
