/**
 * Compaction policies and triggers: which strategy a session gets, and when it must be compacted.
 * Pure: the policy schema, the precedence rule, and the trigger check of one session. No I/O, no
 * clock (the caller passes `now`).
 *
 * Precedence, most specific first: the event's strategy override > the agent's policy > the
 * tenant's policy > the built-in default. Triggers and mode come from the most specific policy
 * (an event only overrides the strategy).
 */
import { z } from 'zod';
import { InvalidInputError } from '../contract/errors.ts';
import { DEFAULT_STRATEGY, type Strategy, strategySchema, strategyUnit } from '../strategies/index.ts';
import { budgetSchema } from './budget.ts';
import { limitsSchema } from './limits.ts';
import { paybackSchema } from './payback.ts';

/**
 * When a session must be compacted. Any trigger that fires is enough; a session with none that
 * applies (no context window known, no message or token limit) is compacted whenever the plan
 * finds messages to move.
 */
export const triggersSchema = z
  .object({
    /** Fires when the session holds more than this many live messages. */
    maxMessages: z.number().int().min(1).max(10_000_000).optional(),
    /** Fires when the session's tokens exceed this many. */
    maxTokens: z.number().int().min(1).max(100_000_000).optional(),
    /**
     * Fires when the session's tokens exceed this share of its context window (when the session
     * records one). Default 0.85, in the spirit of the common 85-90% thresholds.
     */
    contextFraction: z.number().gt(0).max(1).default(0.85),
    /** Least time between two compactions of one session, ms. Default 0. */
    minIntervalMs: z
      .number()
      .int()
      .min(0)
      .max(30 * 24 * 3_600_000)
      .default(0),
  })
  .strict();

export type Triggers = z.infer<typeof triggersSchema>;

/** `inPlace` rewrites the session; `newSession` continues the compacted history in a child session. */
export const MODES = ['inPlace', 'newSession'] as const;
export type Mode = (typeof MODES)[number];

/** A policy as written by `compactor policy set` (validated on write). */
export const policySchema = z
  .object({
    strategy: strategySchema,
    triggers: triggersSchema.default({ contextFraction: 0.85, minIntervalMs: 0 }),
    mode: z.enum(MODES).default('inPlace'),
    enabled: z.boolean().default(true),
    /**
     * Sweep-found `summarize` compactions go through the Anthropic Message Batches API (half the
     * price, results within 24 h) instead of one call each. Events are always summarized online.
     */
    batch: z.boolean().default(false),
    /**
     * Archived originals older than this many days are dropped on the sweep (each drop recorded in
     * the ledger as an `expired` row; the compactions they came from can no longer be restored).
     * Absent: archived originals are kept forever.
     */
    retentionDays: z
      .number()
      .int()
      .min(1)
      .max(100 * 365)
      .optional(),
    /**
     * Spend limits on LLM summaries, USD per UTC day and/or month (shared/policy/budget.ts). A
     * tenant policy's budget caps all the tenant's sessions; an agent policy's caps that agent's,
     * and the tenant's still applies. Absent: no limit.
     */
    budget: budgetSchema.optional(),
    /**
     * The tenant's limits (shared/policy/limits.ts): API request rate, session size, context reads.
     * Only on a tenant's own policy; each field left out takes the process's default.
     */
    limits: limitsSchema.optional(),
    /**
     * Skip a compaction that would not pay for itself (shared/policy/payback.ts): when its
     * predicted savings over the session's expected remaining requests are under `minRatio` times
     * its predicted cost (summary call + prompt-cache rewrite). Absent: never skipped for that
     * (the prediction is still recorded in the ledger).
     */
    payback: paybackSchema.optional(),
  })
  .strict();

export type Policy = z.infer<typeof policySchema>;
export type PolicyInput = z.input<typeof policySchema>;

/** The built-in default: summarize, keep 10, trigger at 85% of the context window, in place. */
export const DEFAULT_POLICY: Policy = {
  strategy: DEFAULT_STRATEGY,
  triggers: { contextFraction: 0.85, minIntervalMs: 0 },
  mode: 'inPlace',
  enabled: true,
  batch: false,
};

/** The policy in force and where it came from. */
export interface EffectivePolicy extends Policy {
  source: 'agent' | 'tenant' | 'default';
  /** True when the event named the strategy. */
  strategyOverridden: boolean;
}

/**
 * Applies the precedence rule.
 * @param override the event's strategy, if it named one.
 */
export function resolvePolicy(
  override: Strategy | undefined,
  agent: Policy | null,
  tenant: Policy | null,
): EffectivePolicy {
  const base = agent ?? tenant ?? DEFAULT_POLICY;
  const source = agent ? 'agent' : tenant ? 'tenant' : 'default';
  return { ...base, strategy: override ?? base.strategy, source, strategyOverridden: override !== undefined };
}

/**
 * The policy with the request's summary instructions (`compact --instructions`) over its strategy's
 * own; unchanged when there are none. The caller has validated them.
 * @throws {InvalidInputError} naming `instructions` when the strategy in force writes no summary.
 */
export function withInstructions(policy: EffectivePolicy, instructions: string | undefined): EffectivePolicy {
  if (instructions === undefined) return policy;
  const { strategy } = policy;
  // `auto` writes its summary in its second stage: the instructions are that stage's.
  if (strategy.type === 'auto') {
    return { ...policy, strategy: { ...strategy, summarize: { ...strategy.summarize, instructions } } };
  }
  if (strategy.type !== 'summarize') {
    throw new InvalidInputError(
      `instructions: the strategy in force (${strategyUnit(strategy).describe(strategy)}, from the ${policy.strategyOverridden ? 'override' : `${policy.source} policy`}) ` +
        'writes no summary, so it has no use for summary instructions; choose a summarize strategy',
    );
  }
  return { ...policy, strategy: { ...strategy, instructions } };
}

/** The numbers of a session the triggers look at. Tokens are estimated; times are ms since the epoch. */
export interface SessionStats {
  messageCount: number;
  tokenCount: number;
  contextWindow: number | null;
  lastCompactedAt: number | null;
  /** The context's real size in tokens as the agent last reported it, or null (none since the last compaction). */
  reportedInputTokens?: number | null;
  /** `tokenCount` when that report arrived. */
  reportedTokenCount?: number | null;
}

/**
 * The session's context size in tokens as the token triggers measure it: the agent's reported
 * figure plus the estimate of what was appended since, when there is a report; else the estimate.
 */
export function contextTokens(session: SessionStats): number {
  const { reportedInputTokens: reported, reportedTokenCount: then } = session;
  if (reported === null || reported === undefined || then === null || then === undefined)
    return session.tokenCount;
  return Math.max(0, reported + session.tokenCount - then);
}

/** Which trigger fired, or why none did. */
export type TriggerDecision = { fire: true; reason: string } | { fire: false; reason: string };

/**
 * Decides whether `triggers` fire for a session at time `now` (ms since the epoch).
 * The minimum interval wins over every other trigger.
 */
export function checkTriggers(triggers: Triggers, session: SessionStats, now: number): TriggerDecision {
  if (session.lastCompactedAt !== null && triggers.minIntervalMs > 0) {
    const since = now - session.lastCompactedAt;
    if (since < triggers.minIntervalMs) {
      return {
        fire: false,
        reason: `compacted ${since} ms ago, less than the minimum interval of ${triggers.minIntervalMs} ms`,
      };
    }
  }
  const limits = triggerLimits(triggers, session.contextWindow);
  if (limits.maxMessages === null && limits.maxTokens === null) {
    return {
      fire: true,
      reason: 'no trigger applies to this session (no limit set, no context window known)',
    };
  }
  if (limits.maxMessages !== null && session.messageCount > limits.maxMessages) {
    return {
      fire: true,
      reason: `${session.messageCount} messages, over the limit of ${limits.maxMessages}`,
    };
  }
  const tokens = contextTokens(session);
  const measured = tokens === session.tokenCount ? 'tokens' : 'tokens (as the agent reported them)';
  if (limits.maxTokens !== null && tokens > limits.maxTokens) {
    return { fire: true, reason: `${tokens} ${measured}, over the limit of ${limits.maxTokens}` };
  }
  const parts = [
    limits.maxMessages !== null ? `${session.messageCount} of ${limits.maxMessages} messages` : null,
    limits.maxTokens !== null ? `${tokens} of ${limits.maxTokens} ${measured}` : null,
  ].filter(Boolean);
  return { fire: false, reason: `below every trigger: ${parts.join(', ')}` };
}

/**
 * The effective limits: `maxTokens` is the lower of the absolute limit and `contextFraction` of
 * the context window. Null means "no such limit".
 */
export function triggerLimits(
  triggers: Triggers,
  contextWindow: number | null,
): { maxMessages: number | null; maxTokens: number | null } {
  const fromWindow = contextWindow ? Math.floor(contextWindow * triggers.contextFraction) : null;
  const tokenLimits = [triggers.maxTokens ?? null, fromWindow].filter((v): v is number => v !== null);
  return {
    maxMessages: triggers.maxMessages ?? null,
    maxTokens: tokenLimits.length > 0 ? Math.min(...tokenLimits) : null,
  };
}

/** The session row as the admission check reads it. */
export interface GateState extends SessionStats {
  /** The session's agent, or null; whose budget applies besides the tenant's. */
  agentId?: string | null;
  lastSeq: number;
  compactionVersion: number;
  /** `last_seq` when a compaction last failed to bring the session under its trigger, or null. */
  stormGuardSeq: number | null;
  /** Set when the session continued in a child session. */
  childSessionId: string | null;
}

/** What asks for the compaction. */
export interface AdmissionRequest {
  trigger: 'event' | 'sweep' | 'manual';
  /** A sweep's job carries the version it saw: a compaction since then makes it moot. */
  expectedVersion?: number | undefined;
}

/**
 * Decides, before any lock or LLM call, whether a compaction is worth attempting. Manual
 * requests skip the triggers, the minimum interval and the storm guard, not the lineage rule.
 * @param now wall-clock time, ms since the epoch.
 */
export function admit(
  request: AdmissionRequest,
  policy: EffectivePolicy,
  state: GateState,
  now: number,
): TriggerDecision {
  if (state.childSessionId !== null) {
    return { fire: false, reason: `the session continued in session "${state.childSessionId}"` };
  }
  if (request.trigger === 'manual') return { fire: true, reason: 'manual request' };
  if (!policy.enabled)
    return { fire: false, reason: `compaction is disabled by the ${policy.source} policy` };
  if (request.expectedVersion !== undefined && request.expectedVersion !== state.compactionVersion) {
    return {
      fire: false,
      reason: `compacted since the sweep saw it (version ${request.expectedVersion}, now ${state.compactionVersion})`,
    };
  }
  const decision = checkTriggers(policy.triggers, state, now);
  if (decision.fire && state.stormGuardSeq !== null) {
    const needed = newMessagesToRetry(policy.strategy);
    const arrived = state.lastSeq - state.stormGuardSeq;
    if (arrived < needed) {
      return {
        fire: false,
        reason:
          `storm guard: the last compaction could not bring the session under its trigger; ` +
          `waiting for ${needed - arrived} more message(s) before trying again`,
      };
    }
  }
  return decision;
}

/**
 * Whether a compaction asked for by `request` may set the storm guard when it leaves the session
 * over its trigger. The guard holds back the automatic compactions that follow, which run the
 * policy's strategy, so only a run that speaks for those may set it: events and sweeps always (an
 * event's own strategy override included, so that an agent that always names one is still
 * guarded), and a manual request that runs the policy's strategy. A manual request that names its
 * own strategy (`compactor compact --strategy`, `compactNow` with a strategy) says nothing about
 * the policy's, which may keep fewer messages and get under the trigger where it could not: it
 * never sets the guard. Applied, it clears the guard as a compaction that gets the session under
 * its trigger does, so the policy's next event tries its own strategy once (and sets the guard
 * again if that cannot help either); skipped, it leaves the guard as it was.
 */
export function setsStormGuard(
  request: Pick<AdmissionRequest, 'trigger'>,
  policy: Pick<EffectivePolicy, 'strategyOverridden'>,
): boolean {
  return request.trigger !== 'manual' || !policy.strategyOverridden;
}

/**
 * New messages after which a compaction that could not get under the trigger may help again:
 * as many as the strategy keeps verbatim (once they arrive, the messages kept last time can leave).
 */
export function newMessagesToRetry(strategy: Strategy): number {
  return Math.max(1, strategyUnit(strategy).kept(strategy));
}

/**
 * Whether the next stage of a staged strategy (`auto`: the summary after the clearing) runs: the
 * trigger check of {@link checkTriggers} on the session as the previous stage left it, without the
 * minimum interval (the previous stage has just compacted) or the storm guard. The same for every
 * request, a manual one too: a manual `auto` asks for the clearing, and for a summary only when the
 * clearing was not enough. As for admission, a session that no trigger applies to (no limit set, no
 * context window known) fires, so it is summarized whenever the summary finds messages to move.
 */
export function nextStageFires(triggers: Triggers, session: SessionStats): TriggerDecision {
  return checkTriggers({ ...triggers, minIntervalMs: 0 }, session, 0);
}

/** Whether a session of these counts would still fire the message/token triggers. */
export function overTrigger(
  triggers: Triggers,
  contextWindow: number | null,
  messages: number,
  tokens: number,
): boolean {
  const limits = triggerLimits(triggers, contextWindow);
  return (
    (limits.maxMessages !== null && messages > limits.maxMessages) ||
    (limits.maxTokens !== null && tokens > limits.maxTokens)
  );
}
