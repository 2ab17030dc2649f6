import { WORKSPACE_PATH_MAX_BYTES } from './tool.limits';
import type { Checked } from './tool.input';
import { utf8ByteLength } from './utf8';

// C0 and C1 control characters, DEL, and lone surrogates (which are not valid UTF-8).
const FORBIDDEN = /[\u0000-\u001f\u007f-\u009f]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/u;

/**
 * Checks a workspace path and gives its one canonical spelling (NFC, `/`-separated, no `.` or empty
 * segments), so that `a/./b`, `a//b` and `a/b` name the same file everywhere.
 */
export function normaliseWorkspacePath(raw: string): Checked<string> {
  const fail = (reason: string): Checked<string> => ({ ok: false, error: `invalid path ${JSON.stringify(raw)}: ${reason}` });
  const trimmed = raw.trim();
  if (FORBIDDEN.test(trimmed)) {
    return fail('control characters and invalid Unicode are not allowed');
  }
  if (trimmed.includes('\\')) {
    return fail('use / to separate folders, not \\');
  }
  if (trimmed.startsWith('/')) {
    return fail('must be relative (no leading /)');
  }
  const segments = trimmed.normalize('NFC').split('/').filter((segment) => segment !== '' && segment !== '.');
  if (segments.includes('..')) {
    return fail('".." segments are not allowed');
  }
  const path = segments.join('/');
  if (path === '') {
    return fail('names no file');
  }
  const bytes = utf8ByteLength(path);
  if (bytes > WORKSPACE_PATH_MAX_BYTES) {
    return fail(`is ${bytes} bytes, over the ${WORKSPACE_PATH_MAX_BYTES}-byte limit`);
  }
  return { ok: true, value: path };
}
