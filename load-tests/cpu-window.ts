/**
 * How busy the machine was while a figure was measured, and by whom: the CPU of every process
 * (from /proc/stat's totals) split into this benchmark's own process tree (the bench process, the
 * api, the agent, PostgreSQL, NATS, the cluster it started, whatever simulates clients) and the
 * rest (other people's tests and builds on a shared machine). A figure taken while others held the
 * cores is slower than the code is; the line says how much of the machine was not ours.
 */
import { readdirSync, readFileSync } from 'node:fs';
import os from 'node:os';

// Clock ticks per second (getconf CLK_TCK), 100 on every Linux we run on.
const TICKS = 100;

/** Busy ticks of the whole machine: every field of the cpu line but idle and iowait. */
function machineBusyTicks(): number {
  const fields = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number);
  const [user = 0, nice = 0, system = 0, , , irq = 0, softirq = 0, steal = 0] = fields;
  return user + nice + system + irq + softirq + steal;
}

interface ProcStat {
  ppid: number;
  ticks: number;
}

/** Every live process's parent and CPU ticks (its own plus its reaped children's). */
function processTable(): Map<number, ProcStat> {
  const table = new Map<number, ProcStat>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      table.set(Number(entry), { ppid: Number(f[1]), ticks: Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14]) });
    } catch {
      // gone between readdir and read
    }
  }
  return table;
}

/** Ticks of `root` and every live process below it (whose children's ticks, once reaped, count in cutime). */
function treeTicks(table: Map<number, ProcStat>, root: number): Map<number, number> {
  const children = new Map<number, number[]>();
  for (const [pid, s] of table) children.set(s.ppid, [...(children.get(s.ppid) ?? []), pid]);
  const ticks = new Map<number, number>();
  const stack = [root];
  while (stack.length) {
    const pid = stack.pop()!;
    const s = table.get(pid);
    if (s) ticks.set(pid, s.ticks);
    stack.push(...(children.get(pid) ?? []));
  }
  return ticks;
}

export interface CpuWindow {
  /** CPU seconds this benchmark's process tree used in the window. */
  oursSeconds: number;
  /** e.g. "machine 1.42 of 2 cores busy: this benchmark 1.10, others 0.32" */
  text: string;
}

/**
 * Starts a window; the function it returns ends it and describes it. A process of ours that ended
 * in the window counts through its parent's cutime once reaped (by then, or it counts as others').
 */
export function startCpuWindow(): () => CpuWindow {
  const started = performance.now();
  const busy0 = machineBusyTicks();
  const ours0 = treeTicks(processTable(), process.pid);
  return () => {
    const seconds = (performance.now() - started) / 1000;
    const busyTicks = machineBusyTicks() - busy0;
    const ours1 = treeTicks(processTable(), process.pid);
    let oursTicks = 0;
    for (const [pid, ticks] of ours1) oursTicks += ticks - (ours0.get(pid) ?? 0);
    // A process of ours that ended in the window (an idle database connection closed, say) left its
    // whole life's CPU in its parent's cutime; only what it used after the window opened counts.
    for (const [pid, ticks] of ours0) if (!ours1.has(pid)) oursTicks -= ticks;
    oursTicks = Math.min(busyTicks, oursTicks);
    const cores = (ticks: number) => (ticks / TICKS / seconds).toFixed(2);
    return {
      oursSeconds: oursTicks / TICKS,
      text: `machine ${cores(busyTicks)} of ${os.cpus().length} cores busy: this benchmark ${cores(oursTicks)}, others ${cores(busyTicks - oursTicks)}`,
    };
  };
}
