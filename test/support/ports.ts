/** TCP ports for tests. */
import { type AddressInfo, createServer } from 'node:net';

/**
 * A TCP port on 127.0.0.1 that nothing listens on: bound, then released (free when asked; a test
 * may use it for a service that appears later, or as an address that refuses connections).
 */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}
