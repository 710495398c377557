/**
 * How many worker processes `compactor worker --processes` asks for. Pure: the core count is
 * handed in (the command passes `os.availableParallelism()`).
 */

/**
 * Parses `--processes`: absent is 1 (one process, no primary); `auto` is `cores`; else a positive
 * integer. Returns null for a value that is neither, for the command to report.
 */
export function parseProcessCount(value: string | undefined, cores: number): number | null {
  if (value === undefined) return 1;
  if (value.trim().toLowerCase() === 'auto') return Math.max(1, cores);
  const n = Number(value);
  return Number.isInteger(n) && n >= 1 ? n : null;
}
