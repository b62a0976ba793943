import { afterEach, describe, expect, it, vi } from 'vitest';
import { withProgress } from '../../src/cli/run.js';

describe('progress of slow CLI work', () => {
  afterEach(() => { vi.useRealTimers(); vi.restoreAllMocks(); });

  it('says what runs on stderr once it has taken more than a second, and nothing for quick work', async () => {
    vi.useFakeTimers();
    const written: string[] = [];
    vi.spyOn(process.stderr, 'write').mockImplementation((chunk) => { written.push(String(chunk)); return true; });
    await withProgress('Quick...', async () => 'done');
    const slow = withProgress('Opening the embedded database...', () => new Promise((resolve) => { setTimeout(resolve, 3000); }));
    await vi.advanceTimersByTimeAsync(999);
    expect(written).toEqual([]);
    await vi.advanceTimersByTimeAsync(2001);
    await slow;
    expect(written).toEqual(['Opening the embedded database...\n']);
  });
});
