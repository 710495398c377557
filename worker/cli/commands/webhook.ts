/** `compactor webhook set|show|remove`: a tenant's signed webhook for `session.compacted`. */
import { InvalidInputError } from '../../../shared/contract/errors.ts';
import { tenantDeliveryError } from '../../../shared/contract/webhooks.ts';
import { deliveriesOf, getWebhook, removeWebhook, setWebhook } from '../../postgres/webhooks.ts';
import { type CommandContext, flag, optionalText, type ParsedArgs, text } from '../command.ts';
import { withDatabase } from '../database.ts';
import { jsonLine } from '../format.ts';
import { RECENT_DELIVERIES } from '../spec-values.ts';

/** Runs `compactor webhook set` (its spec, flags and help: specs/webhook.ts); resolves with the exit code. */
export async function runWebhookSet(args: ParsedArgs, context: CommandContext): Promise<number> {
  const tenantId = text(args, 'tenant');
  const { webhook, generatedSecret } = await withDatabase(context, (db) =>
    setWebhook(
      db,
      tenantId,
      { url: text(args, 'url'), secret: optionalText(args, 'secret'), enabled: !flag(args, 'disable') },
      { targets: context.config().webhookTargets },
    ),
  );
  context.stdout.write(
    `${jsonLine({ ...webhook, ...(generatedSecret ? { secret: generatedSecret } : {}) })}\n`,
  );
  if (generatedSecret) {
    context.stderr.write(
      'the signing secret above is shown this once: store it where the receiver can read it\n',
    );
  }
  return 0;
}

/** Runs `compactor webhook show` (its spec, flags and help: specs/webhook.ts); resolves with the exit code. */
export async function runWebhookShow(args: ParsedArgs, context: CommandContext): Promise<number> {
  const tenantId = text(args, 'tenant');
  const detail = flag(args, 'detail');
  const shown = await withDatabase(context, async (db) => {
    const webhook = await getWebhook(db, tenantId);
    if (!webhook) return null;
    const recent = await deliveriesOf(db, tenantId, { limit: RECENT_DELIVERIES });
    return {
      ...webhook,
      recentDeliveries: recent.map(({ tenantId: _t, id: _i, ...d }) => ({
        ...d,
        error: detail ? d.error : tenantDeliveryError(d),
      })),
    };
  });
  if (!shown) throw new InvalidInputError(`no webhook for tenant "${tenantId}"`);
  context.stdout.write(`${jsonLine(shown)}\n`);
  return 0;
}

/** Runs `compactor webhook remove` (its spec, flags and help: specs/webhook.ts); resolves with the exit code. */
export async function runWebhookRemove(args: ParsedArgs, context: CommandContext): Promise<number> {
  const tenantId = text(args, 'tenant');
  const removed = await withDatabase(context, (db) => removeWebhook(db, tenantId));
  if (!removed) throw new InvalidInputError(`no webhook for tenant "${tenantId}"; nothing deleted`);
  context.stdout.write(`${jsonLine(removed)}\n`);
  return 0;
}
