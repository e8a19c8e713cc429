/**
 * Test fixture: a Node process that starts writeVideo with the given (hanging) ffmpeg, prints the
 * ffmpeg's pid once it runs, then calls process.exit(0) while ffmpeg is still up.
 * Run: node --import tsx recorder/video/exit-child.fixture.ts <ffmpeg> <pidFile> <outDir>
 */
import { join } from 'node:path';
import { writeVideo } from './index.ts';
import { solidFrame, waitPidFile } from './test-helpers.ts';

const [bin, pidFile, outDir] = process.argv.slice(2) as [string, string, string];
void writeVideo({ out: join(outDir, 'recording'), width: 64, height: 48, frames: [solidFrame(0, 64, 48, [0, 0, 0])], ffmpegPath: bin }).catch(() => undefined);
const pid = await waitPidFile(pidFile);
process.stdout.write(`${pid}\n`);
process.exit(0);
