/** `compactor policy set|get|list|delete`: a tenant's and its agents' compaction policies. */
import { InvalidInputError } from '../../../shared/contract/errors.ts';
import { deletePolicy, getPolicy, listPolicies, setPolicy } from '../../postgres/policies.ts';
import {
  type Command,
  type CommandGroup,
  type OptionSpec,
  optionalText,
  type ParsedArgs,
  TENANT_OPTION,
  text,
  UsageError,
} from '../command.ts';
import { withDatabase } from '../database.ts';
import { jsonLine } from '../format.ts';

const AGENT_OPTION: OptionSpec = {
  type: 'string',
  value: 'A',
  description: "the agent's policy (default: the tenant's own)",
};

function whose(args: ParsedArgs): { tenantId: string; agentId: string | null; label: string } {
  const tenantId = text(args, 'tenant');
  const agentId = optionalText(args, 'agent') ?? null;
  return { tenantId, agentId, label: `tenant "${tenantId}"${agentId ? ` agent "${agentId}"` : ''}` };
}

const setCommand: Command = {
  name: 'policy set',
  summary: "store the tenant's or an agent's policy (validated; defaults filled in); print it as JSON",
  options: {
    tenant: TENANT_OPTION,
    agent: AGENT_OPTION,
    policy: {
      type: 'string',
      value: 'JSON',
      description: 'the policy: {"strategy":…, "triggers":…, "mode":…, "enabled":…}',
      required: true,
    },
  },
  notes: ["An agent's policy wins over its tenant's; an event's --strategy wins over both."],
  examples: [
    `compactor policy set --tenant acme --policy '{"strategy":{"type":"slidingWindow","maxMessages":50},"triggers":{"maxMessages":200}}'`,
  ],
  async run(args, context) {
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
  },
};

const getCommand: Command = {
  name: 'policy get',
  summary: "print the tenant's or an agent's policy as JSON",
  options: { tenant: TENANT_OPTION, agent: AGENT_OPTION },
  examples: ['compactor policy get --tenant acme --agent triage-bot'],
  async run(args, context) {
    const { tenantId, agentId, label } = whose(args);
    const row = await withDatabase(context, (db) => getPolicy(db, tenantId, agentId));
    if (!row) throw new InvalidInputError(`no policy for ${label}`);
    context.stdout.write(`${jsonLine(row)}\n`);
    return 0;
  },
};

const listCommand: Command = {
  name: 'policy list',
  summary: "print the tenant's and its agents' policies, one JSON line each",
  options: { tenant: TENANT_OPTION },
  examples: ['compactor policy list --tenant acme'],
  async run(args, context) {
    const tenantId = text(args, 'tenant');
    const rows = await withDatabase(context, (db) => listPolicies(db, tenantId));
    for (const row of rows) context.stdout.write(`${jsonLine(row)}\n`);
    return 0;
  },
};

const deleteCommand: Command = {
  name: 'policy delete',
  summary: "delete the tenant's or an agent's policy; print what was deleted as JSON",
  options: { tenant: TENANT_OPTION, agent: AGENT_OPTION },
  notes: [
    "Its sessions then follow the next policy: an agent's fall back to the tenant's, the tenant's to the",
    'built-in default. Deleting a policy that is not there fails (exit code 1) and changes nothing.',
  ],
  examples: ['compactor policy delete --tenant acme --agent triage-bot'],
  async run(args, context) {
    const { tenantId, agentId, label } = whose(args);
    const row = await withDatabase(context, (db) => deletePolicy(db, tenantId, agentId));
    if (!row) throw new InvalidInputError(`no policy for ${label}; nothing deleted`);
    context.stdout.write(`${jsonLine(row)}\n`);
    return 0;
  },
};

export const policyGroup: CommandGroup = {
  name: 'policy',
  summary: "set, get, list or delete the tenant's and its agents' compaction policies",
  actions: [setCommand, getCommand, listCommand, deleteCommand],
};
