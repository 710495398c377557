#!/usr/bin/env node
// The npm registry reachable here lacks some platforms' optional binaries (biome's and
// msgpackr-extract's for macOS, Windows, musl, arm), so `npm install` leaves them out of
// package-lock.json and `npm ci` then refuses the lock as out of sync. This adds each missing
// optional platform package as a lock entry with its os/cpu (as npm writes it on a full registry);
// npm skips them on other platforms without fetching. Run after `npm install`.
import { readFileSync, writeFileSync } from 'node:fs';

const PLATFORM = /-(android|darwin|linux|win32|freebsd)-(arm64|x64|arm|ia32)(-musl|-gnu)?$/;
const lock = JSON.parse(readFileSync('package-lock.json', 'utf8'));
const packages = lock.packages;
let added = 0;
for (const entry of Object.values({ ...packages })) {
  for (const [name, range] of Object.entries(entry.optionalDependencies ?? {})) {
    const key = `node_modules/${name}`;
    const match = PLATFORM.exec(name);
    if (packages[key] || !match) continue;
    packages[key] = {
      version: range.replace(/^[\^~]/, ''),
      cpu: [match[2]],
      os: [match[1]],
      ...(match[3] === '-musl' ? { libc: ['musl'] } : {}),
      ...(entry.dev ? { dev: true } : {}),
      optional: true,
    };
    added++;
  }
}
lock.packages = Object.fromEntries(
  Object.entries(packages).sort(([a], [b]) => (a === '' ? -1 : b === '' ? 1 : a < b ? -1 : 1)),
);
writeFileSync('package-lock.json', `${JSON.stringify(lock, null, 2)}\n`);
console.log(`complete-lockfile: added ${added} optional platform entries`);
