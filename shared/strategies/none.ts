/** `none`: compaction is off. Every event is recorded as skipped, so the ledger still says why. */
import { z } from 'zod';
import { skip } from '../planning/window.ts';
import type { StrategyUnit } from './unit.ts';

export const noneStrategySchema = z.object({ type: z.literal('none') }).strict();

export type NoneStrategy = z.infer<typeof noneStrategySchema>;

export const none: StrategyUnit<NoneStrategy> = {
  type: 'none',
  schema: noneStrategySchema,
  usage: 'none',
  // Tail options are passed on for the strict schema to refuse: `none` keeps no tail.
  shorthand: (_n, tail) => ({ type: 'none', ...tail }),
  describe: () => 'none',
  kept: () => 0,
  summarizes: false,
  summaryOptions: () => null,
  plan: () => skip('none', 'strategy is none'),
};
