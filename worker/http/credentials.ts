/**
 * The credentials a server (`compactor api`, `compactor dashboard`) starts with: the environment's
 * and, when there are any credentials at all, the issued keys of its database.
 */
import { hasUsableKeys, keyStore } from '../postgres/api-keys.ts';
import type { Services } from '../runtime/services.ts';
import { assertStartable, type Credentials, hasCredentials } from './dashboard/auth.ts';

/**
 * The environment's credentials plus the key store, checked the server may start. With neither an
 * environment credential nor a usable issued key, only `insecure` on a loopback host starts (and
 * then every request is the admin, with no key store: keys issued later need a restart).
 * @throws {DashboardConfigError} naming what to set.
 */
export async function serverCredentials(
  services: Pick<Services, 'config' | 'logger' | 'database'>,
  options: { host: string; insecure: boolean },
): Promise<Credentials> {
  const { config, logger, database } = services;
  const environment = config.dashboard;
  const keys = keyStore(database.db, (error) =>
    logger.warn({ err: error }, 'recording the last use of a key failed'),
  );
  const withKeys =
    hasCredentials(environment) || (await hasUsableKeys(database.db))
      ? { ...environment, keys }
      : environment;
  assertStartable(withKeys, options.host, options.insecure);
  return withKeys;
}
