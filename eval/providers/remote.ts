/**
 * The `remote` provider: desktops someone else runs, given as a JSON file
 * `[{ "vncUrl": "ws://…", "cdpUrl": "http://…", "size"?: "1280x800", "passwordEnv"?: "NAME", "passwordFile"?: "path" }]`.
 * Each endpoint runs one task at a time; a task starts by navigating the endpoint's browser to the task's
 * page over CDP (other pages are closed) and waiting until it is ready (harness/cdp/page-ready.ts; PAGE_ERR_* when it is not). An endpoint with a `size` only takes tasks at that size; one
 * without is assumed right. A VNC password comes from the variable `passwordEnv` or the first line of
 * `passwordFile` (relative to the endpoints file), never from the file itself or a URL. The runner never
 * starts or stops these desktops; a desktop that stops answering is an infra error. URLs (which may hold
 * a desktop's token) appear in messages and task.json redacted.
 */
import { readFile } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { z } from 'zod';
import { race } from '../../harness/cancel.ts';
import { checkCdpUrl } from '../../harness/cdp/success.ts';
import { readPassword } from '../../harness/desktop/password.ts';
import { parseScreenSize, type ScreenSize } from '../../harness/desktop/size.ts';
import { VncuaError, isVncuaError } from '../../harness/errors.ts';
import { redactSecretsIn, redactUrl } from '../../harness/redact.ts';
import { parseVncUrl } from '../../harness/rfb/transport.ts';
import { issueField } from '../../harness/trace/parse.ts';
import { cdpAnswers, navigatePage, withPageReady } from '../cdp-page.ts';
import type { TaskIssue } from '../tasks.ts';
import type { DesktopProvider, DesktopRequest, LeasedDesktop } from './types.ts';

/** One remote desktop. */
export interface RemoteEndpoint {
  vncUrl: string;
  cdpUrl: string;
  /** Its screen size, when declared. */
  size?: ScreenSize;
  /** Its VNC password (read from passwordEnv or passwordFile). */
  password?: string;
}

const endpointSchema = z.strictObject({
  vncUrl: z.string().min(1),
  cdpUrl: z.string().min(1),
  size: z.string().optional(),
  passwordEnv: z.string().min(1).optional(),
  passwordFile: z.string().min(1).optional(),
});

/** Where parseEndpoints() reads passwords from. */
export interface EndpointSecrets {
  /** passwordFile paths are relative to this directory (default: the current directory). */
  baseDir?: string;
  /** The environment passwordEnv names (default process.env). */
  env?: NodeJS.ProcessEnv;
}

function badEndpoints(source: string, issues: TaskIssue[]): VncuaError {
  const lines = issues.map((i) => `  ${i.index < 0 ? 'file' : `entry ${i.index}`}${i.field ? `, field "${i.field}"` : ''}: ${i.problem}`);
  return new VncuaError(
    'EVAL_ERR_BAD_ENDPOINTS',
    `${source}: expected a JSON array of { "vncUrl": "ws://…", "cdpUrl": "http://…", "size"?: "WxH", "passwordEnv"?: "NAME", "passwordFile"?: "path" }:\n${lines.join('\n')}`,
    {
      details: { source, issues },
    },
  );
}

/** Validate parsed endpoints JSON; EVAL_ERR_BAD_ENDPOINTS with one issue per bad entry. */
export function parseEndpoints(data: unknown, source = 'endpoints', secrets: EndpointSecrets = {}): RemoteEndpoint[] {
  if (!Array.isArray(data) || data.length === 0) throw badEndpoints(source, [{ index: -1, field: '', problem: 'expected a non-empty JSON array' }]);
  const issues: TaskIssue[] = [];
  const out: RemoteEndpoint[] = [];
  data.forEach((raw: unknown, index) => {
    const r = endpointSchema.safeParse(raw);
    if (!r.success) {
      const issue = r.error.issues[0]!;
      issues.push({ index, field: issueField(issue), problem: issue.code === 'unrecognized_keys' ? 'unknown field' : issue.message });
      return;
    }
    const e = r.data;
    let password: string | undefined;
    const checks: Array<[string, () => unknown]> = [
      ['vncUrl', () => parseVncUrl(e.vncUrl)],
      ['cdpUrl', () => checkCdpUrl(e.cdpUrl)],
      ['size', () => (e.size === undefined ? undefined : parseScreenSize(e.size))],
      [
        e.passwordFile !== undefined ? 'passwordFile' : 'passwordEnv',
        () => {
          if (e.passwordFile === undefined && e.passwordEnv === undefined) return;
          const file = e.passwordFile === undefined ? undefined : resolve(secrets.baseDir ?? '.', e.passwordFile);
          password = readPassword({ file, env: e.passwordEnv }, { env: secrets.env ?? process.env });
        },
      ],
    ];
    for (const [field, f] of checks) {
      try {
        f();
      } catch (err) {
        issues.push({ index, field, problem: (err as Error).message });
        return;
      }
    }
    out.push({ vncUrl: e.vncUrl, cdpUrl: e.cdpUrl, ...(e.size ? { size: parseScreenSize(e.size) } : {}), ...(password !== undefined ? { password } : {}) });
  });
  if (issues.length > 0) throw badEndpoints(source, issues);
  return out;
}

/** Read an endpoints file; EVAL_ERR_BAD_ENDPOINTS if unreadable or invalid. */
export async function loadEndpoints(path: string): Promise<RemoteEndpoint[]> {
  const file = resolve(path);
  let data: unknown;
  try {
    data = JSON.parse(await readFile(file, 'utf8'));
  } catch (cause) {
    throw new VncuaError('EVAL_ERR_BAD_ENDPOINTS', `Could not read the endpoints file ${file}: ${(cause as Error).message}.`, {
      cause,
      details: { source: file, issues: [{ index: -1, field: '', problem: (cause as Error).message }] },
    });
  }
  return parseEndpoints(data, file, { baseDir: dirname(file) });
}

const fits = (e: RemoteEndpoint, s: ScreenSize) => !e.size || (e.size.width === s.width && e.size.height === s.height);

/** The remote provider over `endpoints` (see the file comment). */
export function remoteProvider(endpoints: RemoteEndpoint[], opts: { navigationTimeoutMs?: number } = {}): DesktopProvider {
  const busy = new Set<number>();
  const waiters = new Set<() => void>();
  const wake = () => {
    for (const w of [...waiters]) w();
  };

  /** The index of a free endpoint that fits `size`, waiting for one; marks it busy. */
  async function take(size: ScreenSize, signal?: AbortSignal): Promise<number> {
    for (;;) {
      if (signal?.aborted) throw signal.reason;
      const i = endpoints.findIndex((e, k) => !busy.has(k) && fits(e, size));
      if (i >= 0) {
        busy.add(i);
        return i;
      }
      // Until release() wakes the waiters, or the signal fires (rejecting with its reason).
      let woken!: () => void;
      const wait = new Promise<void>((r) => (woken = r));
      const done = () => {
        waiters.delete(done);
        woken();
      };
      waiters.add(done);
      await race(wait, { signal, onAbort: () => waiters.delete(done) });
    }
  }

  return {
    name: 'remote',
    capacity: endpoints.length,
    async prepare({ sizes }) {
      for (const s of sizes) {
        if (!endpoints.some((e) => fits(e, s))) {
          throw new VncuaError(
            'EVAL_ERR_PROVIDER_UNAVAILABLE',
            `--provider remote: no endpoint has the size ${s.width}x${s.height} (declared sizes: ${endpoints.map((e) => (e.size ? `${e.size.width}x${e.size.height}` : 'any')).join(', ')}).`,
            {
              details: { provider: 'remote', size: s },
            },
          );
        }
      }
    },
    async acquire(req: DesktopRequest): Promise<LeasedDesktop> {
      const i = await take(req.size, req.signal);
      const e = endpoints[i]!;
      let released = false;
      const release = async () => {
        if (released) return;
        released = true;
        busy.delete(i);
        wake();
      };
      // Navigate while the agent starts (LeasedDesktop.ready).
      const open = async (signal: AbortSignal, url = req.url) => {
        try {
          return await navigatePage(e.cdpUrl, url, { loadTimeoutMs: req.timeoutMs ?? opts.navigationTimeoutMs ?? 20_000, signal });
        } catch (cause) {
          // The task page's own problem (refused, 404, blank, never settles) names the URL and the cause.
          if (isVncuaError(cause) && cause.code !== 'PAGE_ERR_NO_PAGE') throw cause;
          throw new VncuaError(
            'EVAL_ERR_DESKTOP_LOST',
            `Remote desktop ${i} (${redactUrl(e.cdpUrl)}) could not open ${url}: ${redactSecretsIn((cause as Error).message, e.cdpUrl)}`,
            { cause, details: { endpoint: i } },
          );
        }
      };
      const lease: LeasedDesktop = {
        vncUrl: e.vncUrl,
        cdpUrl: e.cdpUrl,
        ...(e.password !== undefined ? { password: e.password } : {}),
        width: e.size?.width ?? req.size.width,
        height: e.size?.height ?? req.size.height,
        ports: [],
        info: { provider: 'remote', endpoint: i, vncUrl: redactUrl(e.vncUrl), cdpUrl: redactUrl(e.cdpUrl) },
        async health(o) {
          return (await cdpAnswers(e.cdpUrl, o)) ? null : { code: 'EVAL_ERR_DESKTOP_LOST', message: `Remote desktop ${i}: CDP ${redactUrl(e.cdpUrl)} stopped answering.` };
        },
        release,
        // Another page later (the runner opens a task page that needs auth bindings once they are attached).
        open: (url, o) => open(o?.signal ?? new AbortController().signal, url),
      };
      return withPageReady(lease, open, req.signal);
    },
  };
}
