import { describe, expect, it } from 'vitest';
import { ERROR_CODES } from '../harness/errors.ts';
import { readErrorDocs, renderErrorDocs } from './error-docs.ts';

describe('docs/ERRORS.md', () => {
  it('lists every error code, exactly as generated from harness/errors.ts (run `npx tsx scripts/error-docs.ts --write`)', () => {
    const doc = readErrorDocs();
    for (const code of Object.keys(ERROR_CODES)) expect(doc).toContain(`\`${code}\``);
    expect(doc).toBe(renderErrorDocs());
  });
});
