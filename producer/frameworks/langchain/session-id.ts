/**
 * Which compactor session a LangChain agent run belongs to: a fixed id, a function of the run, or by
 * default the LangGraph thread (`configurable.thread_id`), so one thread is one session. Pure.
 */
import { InvalidInputError } from '../../../shared/contract/errors.ts';

/** What a run tells about itself: LangGraph's `configurable` (its `thread_id`) and the agent's `context`. */
export interface SessionScope {
  configurable?: { thread_id?: string; [key: string]: unknown } | undefined;
  context?: unknown;
}

/** A session id, or how to find it from a run's {@link SessionScope}. */
export type SessionIdOption = string | ((scope: SessionScope) => string);

/**
 * The session id of a run: `option` itself, `option(scope)`, or, without `option`, the run's
 * `configurable.thread_id`.
 * @throws {InvalidInputError} when there is none (no option and no thread id), naming both ways to
 *   give one.
 */
export function sessionIdOf(option: SessionIdOption | undefined, scope: SessionScope): string {
  const id = typeof option === 'function' ? option(scope) : (option ?? scope.configurable?.thread_id);
  if (typeof id !== 'string' || id === '') {
    throw new InvalidInputError(
      'compactor middleware: no session id for this run: pass the sessionId option, or invoke the agent with configurable.thread_id (one thread, one session)',
    );
  }
  return id;
}
