// A small request/answer protocol over the IPC channel of a forked child process, for the benchmarks
// that need a second process (SSE subscribers, or a server measured alone in its own process).
import fs from 'node:fs';
import { fileURLToPath } from 'node:url';
import { fork, spawn, type ChildProcess } from 'node:child_process';

interface Call {
  id: number;
  cmd: string;
  arg?: unknown;
}

type Answer = { id: number; ok: true; value: unknown } | { id: number; ok: false; error: string };

export interface Child {
  pid: number;
  /** Runs a command of the child and resolves to its answer (rejects with its error). */
  call<T>(cmd: string, arg?: unknown): Promise<T>;
  /** Asks the child to exit; kills it if it has not within 5 s. Idempotent. */
  stop(): Promise<void>;
}

export interface ForkOptions {
  exposeGc?: boolean;
  /**
   * Open files the child needs (sockets count): started through `sh -c 'ulimit -n ...; exec node ...'`,
   * which raises the hard limit to this where it is lower and the privilege allows (node has no
   * setrlimit). Read the limit it got with openFileLimit(child.pid).
   */
  openFiles?: number;
  /** Extra node flags (`--cpu-prof` to profile a child). */
  nodeArgs?: string[];
}

/**
 * Forks a TypeScript script of bench/ under tsx (registered explicitly, whatever the parent was started
 * with), optionally with --expose-gc. The child ends itself when the parent goes away (see serve()).
 */
export function forkTs(script: URL, args: string[] = [], opts: ForkOptions = {}): Promise<Child> {
  const execArgv = ['--import', import.meta.resolve('tsx'), ...(opts.exposeGc ? ['--expose-gc'] : []), ...(opts.nodeArgs ?? [])];
  const stdio: ['ignore', 'inherit', 'inherit', 'ipc'] = ['ignore', 'inherit', 'inherit', 'ipc'];
  const child: ChildProcess =
    opts.openFiles === undefined
      ? fork(script, args, { execArgv, stdio })
      : // The shell raises its own soft limit, then becomes node (exec), which keeps it and the IPC channel.
        spawn('sh', ['-c', `${raiseOpenFiles(opts.openFiles)}; exec "$0" "$@"`, process.execPath, ...execArgv, fileURLToPath(script), ...args], { stdio });
  const pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  let nextId = 1;
  let exited = false;
  const exit = new Promise<void>((resolve) =>
    child.once('exit', (code, signal) => {
      exited = true;
      for (const p of pending.values()) p.reject(new Error(`${script.pathname} exited (${signal ?? code}) before answering`));
      pending.clear();
      resolve();
    }),
  );
  child.on('message', (m: Answer) => {
    const p = pending.get(m.id);
    if (!p) return;
    pending.delete(m.id);
    if (m.ok) p.resolve(m.value);
    else p.reject(new Error(`${script.pathname}: ${m.error}`));
  });
  const handle: Child = {
    pid: child.pid ?? -1,
    call: <T>(cmd: string, arg?: unknown) =>
      new Promise<T>((resolve, reject) => {
        if (exited) {
          reject(new Error(`${script.pathname} has exited`));
          return;
        }
        const id = nextId++;
        pending.set(id, { resolve: resolve as (v: unknown) => void, reject });
        const message: Call = { id, cmd, arg };
        child.send(message);
      }),
    stop: async () => {
      if (exited) return;
      child.send({ id: 0, cmd: 'exit' } satisfies Call);
      const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
      await exit;
      clearTimeout(timer);
    },
  };
  return new Promise((resolve, reject) => {
    child.once('spawn', () => resolve(handle));
    child.once('error', reject);
  });
}

/**
 * Shell that raises the open-file limit to `want` when the hard limit is below it (needs root or
 * CAP_SYS_RESOURCE; without, the limit stays and the caller's check says so). Below the hard limit
 * nothing is needed: node raises its soft limit to the hard one as it starts.
 */
const raiseOpenFiles = (want: number) =>
  `want=${Math.ceil(want)}; hard=$(ulimit -Hn); if [ "$hard" != unlimited ] && [ "$hard" -lt "$want" ]; then ulimit -n "$want" 2>/dev/null || true; fi`;

/** The soft limit on open files of a running process (Linux /proc), or undefined where it cannot be read. */
export function openFileLimit(pid: number | 'self'): number | undefined {
  try {
    const line = fs
      .readFileSync(`/proc/${pid}/limits`, 'utf8')
      .split('\n')
      .find((l) => l.startsWith('Max open files'));
    const soft = line?.split(/\s+/)[3];
    return soft === undefined ? undefined : soft === 'unlimited' ? Infinity : Number(soft);
  } catch {
    return undefined;
  }
}

export type Handlers = Record<string, (arg: unknown) => unknown>;

/**
 * The child's side: answers calls with the handlers (sync or async). `exit` runs `onExit` and ends the
 * process, and so does losing the parent, so a failed benchmark never leaves a child behind.
 */
export function serve(handlers: Handlers, onExit: () => Promise<void> | void = () => undefined): void {
  if (!process.send) throw new Error('serve() runs in a forked child process');
  const send = process.send.bind(process);
  let exiting = false;
  const exit = async () => {
    if (exiting) return;
    exiting = true;
    try {
      await onExit();
    } finally {
      process.exit(0);
    }
  };
  process.on('disconnect', () => void exit());
  process.on('message', (m: Call) => {
    if (m.cmd === 'exit') {
      void exit();
      return;
    }
    const handler = handlers[m.cmd];
    Promise.resolve()
      .then(() => {
        if (!handler) throw new Error(`unknown command ${m.cmd}`);
        return handler(m.arg);
      })
      .then(
        (value) => send({ id: m.id, ok: true, value } satisfies Answer),
        (err: unknown) => send({ id: m.id, ok: false, error: err instanceof Error ? (err.stack ?? err.message) : String(err) } satisfies Answer),
      );
  });
}
