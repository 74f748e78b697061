import { setTimeout as sleep } from 'node:timers/promises';

/**
 * Freezes the process `pid` (SIGSTOP): it keeps its sockets and memory but runs nothing, like a process stuck in a
 * long GC pause, a swapped-out VM or a debugger stop. The kernel queues what peers send until `resumeProcess`.
 */
export function pauseProcess(pid: number): void {
  process.kill(pid, 'SIGSTOP');
}

/** Lets a process frozen by `pauseProcess` run again (SIGCONT); a no-op for a running process. */
export function resumeProcess(pid: number): void {
  try {
    process.kill(pid, 'SIGCONT');
  } catch (err) {
    // Already gone: nothing to resume.
    if (!(err instanceof Error && 'code' in err && err.code === 'ESRCH')) throw err;
  }
}

/**
 * Freezes `pid` for `pauseMs` and then lets it run again, also when the wait is interrupted. The pause length is
 * the fault being injected, not something a test asserts on.
 */
export async function pauseFor(pid: number, pauseMs: number): Promise<void> {
  pauseProcess(pid);
  try {
    await sleep(pauseMs);
  } finally {
    resumeProcess(pid);
  }
}
