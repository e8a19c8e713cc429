/**
 * Test fixture: a Node process that launches a desktop, prints its JSON on stdout and then
 * idles, so a test can SIGKILL this parent and check the desktop dies with it.
 * Run: node --import tsx harness/desktop/launch-child.fixture.ts [WxH] [TMPDIR for the desktop]
 */
import { launchDesktop } from './launch.ts';

const tmp = process.argv[3];
const d = await launchDesktop({ size: process.argv[2] ?? '1280x800', env: tmp ? { TMPDIR: tmp } : undefined });
const { close: _close, exited: _exited, ...info } = d;
process.stdout.write(`${JSON.stringify(info)}\n`);
// Stay alive until killed (the desktop does not keep Node alive by itself).
setInterval(() => {}, 60_000);
