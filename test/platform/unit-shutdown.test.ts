import { describe, expect, it, vi } from 'vitest';
import { closeInOrder } from '../../src/platform/shutdown.js';

describe('closeInOrder (the server\'s shutdown)', () => {
  it('closes every part in order and answers exit code 0 when all close', async () => {
    const closed: string[] = [];
    const log = { error: vi.fn() };
    const code = await closeInOrder(log, [['http', async () => { closed.push('http'); }], ['database', async () => { closed.push('database'); }]]);
    expect(code).toBe(0);
    expect(closed).toEqual(['http', 'database']);
    expect(log.error).not.toHaveBeenCalled();
  });

  it('goes on past a part that fails, so the database still closes, logs the part by name, and answers exit code 1', async () => {
    const closed: string[] = [];
    const log = { error: vi.fn() };
    const code = await closeInOrder(log, [
      ['HTTP server', async () => { throw new Error('the drain broke'); }],
      ['database', async () => { closed.push('database'); }],
    ]);
    expect(code).toBe(1);
    expect(closed).toEqual(['database']);
    expect(log.error).toHaveBeenCalledExactlyOnceWith({ err: { message: 'the drain broke' }, step: 'HTTP server' }, 'shutdown: a part did not close cleanly');
  });
});
