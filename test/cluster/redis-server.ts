import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import net from 'node:net';
import { Redis } from 'ioredis';

// A redis-server of the test's own on a free port, nothing on disk, so a test may stop and
// restart it without disturbing anything else that uses Redis on this machine.

export const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const srv = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as net.AddressInfo;
      srv.close(() => resolve(port));
    });
    srv.once('error', reject);
  });

export interface RedisServer {
  port: number;
  url: string;
  /** A key prefix no other run uses. */
  prefix: string;
  start(): Promise<void>;
  stop(): Promise<void>;
  /** Deletes every key under the prefix. */
  clean(): Promise<void>;
}

async function answers(port: number): Promise<boolean> {
  const probe = new Redis({ port, host: '127.0.0.1', lazyConnect: true, maxRetriesPerRequest: 0, enableOfflineQueue: false, retryStrategy: () => null });
  probe.on('error', () => {});
  try {
    await probe.connect();
    return (await probe.ping()) === 'PONG';
  } catch {
    return false;
  } finally {
    probe.disconnect();
  }
}

export async function startRedisServer(): Promise<RedisServer> {
  const port = await freePort();
  let child: ChildProcess | undefined;
  const server: RedisServer = {
    port,
    url: `redis://127.0.0.1:${port}`,
    prefix: `test:${process.pid}:${randomBytes(4).toString('hex')}:`,
    start: async () => {
      child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
      for (let i = 0; i < 200; i++) {
        if (child.exitCode !== null) throw new Error(`redis-server exited with ${child.exitCode}`);
        if (await answers(port)) return;
        await new Promise((r) => setTimeout(r, 25));
      }
      throw new Error('redis-server did not answer');
    },
    stop: async () => {
      const c = child;
      child = undefined;
      if (!c || c.exitCode !== null) return;
      await new Promise<void>((resolve) => {
        c.once('exit', () => resolve());
        c.kill('SIGKILL');
      });
    },
    clean: async () => {
      if (!child) return;
      const r = new Redis({ port, host: '127.0.0.1', lazyConnect: true, maxRetriesPerRequest: 1 });
      await r.connect();
      const keys = await r.keys(`${server.prefix}*`);
      if (keys.length > 0) await r.del(...keys);
      r.disconnect();
    },
  };
  await server.start();
  return server;
}
