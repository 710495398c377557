/**
 * What the parser and the help know of `compactor webhook set`, `compactor webhook show`, `compactor webhook remove`, `compactor webhook`: flags, help text, examples. Its run
 * (commands/webhook.ts) is imported only when the command runs, so `--help` loads none of it.
 */
import { type Command, type CommandGroup, TENANT_OPTION } from '../command.ts';
import { RECENT_DELIVERIES } from '../spec-values.ts';

const setCommand: Command = {
  name: 'webhook set',
  summary: "store the tenant's webhook; print it as JSON (with the secret, once, when generated)",
  options: {
    tenant: TENANT_OPTION,
    url: {
      type: 'string',
      value: 'URL',
      description: 'where to POST each event (https; no internal address unless allowed)',
      required: true,
    },
    secret: {
      type: 'string',
      value: 'S',
      description:
        'the signing secret, whsec_ and 24-64 bytes in base64 (default: generated for a new webhook)',
    },
    disable: { type: 'boolean', description: 'store it disabled: no deliveries until set again without it' },
  },
  notes: [
    'After each applied compaction the worker POSTs the session.compacted event as JSON, signed as',
    'Standard Webhooks: webhook-id, webhook-timestamp, webhook-signature: v1,<base64 HMAC-SHA256 of',
    '"<id>.<timestamp>.<body>"> (any Standard Webhooks library, or verifyWebhookSignature, checks it), and',
    'retries anything but a 2xx. The URL must be https and reach a public address: loopback, private,',
    'link-local (metadata) and other internal addresses, local names and names resolving to them are',
    'refused, here and at each delivery, unless COMPACTOR_WEBHOOK_ALLOWED_HOSTS names the host',
    '(COMPACTOR_WEBHOOK_ALLOW_HTTP=true allows http).',
    'Without --secret a new webhook gets a generated secret, printed once here and never shown again; an',
    'existing webhook keeps its secret. One webhook per tenant: set replaces the URL.',
  ],
  examples: ['compactor webhook set --tenant acme --url https://agents.example.com/hooks/compactor'],
  async run(args, context) {
    const { runWebhookSet } = await import('../commands/webhook.ts');
    return runWebhookSet(args, context);
  },
};

const showCommand: Command = {
  name: 'webhook show',
  summary: "print the tenant's webhook (never its secret) and its latest delivery attempts as JSON",
  options: {
    tenant: TENANT_OPTION,
    detail: {
      type: 'boolean',
      description: "the operator's view: each failure's address and system error (not for the tenant)",
    },
  },
  notes: [
    `One JSON object: the URL, whether it is enabled, when it was set, and the last ${RECENT_DELIVERIES} delivery`,
    'attempts (event id, attempt, status code, error, ms, delivered), newest first. The error is what a',
    'tenant may be shown: HTTP <status>, timed out, connection failed or refused by address policy, never',
    'an address, port or system error; --detail shows those (the webhook_deliveries record).',
  ],
  examples: ['compactor webhook show --tenant acme', 'compactor webhook show --tenant acme --detail'],
  async run(args, context) {
    const { runWebhookShow } = await import('../commands/webhook.ts');
    return runWebhookShow(args, context);
  },
};

const removeCommand: Command = {
  name: 'webhook remove',
  summary: "delete the tenant's webhook; print what was deleted as JSON",
  options: { tenant: TENANT_OPTION },
  notes: [
    'Deliveries already queued then end without a request; the delivery log stays. Removing a webhook',
    'that is not there fails (exit code 1) and changes nothing.',
  ],
  examples: ['compactor webhook remove --tenant acme'],
  async run(args, context) {
    const { runWebhookRemove } = await import('../commands/webhook.ts');
    return runWebhookRemove(args, context);
  },
};

/** The `webhook` command group. */
export const webhookGroup: CommandGroup = {
  name: 'webhook',
  summary: "set, show or remove the tenant's signed webhook for session.compacted",
  actions: [setCommand, showCommand, removeCommand],
};
