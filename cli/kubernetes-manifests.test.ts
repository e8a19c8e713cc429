// docs/kubernetes.md's manifests (checked with the real parsers of `vncua eval` and `vncua worker`): the fields vncua relies on (issue 16 point 5). Not a cluster test:
// no Kubernetes runs here; this checks what a cluster would be given.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { parseEvalArgs } from './eval.ts';
import { parseWorkerArgs } from './worker.ts';

type Obj = Record<string, any>;

/** Every YAML document of every ```yaml block of the page. */
function manifests(): Obj[] {
  const md = readFileSync(new URL('../docs/kubernetes.md', import.meta.url), 'utf8');
  const blocks = [...md.matchAll(/```yaml\n([\s\S]*?)```/g)].map((m) => m[1]!);
  return blocks.flatMap((b) =>
    parseAllDocuments(b).map((d) => {
      expect(d.errors, `YAML error in docs/kubernetes.md: ${d.errors.join('; ')}`).toEqual([]);
      return d.toJS() as Obj;
    }),
  );
}

/** The value after `flag` in an args list. */
function flagValue(args: string[], flag: string): string | undefined {
  const i = args.indexOf(flag);
  return i >= 0 ? args[i + 1] : undefined;
}

/** The pod template's one container, and checks shared by the Job and the Deployment. */
function checkPod(spec: Obj, all: Obj[]): { container: Obj; args: string[] } {
  const pod = spec.template.spec;
  expect(pod.containers).toHaveLength(1);
  const container = pod.containers[0];
  // The worker image (docker/worker/Dockerfile), whose user is uid 1000 (the desktop image's vncua user).
  expect(container.image).toMatch(/vncua-worker(:|$)/);
  expect(pod.securityContext.runAsUser).toBe(1000);
  expect(pod.securityContext.fsGroup).toBe(1000);
  const args: string[] = container.args;
  expect(args[0]).toBe('worker');
  // Chromium wants more shared memory than a container's 64 MiB default.
  const shm = container.volumeMounts.find((m: Obj) => m.mountPath === '/dev/shm');
  expect(shm, 'a /dev/shm mount').toBeDefined();
  expect(pod.volumes.find((v: Obj) => v.name === shm.name).emptyDir.medium).toBe('Memory');
  // The results volume: a claim every pod can write at once.
  const results = container.volumeMounts.find((m: Obj) => m.mountPath === '/results');
  const claim = pod.volumes.find((v: Obj) => v.name === results.name).persistentVolumeClaim.claimName;
  const pvc = all.find((m) => m.kind === 'PersistentVolumeClaim' && m.metadata.name === claim);
  expect(pvc, `the PersistentVolumeClaim ${claim}`).toBeDefined();
  expect(pvc!.spec.accessModes).toContain('ReadWriteMany');
  return { container, args };
}

describe('docs/kubernetes.md', () => {
  const all = manifests();

  it('has an Indexed Job whose pods run their shard from the environment, into the results volume', () => {
    const job = all.find((m) => m.kind === 'Job');
    expect(job?.apiVersion).toBe('batch/v1');
    const spec = job!.spec;
    expect(spec.completionMode).toBe('Indexed');
    // A failed shard retries on its own, without failing the others (needs restartPolicy Never).
    expect(spec.backoffLimitPerIndex).toBeGreaterThanOrEqual(1);
    expect(spec.template.spec.restartPolicy).toBe('Never');
    expect(spec.podFailurePolicy.rules.some((r: Obj) => r.action === 'Ignore' && r.onPodConditions.some((c: Obj) => c.type === 'DisruptionTarget'))).toBe(true);
    const { container, args } = checkPod(spec, all);
    expect(args).toContain('--shard-from-env');
    // Kubernetes sets JOB_COMPLETION_INDEX itself, not the count: the manifest must, equal to completions.
    const completions = container.env.find((e: Obj) => e.name === 'JOB_COMPLETIONS');
    expect(Number(completions.value)).toBe(spec.completions);
    expect(container.env.some((e: Obj) => e.name === 'JOB_COMPLETION_INDEX')).toBe(false);
    expect(spec.parallelism).toBeLessThanOrEqual(spec.completions);
    expect(flagValue(args, '--out')).toBe('/results');
    expect(flagValue(args, '--tasks')).toBeDefined();
    expect(flagValue(args, '--agent')).toBeDefined();
    // What `vncua worker --shard-from-env` hands to `vncua eval` (cli/worker.ts) parses, as a pod would run it.
    const rest = args.slice(1).filter((a) => a !== '--shard-from-env');
    expect(parseEvalArgs([...rest, '--shard', `1/${spec.completions}`])).toMatchObject({ out: '/results', shard: { i: 1, n: spec.completions } });
  });

  it('has a Deployment of queue workers that get time to finish their runs on SIGTERM, the queue URL from a Secret', () => {
    const dep = all.find((m) => m.kind === 'Deployment');
    expect(dep?.apiVersion).toBe('apps/v1');
    const { container, args } = checkPod(dep!.spec, all);
    expect(flagValue(args, '--queue')).toBe('$(VNCUA_QUEUE)');
    const queue = container.env.find((e: Obj) => e.name === 'VNCUA_QUEUE');
    expect(queue.valueFrom.secretKeyRef.name).toBeDefined();
    expect(queue.value).toBeUndefined();
    const drain = Number(flagValue(args, '--grace'));
    expect(drain).toBeGreaterThan(0);
    expect(dep!.spec.template.spec.terminationGracePeriodSeconds).toBeGreaterThan(drain);
    expect(dep!.spec.selector.matchLabels).toEqual(dep!.spec.template.metadata.labels);
    // The worker's own parser takes the args (the queue URL as the Secret would give it).
    const given = args.slice(1).map((a) => (a === '$(VNCUA_QUEUE)' ? 'redis://:pw@redis.example:6379/0' : a));
    expect(parseWorkerArgs(given)).toMatchObject({ concurrency: 1, graceMs: drain * 1000 });
  });
});
