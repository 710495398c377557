/**
 * The `--strategy` option of the commands that take one, read with the strategies' own parser: a
 * module of its own so that parsing flags and printing help do not load the strategy schemas.
 */
import { parseStrategy, type Strategy } from '../../shared/strategies/index.ts';
import { optionalText, type ParsedArgs, UsageError } from './command.ts';

/**
 * The `--strategy` shorthand (`slidingWindow:10`, `summarize:20`, JSON), or undefined when absent.
 * @throws {UsageError} naming what cannot be read.
 */
export function strategyOption(args: ParsedArgs): Strategy | undefined {
  const value = optionalText(args, 'strategy');
  if (value === undefined) return undefined;
  try {
    return parseStrategy(value);
  } catch (error) {
    const message = (error as Error).message;
    throw new UsageError(message.startsWith('strategy: ') ? `--${message}` : `--strategy: ${message}`);
  }
}
