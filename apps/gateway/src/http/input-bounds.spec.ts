import { MAX_NESTING_DEPTH, nestedDeeperThan } from './input-bounds';

function nested(depth: number, shape: 'array' | 'object'): unknown {
  let value: unknown = shape === 'array' ? [] : {};
  for (let i = 1; i < depth; i++) {
    value = shape === 'array' ? [value] : { a: value };
  }
  return value;
}

describe('nestedDeeperThan', () => {
  it('counts each object and array as one level; scalars, null and buffers as none', () => {
    expect(nestedDeeperThan('x', 0)).toBe(false);
    expect(nestedDeeperThan(null, 0)).toBe(false);
    expect(nestedDeeperThan(Buffer.from('[[[['), 0)).toBe(false);
    expect(nestedDeeperThan({}, 0)).toBe(true);
    expect(nestedDeeperThan({}, 1)).toBe(false);
    expect(nestedDeeperThan({ a: [1, { b: 'c' }] }, 2)).toBe(true);
    expect(nestedDeeperThan({ a: [1, { b: 'c' }] }, 3)).toBe(false);
  });

  it(`allows ${MAX_NESTING_DEPTH} levels and refuses ${MAX_NESTING_DEPTH + 1}, for arrays and objects`, () => {
    for (const shape of ['array', 'object'] as const) {
      expect(nestedDeeperThan(nested(MAX_NESTING_DEPTH, shape))).toBe(false);
      expect(nestedDeeperThan(nested(MAX_NESTING_DEPTH + 1, shape))).toBe(true);
    }
  });

  it('walks a value nested a million levels deep without recursion', () => {
    expect(nestedDeeperThan(JSON.parse(`${'['.repeat(1_000_000)}${']'.repeat(1_000_000)}`))).toBe(true);
  });

  it('looks at own keys named like prototype members as plain keys', () => {
    const value = JSON.parse('{"__proto__": {"constructor": {"prototype": {}}}}') as unknown;
    expect(nestedDeeperThan(value, 4)).toBe(false);
    expect(nestedDeeperThan(value, 3)).toBe(true);
  });
});
