/**
 * A compaction's payback as the dashboard shows it: predicted before it (savings over the expected
 * requests, cost, ratio; ledger `payback_*`) and measured from the runs that followed it (ledger
 * `measured_*`; shared/policy/payback.ts). Pure; every figure is a number formatted here.
 */
import type { CompactionRow } from '../../../producer/postgres/schema.ts';
import type { PaybackInputs } from '../../../shared/policy/payback.ts';
import { num } from './html.ts';

type Row = Pick<
  CompactionRow,
  | 'paybackSavingsUsd'
  | 'paybackCostUsd'
  | 'paybackRatio'
  | 'paybackInputs'
  | 'measuredRequests'
  | 'measuredTokensSent'
  | 'measuredTokensWithout'
  | 'measuredSavingsUsd'
  | 'measuredRatio'
>;

/** `1.50×`, `free` for a compaction that costs nothing, `—` for none. */
function ratio(value: number | null): string {
  return value === null ? 'free' : `${Number(value).toFixed(2)}×`;
}

function usd(value: number | null): string {
  return value === null ? '—' : `$${Number(value).toFixed(4)}`;
}

/** The session page's cell: `predicted 1.50× · measured 0.40× (3 runs)`, or `—`. */
export function paybackCell(row: Row): string {
  if (row.paybackSavingsUsd === null) return '—';
  const predicted = `predicted ${ratio(row.paybackRatio)}`;
  if (row.measuredRequests === null) return predicted;
  return `${predicted}<br><span class="muted">measured ${ratio(row.measuredRatio)} (${num(row.measuredRequests)} runs)</span>`;
}

/** The details page's fields: the prediction with its inputs, and the measurement. */
export function paybackFields(row: Row): Array<[string, string]> {
  if (row.paybackSavingsUsd === null) return [['payback', '—']];
  const inputs = row.paybackInputs as PaybackInputs | null;
  const basis = inputs
    ? ` <span class="muted">(${num(inputs.tokensSavedPerRequest)} tokens × ${num(inputs.requests)} requests, ` +
      `${inputs.horizon === 'policy' ? "the policy's horizon" : 'as many again as so far'}, at ` +
      `${inputs.promptCaching ? 'cache-read' : 'input'} prices; cost = summary ${usd(inputs.summaryUsd)} + ` +
      `cache rewrite ${usd(inputs.rewriteUsd)})</span>`
    : '';
  const fields: Array<[string, string]> = [
    [
      'payback predicted',
      `${ratio(row.paybackRatio)}: saves ${usd(row.paybackSavingsUsd)} for ${usd(row.paybackCostUsd)}${basis}`,
    ],
  ];
  if (row.measuredRequests === null) {
    fields.push(['payback measured', '<span class="muted">no run reported since</span>']);
  } else {
    fields.push([
      'payback measured',
      `${ratio(row.measuredRatio)}: saved ${usd(row.measuredSavingsUsd)} over ${num(row.measuredRequests)} runs ` +
        `<span class="muted">(${num(row.measuredTokensSent)} prompt tokens sent, ${num(row.measuredTokensWithout)} without it)</span>`,
    ]);
  }
  return fields;
}
