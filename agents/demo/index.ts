/** The demo's page and script (`npm run demo` serves the page and plays the script with the scripted agent). */
import { fileURLToPath } from 'node:url';

/** The demo page: a field, a scroll list and a button that reveals <b>code#1</b> once the script's actions took effect. */
export const DEMO_PAGE = fileURLToPath(new URL('./page.html', import.meta.url));
/** The demo script, in the trace format. */
export const DEMO_SCRIPT = fileURLToPath(new URL('./script.json', import.meta.url));
/** The task given to the demo agent. */
export const DEMO_TASK = 'Type "Grüße, vncua ✓" in the field, press Enter, scroll the list, then reveal the code.';
