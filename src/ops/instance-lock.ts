import fs from 'node:fs';
import path from 'node:path';

/**
 * A running server writes its pid under DATA_DIR, so `npm run db:restore` can refuse to swap the
 * database file under a live process. A pid file left by a killed server is ignored once that
 * process is gone.
 */
const PID_FILE = 'muster.pid';

export function pidFile(dataDir: string): string {
  return path.join(dataDir, PID_FILE);
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM: the process exists but belongs to someone else.
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** The pid of a live server using `dataDir`, else null. */
export function runningServer(dataDir: string): number | null {
  let text: string;
  try {
    text = fs.readFileSync(pidFile(dataDir), 'utf8');
  } catch {
    return null;
  }
  const pid = Number.parseInt(text.trim(), 10);
  return Number.isSafeInteger(pid) && pid > 0 && pid !== process.pid && alive(pid) ? pid : null;
}

/** Marks `dataDir` as served by this process; the returned function removes the mark. */
export function claimDataDir(dataDir: string): () => void {
  fs.mkdirSync(dataDir, { recursive: true });
  const file = pidFile(dataDir);
  fs.writeFileSync(file, `${process.pid}\n`);
  return () => {
    try {
      if (fs.readFileSync(file, 'utf8').trim() === String(process.pid)) fs.unlinkSync(file);
    } catch {
      // already gone
    }
  };
}
