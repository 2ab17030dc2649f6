import { normaliseWorkspacePath } from './workspace.path';

const ok = (raw: string): string => {
  const result = normaliseWorkspacePath(raw);
  if (!result.ok) {
    throw new Error(result.error);
  }
  return result.value;
};
const error = (raw: string): string => {
  const result = normaliseWorkspacePath(raw);
  if (result.ok) {
    throw new Error(`expected ${JSON.stringify(raw)} to be refused, got ${result.value}`);
  }
  return result.error;
};

describe('normaliseWorkspacePath', () => {
  it.each([
    ['notes.md', 'notes.md'],
    ['a/b/c.txt', 'a/b/c.txt'],
    ['a/./b', 'a/b'],
    ['./a', 'a'],
    ['a//b', 'a/b'],
    ['a/b/', 'a/b'],
    ['  a/b.md ', 'a/b.md'],
    ['dir with space/file name.md', 'dir with space/file name.md'],
    ['..hidden/x..y', '..hidden/x..y'],
    ['报告/日本語.md', '报告/日本語.md'],
    ['cafe\u0301.md', 'caf\u00e9.md'],
  ])('%j → %j', (raw, expected) => {
    expect(ok(raw)).toBe(expected);
  });

  it.each([
    ['/etc/passwd', 'must be relative (no leading /)'],
    ['../secret', '".." segments are not allowed'],
    ['a/../../b', '".." segments are not allowed'],
    ['a/..', '".." segments are not allowed'],
    ['a\\b', 'use / to separate folders, not \\'],
    ['a\u0000b', 'control characters and invalid Unicode are not allowed'],
    ['a\nb', 'control characters and invalid Unicode are not allowed'],
    ['a\u007fb', 'control characters and invalid Unicode are not allowed'],
    ['a\u0085b', 'control characters and invalid Unicode are not allowed'],
    ['a\ud800b', 'control characters and invalid Unicode are not allowed'],
    ['', 'names no file'],
    ['.', 'names no file'],
    ['./', 'names no file'],
    ['   ', 'names no file'],
  ])('refuses %j: %s', (raw, reason) => {
    expect(error(raw)).toBe(`invalid path ${JSON.stringify(raw)}: ${reason}`);
  });

  it('allows 256 bytes and refuses 257, counted in UTF-8 after normalisation', () => {
    expect(ok('a'.repeat(256))).toHaveLength(256);
    expect(ok(`./${'a'.repeat(256)}`)).toHaveLength(256);
    expect(error('a'.repeat(257))).toMatch(/: is 257 bytes, over the 256-byte limit$/);
    expect(ok('日'.repeat(85))).toHaveLength(85);
    expect(error('日'.repeat(86))).toMatch(/is 258 bytes/);
  });

  it('keeps emoji (surrogate pairs) in names', () => {
    expect(ok('😀/a.md')).toBe('😀/a.md');
  });
});
