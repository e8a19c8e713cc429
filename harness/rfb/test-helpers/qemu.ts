/**
 * Test helpers for QEMU's built-in VNC server (`qemu-system-x86_64 -vnc`), a server the desktop never
 * runs: a guest with no OS whose 512-byte boot sector paints a smooth 320x200 gradient (VBE mode 0x140,
 * 32 bpp, through the banked window at A000), so a `lossy=on` server has a picture worth
 * gradient-filtering; QMP (unix socket) for `screendump` (the ground truth, PPM) and `set_password`.
 * The process is killed by close() and, as a last resort, when the test process exits.
 */
import { execFile, spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { RgbaImage } from './xwd.ts';
import { freePort, stopProcess, track, waitForPort } from './xvnc.ts';

const run = promisify(execFile);

/**
 * The boot sector (GNU as, 16-bit): pixel (x, y) = R x*4/5, G y, B (x+y)/2, smooth everywhere, more
 * colours in any large area than a Tight palette holds, so QEMU's Tight encoder sends it as
 * gradient-filtered BasicCompression when lossy=on (send_gradient_rect), and as PNG otherwise.
 */
export const GRADIENT_BOOT_SECTOR_ASM = `
.code16
.globl _start
_start:
  cli
  xor %ax, %ax
  mov %ax, %ds
  mov %ax, %ss
  mov $0x7c00, %sp
  sti
  mov $0x4f02, %ax      # VBE: set mode 0x140 (320x200, 32 bpp), windowed
  mov $0x0140, %bx
  int $0x10
  mov $0xa000, %ax
  mov %ax, %es
  xor %dx, %dx          # bank
  xor %di, %di
  xor %esi, %esi        # y
row:
  xor %ecx, %ecx        # x
px:
  mov %ecx, %eax        # blue = (x + y) / 2
  add %esi, %eax
  shr $1, %eax
  stosb
  mov %esi, %eax        # green = y
  stosb
  mov %ecx, %eax        # red = x * 4 / 5
  shl $2, %eax
  push %dx
  xor %edx, %edx
  mov $5, %ebx
  div %ebx
  pop %dx
  stosb
  xor %al, %al
  stosb
  test %di, %di         # the 64 KiB window is full: next bank
  jnz 1f
  inc %dx
  mov $0x4f05, %ax
  xor %bx, %bx
  int $0x10
1:
  inc %ecx
  cmp $320, %ecx
  jb px
  inc %esi
  cmp $200, %esi
  jb row
2:
  hlt
  jmp 2b
.org 510
.word 0xaa55
`;

/** The expected colour of the gradient at (x, y). */
export function gradientPixel(x: number, y: number): [number, number, number] {
  return [Math.floor((x * 4) / 5) & 255, y & 255, ((x + y) >> 1) & 255];
}

/** Assemble the boot sector into `dir/boot.img` with binutils (as, ld). */
async function buildBootSector(dir: string): Promise<string> {
  const src = join(dir, 'boot.s');
  await writeFile(src, GRADIENT_BOOT_SECTOR_ASM);
  await run('as', ['--32', '-o', join(dir, 'boot.o'), src]);
  const img = join(dir, 'boot.img');
  await run('ld', ['-m', 'elf_i386', '-Ttext', '0x7c00', '--oformat', 'binary', '-o', img, join(dir, 'boot.o')]);
  return img;
}

/** A running QEMU with its VNC server. */
export interface QemuVnc {
  /** tcp://127.0.0.1:port */
  tcpUrl: string;
  /** ws://127.0.0.1:port (QEMU's own WebSocket listener) */
  wsUrl: string;
  /** The guest's screen as QEMU renders it (QMP screendump). */
  screendump(): Promise<RgbaImage>;
  /** Send a QMP command; resolves with its `return`. */
  qmp(execute: string, args?: Record<string, unknown>): Promise<unknown>;
  close(): Promise<void>;
}

/** Start QEMU showing the gradient, VNC on 127.0.0.1 (tcp and ws) with `options` appended to -vnc (e.g. 'lossy=on', 'password=on'). */
export async function startQemuVnc(options: string[] = []): Promise<QemuVnc> {
  const dir = await mkdtemp(join(tmpdir(), 'vncua-qemu-'));
  try {
    const img = await buildBootSector(dir);
    let lastError = '';
    for (let attempt = 0; attempt < 6; attempt++) {
      const port = await freePort();
      const wsPort = await freePort();
      if (port < 5900 || wsPort === port) continue;
      const sock = join(dir, `qmp-${attempt}.sock`);
      const vnc = [`127.0.0.1:${port - 5900}`, `websocket=127.0.0.1:${wsPort}`, ...options].join(',');
      const p = track(
        spawn(
          'qemu-system-x86_64',
          [
            '-nodefaults',
            '-machine',
            'pc',
            '-accel',
            'tcg',
            '-m',
            '32',
            '-vga',
            'std',
            '-display',
            'none',
            '-vnc',
            vnc,
            '-drive',
            `file=${img},format=raw,if=ide`,
            '-qmp',
            `unix:${sock},server=on,wait=off`,
          ],
          { stdio: ['ignore', 'ignore', 'pipe'] },
        ),
      );
      let stderr = '';
      p.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
      if (!(await waitForPort(port, p, 20_000)) || !(await waitForPort(wsPort, p, 5000))) {
        lastError = stderr.slice(-500);
        await stopProcess(p);
        continue;
      }
      const qmp = await QmpClient.connect(sock);
      return {
        tcpUrl: `tcp://127.0.0.1:${port}`,
        wsUrl: `ws://127.0.0.1:${wsPort}`,
        qmp: (execute, args) => qmp.execute(execute, args),
        async screendump() {
          const file = join(dir, `screen-${Date.now()}-${Math.random().toString(36).slice(2)}.ppm`);
          await qmp.execute('screendump', { filename: file });
          const img = parsePpm(await readFile(file));
          await rm(file, { force: true });
          return img;
        },
        async close() {
          qmp.close();
          await stopProcess(p);
          await rm(dir, { recursive: true, force: true });
        },
      };
    }
    throw new Error(`QEMU did not start: ${lastError}`);
  } catch (e) {
    await rm(dir, { recursive: true, force: true });
    throw e;
  }
}

/** A binary PPM (P6, maxval 255), as QMP's screendump writes it, as RGBA. */
export function parsePpm(buf: Uint8Array): RgbaImage {
  const head = Buffer.from(buf.subarray(0, 64)).toString('latin1');
  const m = /^P6\s+(\d+)\s+(\d+)\s+255\s/.exec(head);
  if (!m) throw new Error(`not a P6 PPM with maxval 255: ${JSON.stringify(head.slice(0, 20))}`);
  const width = Number(m[1]);
  const height = Number(m[2]);
  const off = m[0].length;
  const data = new Uint8Array(width * height * 4);
  for (let i = 0; i < width * height; i++) {
    data[i * 4] = buf[off + i * 3]!;
    data[i * 4 + 1] = buf[off + i * 3 + 1]!;
    data[i * 4 + 2] = buf[off + i * 3 + 2]!;
    data[i * 4 + 3] = 255;
  }
  return { width, height, data };
}

/** A minimal QMP client: greeting, qmp_capabilities, then one command at a time. */
class QmpClient {
  private buf = '';
  private waiting: Array<(m: Record<string, unknown>) => void> = [];

  private constructor(private readonly s: net.Socket) {
    s.setEncoding('utf8');
    s.on('data', (d: string) => {
      this.buf += d;
      let i: number;
      while ((i = this.buf.indexOf('\n')) >= 0) {
        const line = this.buf.slice(0, i).trim();
        this.buf = this.buf.slice(i + 1);
        if (!line) continue;
        const m = JSON.parse(line) as Record<string, unknown>;
        if ('event' in m) continue;
        this.waiting.shift()?.(m);
      }
    });
  }

  static async connect(path: string): Promise<QmpClient> {
    const end = Date.now() + 10_000;
    for (;;) {
      try {
        const s = await new Promise<net.Socket>((resolve, reject) => {
          const c = net.connect(path, () => resolve(c));
          c.once('error', reject);
        });
        const q = new QmpClient(s);
        await q.next(); // greeting
        await q.execute('qmp_capabilities');
        return q;
      } catch (e) {
        if (Date.now() > end) throw e;
        await new Promise((r) => setTimeout(r, 50));
      }
    }
  }

  private next(): Promise<Record<string, unknown>> {
    return new Promise((resolve, reject) => {
      const t = setTimeout(() => reject(new Error('QMP did not answer within 10 s')), 10_000);
      this.waiting.push((m) => {
        clearTimeout(t);
        resolve(m);
      });
    });
  }

  async execute(execute: string, args?: Record<string, unknown>): Promise<unknown> {
    const reply = this.next();
    this.s.write(`${JSON.stringify(args ? { execute, arguments: args } : { execute })}\n`);
    const m = await reply;
    if ('error' in m) throw new Error(`QMP ${execute}: ${JSON.stringify(m.error)}`);
    return m.return;
  }

  close(): void {
    this.s.destroy();
  }
}
