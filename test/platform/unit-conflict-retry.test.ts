import { describe, expect, it } from 'vitest';
import { onceMoreOnConflict, type Db } from '../../src/platform/db/database.js';

const outside = { isTransaction: false } as Db;
const inside = { isTransaction: true } as Db;
const failing = (...codes: string[]) => {
  let calls = 0;
  const work = async () => {
    const code = codes[calls++];
    if (code) throw Object.assign(new Error(`failed with ${code}`), { code });
    return `done after ${calls}`;
  };
  return { work, calls: () => calls };
};

describe('a deadlock or serialization failure goes again once', () => {
  it('runs the work again after a deadlock (40P01) or a serialization failure (40001), and answers its result', async () => {
    expect(await onceMoreOnConflict(outside, failing('40P01').work)).toBe('done after 2');
    expect(await onceMoreOnConflict(outside, failing('40001').work)).toBe('done after 2');
  });

  it('gives up after the second conflict, with its error', async () => {
    const twice = failing('40P01', '40P01');
    await expect(onceMoreOnConflict(outside, twice.work)).rejects.toMatchObject({ code: '40P01' });
    expect(twice.calls()).toBe(2);
  });

  it('never repeats other errors, nor work inside a caller transaction (the whole transaction must go again)', async () => {
    const unique = failing('23505');
    await expect(onceMoreOnConflict(outside, unique.work)).rejects.toMatchObject({ code: '23505' });
    expect(unique.calls()).toBe(1);
    const nested = failing('40P01');
    await expect(onceMoreOnConflict(inside, nested.work)).rejects.toMatchObject({ code: '40P01' });
    expect(nested.calls()).toBe(1);
  });
});
