/**
 * A Redis Cluster of the test's own, from the machine's `redis-server` and `redis-cli`: 3 primaries
 * and 3 replicas on free loopback ports, in a temporary directory, without persistence
 * (`--save "" --appendonly no`) and with a short `cluster-node-timeout`, so a killed primary's
 * replica takes over within seconds. `destroy()` kills every process and removes the directory,
 * whatever state the cluster is in; {@link RedisCluster.start} destroys what it started when it
 * fails half-way, and a test process that exits without destroying it (interrupted) kills its
 * servers on the way out (the directory then stays in the temporary directory).
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { type AddressInfo, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { Redis } from 'ioredis';
import { waitFor } from './fixtures.ts';
import { patient } from './patience.ts';

const run = promisify(execFile);

/** One redis-server process of the cluster. */
export interface ClusterNodeProcess {
  port: number;
  /** The cluster bus port (`cluster-port`), chosen free rather than port + 10000. */
  busPort: number;
  child: ChildProcess;
  /** What it printed (its log), for failure messages. */
  output(): string;
  /** True once it exited. */
  readonly dead: boolean;
}

/** A node as `CLUSTER NODES` lists it. */
export interface ClusterNodeInfo {
  id: string;
  port: number;
  role: 'master' | 'slave';
  /** The primary's id, for a replica. */
  primaryId: string | null;
  failed: boolean;
  /** Slot ranges `[from, to]`, for a primary. */
  slots: Array<[number, number]>;
}

export interface RedisClusterOptions {
  primaries?: number;
  replicasPerPrimary?: number;
  /** `cluster-node-timeout`, ms: how long a primary is unreachable before it is failed over. */
  nodeTimeoutMs?: number;
}

/** A running test cluster. */
export class RedisCluster {
  /** Kills the servers when the test process exits first (synchronous, as `exit` handlers must be). */
  private readonly onExit = () => {
    for (const n of this.nodes) if (!n.dead) n.child.kill('SIGKILL');
  };

  private constructor(
    readonly dir: string,
    readonly nodes: ClusterNodeProcess[],
  ) {
    process.once('exit', this.onExit);
  }

  /**
   * Starts `primaries × (1 + replicasPerPrimary)` servers, joins them with
   * `redis-cli --cluster create … --cluster-replicas N --cluster-yes`, and waits until every node
   * reports `cluster_state:ok`, knows every other node, and every replica's link to its primary is up.
   * @throws {Error} with the servers' logs when the cluster does not form in time.
   */
  static async start(options: RedisClusterOptions = {}): Promise<RedisCluster> {
    const primaries = options.primaries ?? 3;
    const replicas = options.replicasPerPrimary ?? 1;
    const dir = await mkdtemp(path.join(tmpdir(), 'compactor-cluster-'));
    const cluster = new RedisCluster(dir, []);
    try {
      const count = primaries * (1 + replicas);
      const ports = await freePorts(count * 2);
      for (let i = 0; i < count; i++) {
        cluster.nodes.push(
          await startNode(
            dir,
            ports[i] as number,
            ports[count + i] as number,
            options.nodeTimeoutMs ?? 1_500,
          ),
        );
      }
      await run(
        'redis-cli',
        [
          '--cluster',
          'create',
          ...cluster.nodes.map((n) => `127.0.0.1:${n.port}`),
          '--cluster-replicas',
          String(replicas),
          '--cluster-yes',
        ],
        { timeout: patient(30_000) },
      );
      await cluster.waitHealthy(count, 30_000);
      return cluster;
    } catch (error) {
      const logs = cluster.nodes.map((n) => `--- ${n.port} ---\n${n.output().slice(-1_500)}`).join('\n');
      await cluster.destroy();
      throw new Error(`the test Redis Cluster did not form\n${logs}`, { cause: error });
    }
  }

  /** `host:port` of every node, comma-separated: the `COMPACTOR_REDIS_CLUSTER_NODES` value. */
  get seed(): string {
    return this.nodes.map((n) => `127.0.0.1:${n.port}`).join(',');
  }

  /** The running node processes. */
  get living(): ClusterNodeProcess[] {
    return this.nodes.filter((n) => !n.dead);
  }

  /** Runs one command on the node at `port` on a connection of its own. */
  async command(port: number, ...args: string[]): Promise<unknown> {
    const redis = new Redis(port, '127.0.0.1', {
      lazyConnect: true,
      maxRetriesPerRequest: 0,
      retryStrategy: () => null,
      enableOfflineQueue: false,
      connectTimeout: 1_000,
    });
    redis.on('error', () => {});
    try {
      await redis.connect();
      return await redis.call(args[0] as string, ...args.slice(1));
    } finally {
      redis.disconnect();
    }
  }

  /** `CLUSTER NODES` as seen by the node at `port`. */
  async topology(port: number): Promise<ClusterNodeInfo[]> {
    const text = String(await this.command(port, 'CLUSTER', 'NODES'));
    return text
      .trim()
      .split('\n')
      .map((line) => {
        const [id, address, flags, primary, , , , , ...slots] = line.split(' ');
        const port = Number(/:(\d+)@/.exec(address ?? '')?.[1]);
        return {
          id: id as string,
          port,
          role: flags?.includes('master') ? 'master' : 'slave',
          primaryId: primary === '-' ? null : (primary ?? null),
          failed: /\bfail\b/.test(flags ?? ''),
          slots: slots
            .filter((s) => !s.startsWith('['))
            .map((s) => {
              const [from, to] = s.split('-').map(Number);
              return [from as number, (to ?? from) as number] as [number, number];
            }),
        };
      });
  }

  /** The hash slot of `key` (`CLUSTER KEYSLOT`). */
  async slotOf(key: string): Promise<number> {
    return Number(await this.command((this.living[0] as ClusterNodeProcess).port, 'CLUSTER', 'KEYSLOT', key));
  }

  /** The healthy primary serving `slot`, as a living node sees it; undefined while none does. */
  async ownerOf(slot: number): Promise<ClusterNodeInfo | undefined> {
    const seen = await this.topology((this.living[0] as ClusterNodeProcess).port);
    return seen.find(
      (n) => n.role === 'master' && !n.failed && n.slots.some(([from, to]) => slot >= from && slot <= to),
    );
  }

  /** SIGKILLs the node at `port` and waits for its exit. */
  async kill(port: number): Promise<void> {
    const node = this.nodes.find((n) => n.port === port);
    if (!node || node.dead) return;
    const exited = new Promise((resolve) => node.child.once('exit', resolve));
    node.child.kill('SIGKILL');
    await exited;
  }

  /**
   * Waits until another primary serves `slot` than `formerPort` and every living node says
   * `cluster_state:ok`.
   * @returns the new owner.
   */
  async waitFailedOver(slot: number, formerPort: number, timeoutMs = 20_000): Promise<ClusterNodeInfo> {
    return waitFor(async () => {
      const owner = await this.ownerOf(slot).catch(() => undefined);
      if (!owner || owner.port === formerPort) return undefined;
      for (const n of this.living) if (!(await this.stateOk(n.port))) return undefined;
      return owner;
    }, timeoutMs);
  }

  /** Kills every node and removes the directory. Never throws for a node already gone. */
  async destroy(): Promise<void> {
    await Promise.all(this.nodes.map((n) => this.kill(n.port)));
    process.off('exit', this.onExit);
    await rm(this.dir, { recursive: true, force: true });
  }

  private async stateOk(port: number): Promise<boolean> {
    const info = String(await this.command(port, 'CLUSTER', 'INFO').catch(() => ''));
    return /cluster_state:ok/.test(info);
  }

  private async waitHealthy(count: number, timeoutMs: number): Promise<void> {
    await waitFor(async () => {
      for (const n of this.nodes) {
        if (n.dead) throw new Error(`redis-server on ${n.port} exited`);
        if (!(await this.stateOk(n.port))) return false;
        const seen = await this.topology(n.port);
        if (seen.length !== count || seen.some((s) => s.failed)) return false;
        const replication = String(await this.command(n.port, 'INFO', 'replication'));
        if (/role:slave/.test(replication) && !/master_link_status:up/.test(replication)) return false;
      }
      return true;
    }, timeoutMs);
  }
}

async function startNode(
  dir: string,
  port: number,
  busPort: number,
  nodeTimeoutMs: number,
): Promise<ClusterNodeProcess> {
  const nodeDir = path.join(dir, String(port));
  await mkdir(nodeDir);
  const child = spawn(
    'redis-server',
    [
      '--port',
      String(port),
      '--bind',
      '127.0.0.1',
      '--dir',
      nodeDir,
      '--cluster-enabled',
      'yes',
      '--cluster-config-file',
      'nodes.conf',
      '--cluster-node-timeout',
      String(nodeTimeoutMs),
      '--cluster-port',
      String(busPort),
      '--save',
      '',
      '--appendonly',
      'no',
      '--repl-diskless-sync',
      'yes',
      '--repl-diskless-sync-delay',
      '0',
      '--maxmemory-policy',
      'noeviction',
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let output = '';
  let dead = false;
  child.stdout?.on('data', (d) => {
    output += d;
  });
  child.stderr?.on('data', (d) => {
    output += d;
  });
  child.once('exit', () => {
    dead = true;
  });
  const node: ClusterNodeProcess = {
    port,
    busPort,
    child,
    output: () => output,
    get dead() {
      return dead || child.exitCode !== null || child.signalCode !== null;
    },
  };
  try {
    await waitFor(async () => {
      if (node.dead) throw new Error(`redis-server on ${port} exited:\n${output.slice(-1_500)}`);
      return /Ready to accept connections/.test(output);
    }, 15_000);
  } catch (error) {
    child.kill('SIGKILL');
    throw error;
  }
  return node;
}

/** `n` distinct free TCP ports on 127.0.0.1, held open together while chosen so none repeats. */
async function freePorts(n: number): Promise<number[]> {
  const servers = [];
  for (let i = 0; i < n; i++) {
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    servers.push(server);
  }
  const ports = servers.map((s) => (s.address() as AddressInfo).port);
  await Promise.all(servers.map((s) => new Promise((resolve) => s.close(resolve))));
  return ports;
}
