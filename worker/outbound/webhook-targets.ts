/**
 * Where a tenant's webhook may send requests: the address policy, checked when a URL is set
 * ({@link assertWebhookTarget}) and again by every delivery as it connects
 * ({@link webhookAgents}). A tenant chooses the URL, so without it compactor would POST from
 * inside the operator's network to wherever a tenant points it (a metadata service, an admin
 * port, a port scan told through the delivery errors).
 *
 * Refused, unless the operator allows the host (`COMPACTOR_WEBHOOK_ALLOWED_HOSTS`):
 * - http:// (https only; `COMPACTOR_WEBHOOK_ALLOW_HTTP` allows it for internal receivers and tests);
 * - every address that is not public unicast, as ipaddr.js classifies it: loopback, private
 *   (RFC 1918), unique local (fc00::/7), link-local (169.254.0.0/16, where cloud metadata services
 *   answer, and fe80::/10), shared (CGNAT, 100.64.0.0/10), unspecified, broadcast, multicast,
 *   reserved and documentation ranges, and IPv6 forms that carry an IPv4 address (IPv4-mapped,
 *   NAT64, 6to4, Teredo);
 * - IPv4 written in decimal, octal or hex (`2130706433`, `0x7f.1`, `017700000001`): the URL parser
 *   reads them as the dotted address they mean, which is then classified;
 * - names of the local network: single-label names (`metadata`, `instance-data`), `localhost` and
 *   `.localhost`, `.internal` (`metadata.google.internal`), `.local`, `.localdomain`, `.home.arpa`;
 * - names that resolve to a refused address.
 *
 * At delivery the check is made on the connection itself: request-filtering-agent's agent
 * validates the address the DNS lookup of that very connection returned, before connecting to it
 * (with operator-allowed ranges, the lookup it wraps does, see {@link webhookAgents}), so a name
 * that resolves to a public address when set and to 127.0.0.1 later (DNS rebinding) is refused then.
 */
import { lookup as dnsLookupCallback } from 'node:dns';
import { lookup as dnsLookup } from 'node:dns/promises';
import type { Agent } from 'node:http';
import { isIP, type LookupFunction } from 'node:net';
import ipaddr from 'ipaddr.js';
import { RequestFilteringHttpAgent, RequestFilteringHttpsAgent } from 'request-filtering-agent';
import { InvalidInputError } from '../../shared/contract/errors.ts';

/** What the operator allows beyond public https receivers. */
export interface WebhookTargetPolicy {
  /**
   * Host names (exact, case-insensitive), IP addresses and CIDR ranges a webhook may reach though
   * they are internal (`COMPACTOR_WEBHOOK_ALLOWED_HOSTS`). A host name allowed is reached whatever
   * it resolves to; an address or range allows the addresses in it.
   */
  allowedHosts: readonly string[];
  /** Whether http:// URLs are accepted (`COMPACTOR_WEBHOOK_ALLOW_HTTP`); otherwise https only. */
  allowHttp: boolean;
}

/** The default: public https receivers only. */
export const STRICT_WEBHOOK_TARGETS: WebhookTargetPolicy = { allowedHosts: [], allowHttp: false };

/** How long the set-time check waits for DNS, ms; no answer by then leaves the check to delivery. */
const LOOKUP_TIMEOUT_MS = 5_000;

/** A URL the address policy refuses; the message names the host and the rule. */
export class WebhookTargetError extends InvalidInputError {
  override name = 'WebhookTargetError';
}

/** Resolves a host name to all its addresses (`dns.lookup` with `all: true` by default). */
export type HostLookup = (host: string) => Promise<{ address: string }[]>;

const ALLOW_HINT = 'an operator can allow an internal receiver with COMPACTOR_WEBHOOK_ALLOWED_HOSTS';

/** What ipaddr.js calls a range, as the refusal says it. */
const RANGE_NAMES: Record<string, string> = {
  loopback: 'a loopback address',
  private: 'a private address (RFC 1918)',
  uniqueLocal: 'a private address (unique local, fc00::/7)',
  linkLocal: 'a link-local address (169.254.0.0/16 or fe80::/10, where cloud metadata services answer)',
  carrierGradeNat: 'a shared address (CGNAT, 100.64.0.0/10)',
  unspecified: 'the unspecified address',
  broadcast: 'the broadcast address',
  multicast: 'a multicast address',
  ipv4Mapped: 'an IPv4-mapped IPv6 address',
  reserved: 'a reserved address',
};

/** Names that only mean something on a local network. */
const LOCAL_NAME = /(?:^|\.)(?:localhost|internal|local|localdomain|home\.arpa)$/;

/**
 * Checks `url` against `policy` when it is set: its scheme, its host, and what the host resolves
 * to now. A name that does not resolve (yet) passes: delivery checks again as it connects.
 * @param url a URL that `webhookUrlSchema` accepted.
 * @param lookup resolves names (tests hand in their own); default `dns.lookup`, all addresses.
 * @throws {WebhookTargetError} naming the host and why it is refused; nothing is written.
 */
export async function assertWebhookTarget(
  url: string,
  policy: WebhookTargetPolicy,
  lookup: HostLookup = (host) => dnsLookup(host, { all: true, verbatim: true }),
): Promise<void> {
  const host = checkWebhookUrl(url, policy);
  if (host === null || isIP(host) !== 0) return;
  const addresses = await resolve(host, lookup);
  for (const { address } of addresses) {
    const problem = addressProblem(address, policy);
    if (problem !== null) {
      throw new WebhookTargetError(
        `invalid webhook: url: ${host} resolves to ${address}, ${problem}; ${ALLOW_HINT}`,
      );
    }
  }
}

/**
 * The checks that need no DNS, run at set time and before each delivery: the scheme, an address
 * literal (however written: the message shows both), and local names.
 * @param text a URL that `webhookUrlSchema` accepted.
 * @returns the host to resolve and check further (lower-case, without brackets or a final dot), or
 *   null when the operator allows the host.
 * @throws {WebhookTargetError} naming the host and the rule.
 */
export function checkWebhookUrl(text: string, policy: WebhookTargetPolicy): string | null {
  const url = new URL(text);
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && policy.allowHttp)) {
    throw new WebhookTargetError(
      `invalid webhook: url: must be https:// (an operator can allow http:// with COMPACTOR_WEBHOOK_ALLOW_HTTP=true), not ${url.protocol}//`,
    );
  }
  const host = hostOf(url);
  if (hostAllowed(host, policy)) return null;
  if (isIP(host) !== 0) {
    const problem = addressProblem(host, policy);
    if (problem !== null) {
      const written =
        writtenHost(text)
          ?.replace(/^\[|\]$/g, '')
          .toLowerCase() ?? null;
      const shown = written !== null && written !== host ? `host ${written} means ${host},` : `${host} is`;
      throw new WebhookTargetError(`invalid webhook: url: ${shown} ${problem}; ${ALLOW_HINT}`);
    }
    return host;
  }
  if (!host.includes('.') || LOCAL_NAME.test(host)) {
    throw new WebhookTargetError(
      `invalid webhook: url: ${host} is a name of the local network (a single label, localhost, .internal, .local): ` +
        `webhooks need a public name; ${ALLOW_HINT}`,
    );
  }
  return host;
}

/** The URL's host as the policy compares it: lower-case, without IPv6 brackets or a final dot. */
function hostOf(url: URL): string {
  return url.hostname
    .toLowerCase()
    .replace(/^\[|\]$/g, '')
    .replace(/\.$/, '');
}

/** Whether the operator allows `host` (a name, or an address in an allowed address or range). */
function hostAllowed(host: string, policy: WebhookTargetPolicy): boolean {
  return policy.allowedHosts.some((entry) => entry.toLowerCase() === host) || addressAllowed(host, policy);
}

/** Whether `address` (an IP literal, or anything else: false) is in an allowed address or range. */
function addressAllowed(address: string, policy: WebhookTargetPolicy): boolean {
  if (isIP(address) === 0) return false;
  const parsed = ipaddr.process(address);
  return allowedRanges(policy).some((range) => {
    try {
      const cidr = ipaddr.parseCIDR(range);
      return parsed.kind() === cidr[0].kind() && parsed.match(cidr);
    } catch {
      return false;
    }
  });
}

/**
 * Why `address` may not be reached (`a loopback address`, ...), or null when it is a public
 * unicast address or the operator allows it.
 */
export function addressProblem(address: string, policy: WebhookTargetPolicy): string | null {
  if (addressAllowed(address, policy)) return null;
  const range = ipaddr.parse(address).range();
  if (range === 'unicast') return null;
  return RANGE_NAMES[range] ?? `a ${range} address, not a public one`;
}

/** The policy's addresses and ranges as CIDR ranges (an address: its own /32 or /128). */
function allowedRanges(policy: WebhookTargetPolicy): string[] {
  return policy.allowedHosts.flatMap((entry) => {
    const [address, bits] = entry.split('/');
    const kind = isIP(address ?? '');
    if (kind === 0) return [];
    return [bits === undefined ? `${address}/${kind === 4 ? 32 : 128}` : entry];
  });
}

/** The host as the URL text wrote it (before the parser normalized it), for the refusal's message. */
function writtenHost(href: string): string | null {
  return /^[a-z][a-z0-9+.-]*:\/\/(?:[^@/?#]*@)?(\[[^\]]*\]|[^:/?#]*)/i.exec(href)?.[1] ?? null;
}

/** The host's addresses, or none when it does not resolve within {@link LOOKUP_TIMEOUT_MS}. */
async function resolve(host: string, lookup: HostLookup): Promise<{ address: string }[]> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<[]>((done) => {
    timer = setTimeout(() => done([]), LOOKUP_TIMEOUT_MS);
  });
  try {
    return await Promise.race([lookup(host).catch(() => []), timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** The agents deliveries connect through, one per scheme. */
export interface WebhookAgents {
  /** The agent for `url` whose host {@link checkWebhookUrl} passed. */
  for(url: URL): Agent;
  /**
   * The DNS lookup a connection is to use, built on `base` (default `dns.lookup`); undefined: the
   * agent's own, which checks.
   */
  lookup(base?: LookupFunction): LookupFunction | undefined;
  /** Ends their sockets. */
  destroy(): void;
}

/**
 * Agents that refuse, at connect time, every address {@link addressProblem} refuses, and agents
 * without that check for the host names the operator allows. No keep-alive: each delivery resolves
 * and checks afresh. Without allowed addresses or ranges, request-filtering-agent checks the
 * connection's lookup itself. With them, its agents let internal addresses through and the
 * connection's lookup is checked here, with the same ipaddr.js classes: the library compares each
 * address with each allowed range and prints a stack trace on stderr, per connection, when their IP
 * families differ.
 */
export function webhookAgents(policy: WebhookTargetPolicy): WebhookAgents {
  const ranges = allowedRanges(policy);
  const filtering =
    ranges.length === 0 ? { keepAlive: false } : { keepAlive: false, allowPrivateIPAddress: true };
  const http = new RequestFilteringHttpAgent(filtering);
  const https = new RequestFilteringHttpsAgent(filtering);
  const open = {
    http: new RequestFilteringHttpAgent({ allowPrivateIPAddress: true, allowMetaIPAddress: true }),
    https: new RequestFilteringHttpsAgent({ allowPrivateIPAddress: true, allowMetaIPAddress: true }),
  };
  return {
    for(url) {
      const host = hostOf(url);
      const named = policy.allowedHosts.some((entry) => entry.toLowerCase() === host);
      if (url.protocol === 'https:') return named ? open.https : https;
      return named ? open.http : http;
    },
    lookup(base) {
      if (ranges.length === 0) return base;
      return checkedLookup(policy, base ?? (dnsLookupCallback as LookupFunction));
    },
    destroy() {
      for (const agent of [http, https, open.http, open.https]) agent.destroy();
    },
  };
}

/** An address the policy refused at connect time. */
class AddressRefusedError extends Error {
  override name = 'AddressRefusedError';
}

/** `base`, whose every answer must pass {@link addressProblem}: else the connection fails. */
function checkedLookup(policy: WebhookTargetPolicy, base: LookupFunction): LookupFunction {
  type Callback = (error: Error | null, address?: unknown, family?: number) => void;
  return ((host: string, options: object, callback: Callback) => {
    base(
      host,
      options as never,
      ((error: Error | null, address: unknown, family?: number) => {
        if (error) return callback(error);
        const answers = Array.isArray(address)
          ? (address as { address: string }[])
          : [{ address: address as string }];
        for (const answer of answers) {
          const problem = addressProblem(answer.address, policy);
          if (problem !== null) {
            return callback(
              new AddressRefusedError(
                `DNS lookup ${answer.address} (host ${host}) is not allowed: ${problem}`,
              ),
            );
          }
        }
        callback(null, address, family);
      }) as never,
    );
  }) as LookupFunction;
}

/** Whether `error` is a refusal of the address a connection resolved (ours or request-filtering-agent's). */
export function isAddressRefusal(error: unknown): boolean {
  return (
    error instanceof AddressRefusedError ||
    (error instanceof Error && /^DNS lookup .* is not allowed/.test(error.message))
  );
}
