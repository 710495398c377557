/**
 * What the parser and the help know of `compactor policy set`, `compactor policy get`, `compactor policy list`, `compactor policy delete`, `compactor policy`: flags, help text, examples. Its run
 * (commands/policy.ts) is imported only when the command runs, so `--help` loads none of it.
 */
import { type Command, type CommandGroup, type OptionSpec, TENANT_OPTION } from '../command.ts';

/** The `--agent` of `policy set`, `get` and `delete`. */
const AGENT_OPTION: OptionSpec = {
  type: 'string',
  value: 'A',
  description: "the agent's policy (default: the tenant's own)",
};

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
    const { runPolicySet } = await import('../commands/policy.ts');
    return runPolicySet(args, context);
  },
};

const getCommand: Command = {
  name: 'policy get',
  summary: "print the tenant's or an agent's policy as JSON",
  options: { tenant: TENANT_OPTION, agent: AGENT_OPTION },
  examples: ['compactor policy get --tenant acme --agent triage-bot'],
  async run(args, context) {
    const { runPolicyGet } = await import('../commands/policy.ts');
    return runPolicyGet(args, context);
  },
};

const listCommand: Command = {
  name: 'policy list',
  summary: "print the tenant's and its agents' policies, one JSON line each",
  options: { tenant: TENANT_OPTION },
  examples: ['compactor policy list --tenant acme'],
  async run(args, context) {
    const { runPolicyList } = await import('../commands/policy.ts');
    return runPolicyList(args, context);
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
    const { runPolicyDelete } = await import('../commands/policy.ts');
    return runPolicyDelete(args, context);
  },
};

export const policyGroup: CommandGroup = {
  name: 'policy',
  summary: "set, get, list or delete the tenant's and its agents' compaction policies",
  actions: [setCommand, getCommand, listCommand, deleteCommand],
};
