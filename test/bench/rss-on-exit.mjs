// Preloaded with `node --import` by part 15 (cli-startup.ts): when the process exits, writes its
// peak resident set size (process.resourceUsage().maxRSS, kB) to the file BENCH_RSS_FILE names.
import { writeFileSync } from 'node:fs';

process.on('exit', () => {
  if (process.env.BENCH_RSS_FILE)
    writeFileSync(process.env.BENCH_RSS_FILE, String(process.resourceUsage().maxRSS));
});
