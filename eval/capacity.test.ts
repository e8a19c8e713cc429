/** The default --workers: one desktop per core, within the available memory; at least 1. */
import { describe, expect, it } from 'vitest';
import { poolMemoryWarning, recommendedWorkers, workersWarning } from './capacity.ts';

const GiB = 1024 ** 3;
const MiB = 1024 ** 2;

describe('recommendedWorkers', () => {
  it('one per core when memory allows, capped by memory, never below 1', () => {
    expect(recommendedWorkers({ cores: 2, availableBytes: 16 * GiB }, 512 * MiB)).toMatchObject({ workers: 2, byCores: 2, byMemory: 32, limitedBy: '2 cores' });
    expect(recommendedWorkers({ cores: 16, availableBytes: 3 * GiB }, 512 * MiB)).toMatchObject({
      workers: 6,
      byCores: 16,
      byMemory: 6,
      limitedBy: '3.0 GiB available memory at 512 MiB per desktop',
    });
    expect(recommendedWorkers({ cores: 8, availableBytes: 100 * MiB }, 512 * MiB)).toMatchObject({ workers: 1, byMemory: 0 });
    expect(recommendedWorkers({ cores: 1, availableBytes: 64 * GiB }).workers).toBe(1);
  });

  it('the warning names the recommended number, only when more are asked for', () => {
    const advice = recommendedWorkers({ cores: 2, availableBytes: 16 * GiB });
    expect(workersWarning(2, advice)).toBeNull();
    expect(workersWarning(8, advice)).toBe('--workers 8 is more than this machine can hold; recommended: 2 (2 cores)');
  });

  it('warns when workers + pooled desktops are more than the available memory holds', () => {
    const advice = recommendedWorkers({ cores: 2, availableBytes: 2 * GiB }, 680 * MiB);
    expect(poolMemoryWarning(1, 2, advice)).toBeNull();
    expect(poolMemoryWarning(2, 2, advice)).toBe('--workers 2 with --pool 2 keeps up to 4 desktops alive; the available memory holds 3 (2.0 GiB at 680 MiB per desktop)');
  });
});
