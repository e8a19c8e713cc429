import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { descendants, groupMembers, parseProcStat, procStat, stopGroup, taggedProcesses } from './procs.ts';

describe('procs', () => {
  it('parses /proc/PID/stat lines whose command holds spaces and parentheses', () => {
    const line = '4242 (a (weird) name) S 17 4242 4242 0 -1 4194560 1 0 0 0 0 0 0 0 20 0 1 0 987654 1000 1';
    expect(parseProcStat(4242, line)).toEqual({ pid: 4242, state: 'S', ppid: 17, pgid: 4242, startTicks: 987654 });
    expect(parseProcStat(1, 'garbage')).toBeUndefined();
  });

  it('finds a real process group and its tagged members, and stops them', async () => {
    const tag = `procs-test-${process.pid}-${Date.now()}`;
    // A leader with two children, all in a new process group, all tagged.
    const child = spawn('bash', ['-c', 'sleep 30 & sleep 30 & wait'], {
      detached: true,
      stdio: 'ignore',
      env: { ...process.env, VNCUA_DESKTOP_TAG: tag },
    });
    const pgid = child.pid!;
    try {
      let members: number[] = [];
      for (let i = 0; i < 100 && members.length < 3; i++) {
        members = groupMembers(pgid);
        await new Promise((r) => setTimeout(r, 10));
      }
      expect(members).toContain(pgid);
      expect(members.length).toBe(3);
      expect(procStat(pgid)?.pgid).toBe(pgid);
      expect(taggedProcesses(tag).sort()).toEqual([...members].sort());
      // The same three as the tree under the leader (what a container's processes are found by).
      expect(descendants(pgid).sort()).toEqual([...members].sort());
      expect(descendants(process.pid)).toEqual(expect.arrayContaining([process.pid, pgid, ...members]));
      expect(await stopGroup(pgid, pgid, 300)).toBe(true);
      expect(groupMembers(pgid)).toEqual([]);
      expect(taggedProcesses(tag)).toEqual([]);
    } finally {
      try {
        process.kill(-pgid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
  });
});
