/**
 * A UUIDv7 computed in SQL from a row number: the layout (48-bit Unix ms, version 7, 12 random bits,
 * variant, 62 random bits) with the millisecond from `ms` and the random bits from md5(seed || j), so
 * ids made with a millisecond that grows with j sort in creation order like the app's uuidv7().
 * `ms` and `j` are SQL expressions (column names by default).
 */
export const uuidv7Sql = (seed: string, { ms = 'ms', j = 'j' } = {}) =>
  `(lpad(to_hex(${ms}), 12, '0') || '7' || substr(md5('${seed}' || ${j}), 1, 3) || (ARRAY['8', '9', 'a', 'b'])[1 + (${j} % 4)::int] `
  + `|| substr(md5('${seed}' || ${j}), 4, 15))::uuid`;
