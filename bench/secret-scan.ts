/**
 * Issue 17's figure: the secret scan over every artifact of the full basic suite run with every model adapter.
 * cli/test-helpers/secret-scan.ts plants three unique secrets (an auth binding's bearer token, a `secrets` entry typed
 * through `{{secret:pw}}` in every task, the model API key in the environment), runs `vncua eval` over all 30 basic
 * tasks (plus auth-poll) with openai-cua, anthropic, chat and http against their fake servers through the official
 * SDKs, then `vncua process`, `vncua score` and `vncua export`, and scans every byte written, every command's output
 * and every request body sent. The peer is the plaintext itself: the same scan finds the secret where it was planted
 * in plain form (a control file written beside the results), so a scan that finds nothing is not a blind one.
 *
 * Run: npx tsx bench/secret-scan.ts [workers=2]
 */
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { scanDirs } from '../harness/secrets/scan.ts';
import { findRunDir, runSecretScan, scanSecretRun } from '../cli/test-helpers/secret-scan.ts';

const WORKERS = Number(process.argv[2] ?? 2);
const t0 = performance.now();
const scan = await runSecretScan({ tasks: 'all', workers: WORKERS, commandTimeoutMs: 1_800_000 });
try {
  const failed = scan.runs.filter((r) => r.code !== 0);
  if (failed.length) throw new Error(`bench/secret-scan: vncua eval failed for ${failed.map((r) => `${r.agent} (exit ${r.code}): ${r.stderr.slice(-400)}`).join('; ')}`);
  let typed = 0;
  let runs = 0;
  for (const root of scan.roots) {
    const { readdir } = await import('node:fs/promises');
    const base = (await findRunDir(root, 'x'))!.split('/').slice(0, 2).join('/');
    for (const task of await readdir(join(root, base))) {
      const trace = await readFile(join(root, base, task, 'execution.json'), 'utf8').catch(() => '');
      runs++;
      if (trace.includes('"secret_spans":["pw"]')) typed++;
    }
  }
  const { hits, files, bytes } = await scanSecretRun(scan);
  // The control: the typed secret written in plain form beside the results is found.
  const control = join(scan.roots[0]!, 'control.txt');
  await writeFile(control, `plain ${scan.secrets[1]} here`);
  const found = (await scanDirs([control], scan.secrets[1]!)).hits.length;
  console.log(`### Secret scan: the full basic suite (${scan.taskCount - 1} tasks + auth-poll) with openai-cua, anthropic, chat and http (--workers ${WORKERS})\n`);
  console.log(`- runs: ${runs} (${scan.taskCount} per adapter), ${typed} of them typed the placeholder \`{{secret:pw}}\` (trace secret_spans).`);
  console.log(
    `- scanned: ${files} files (${(bytes / 1048576).toFixed(1)} MiB), ${scan.outputs.length} command outputs, ${scan.bodies.length} model request bodies, 3 secrets in plain, JSON, URL, base64 and keysym forms.`,
  );
  console.log(
    `- bearer binding sent during auth-poll: ${Object.entries(scan.bearerSeen)
      .map(([a, y]) => `${a} ${y ? 'yes' : 'no'}`)
      .join(', ')}.`,
  );
  console.log(
    `- **hits: ${hits.length}** (bar: 0)${
      hits.length
        ? `: ${hits
            .slice(0, 10)
            .map((h) => JSON.stringify(h))
            .join('; ')}`
        : ''
    }; control (the secret written in plain beside the results): ${found} hit(s), so the scan sees plaintext.`,
  );
  console.log(`- wall time ${((performance.now() - t0) / 1000).toFixed(0)} s.`);
} finally {
  await scan.close();
}
