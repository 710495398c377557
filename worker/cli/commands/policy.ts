/** `compactor policy set|get|list|delete`: a tenant's and its agents' compaction policies. */
import { InvalidInputError } from '../../../shared/contract/errors.ts';
import { deletePolicy, getPolicy, listPolicies, setPolicy } from '../../postgres/policies.ts';
import { type CommandContext, optionalText, type ParsedArgs, text, UsageError } from '../command.ts';
import { withDatabase } from '../database.ts';
import { jsonLine } from '../format.ts';

function whose(args: ParsedArgs): { tenantId: string; agentId: string | null; label: string } {
  const tenantId = text(args, 'tenant');
  const agentId = optionalText(args, 'agent') ?? null;
  return { tenantId, agentId, label: `tenant "${tenantId}"${agentId ? ` agent "${agentId}"` : ''}` };
}

/** Runs `compactor policy set` (its spec, flags and help: specs/policy.ts); resolves with the exit code. */
export async function runPolicySet(args: ParsedArgs, context: CommandContext): Promise<number> {
  const { tenantId, agentId } = whose(args);
  const policyText = text(args, 'policy');
  let input: unknown;
  try {
    input = JSON.parse(policyText);
  } catch {
    throw new UsageError(`--policy must be a JSON object, got: ${policyText.slice(0, 80)}`);
  }
  const row = await withDatabase(context, (db) => setPolicy(db, tenantId, agentId, input));
  context.stdout.write(`${jsonLine(row)}\n`);
  return 0;
}

/** Runs `compactor policy get` (its spec, flags and help: specs/policy.ts); resolves with the exit code. */
export async function runPolicyGet(args: ParsedArgs, context: CommandContext): Promise<number> {
  const { tenantId, agentId, label } = whose(args);
  const row = await withDatabase(context, (db) => getPolicy(db, tenantId, agentId));
  if (!row) throw new InvalidInputError(`no policy for ${label}`);
  context.stdout.write(`${jsonLine(row)}\n`);
  return 0;
}

/** Runs `compactor policy list` (its spec, flags and help: specs/policy.ts); resolves with the exit code. */
export async function runPolicyList(args: ParsedArgs, context: CommandContext): Promise<number> {
  const tenantId = text(args, 'tenant');
  const rows = await withDatabase(context, (db) => listPolicies(db, tenantId));
  for (const row of rows) context.stdout.write(`${jsonLine(row)}\n`);
  return 0;
}

/** Runs `compactor policy delete` (its spec, flags and help: specs/policy.ts); resolves with the exit code. */
export async function runPolicyDelete(args: ParsedArgs, context: CommandContext): Promise<number> {
  const { tenantId, agentId, label } = whose(args);
  const row = await withDatabase(context, (db) => deletePolicy(db, tenantId, agentId));
  if (!row) throw new InvalidInputError(`no policy for ${label}; nothing deleted`);
  context.stdout.write(`${jsonLine(row)}\n`);
  return 0;
}
