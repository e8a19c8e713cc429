/**
 * Child process for the crash-safety test: `node --import tsx append-loop.ts <outputDir>`.
 * Opens a TraceWriter, prints "ready", then appends sampleEntry(0), (1), ... in a tight loop,
 * printing "appended N" (N = entries so far) after each append resolves, until killed.
 * Safety: exits by itself when its stdin closes (the test runner died) or after 20 s.
 */
import { TraceWriter } from '../writer.ts';
import { sampleEntry } from './entries.ts';

const dir = process.argv[2];
if (!dir) throw new Error('usage: append-loop.ts <outputDir>');
process.stdin
  .on('end', () => process.exit(0))
  .on('close', () => process.exit(0))
  .resume();
setTimeout(() => process.exit(0), 20_000).unref();
const writer = new TraceWriter(dir);
await writer.open();
process.stdout.write('ready\n');
for (let i = 0; ; i++) {
  await writer.append(sampleEntry(i));
  process.stdout.write(`appended ${i + 1}\n`);
}
