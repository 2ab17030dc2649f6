import { WORKSPACE_PATH_MAX_BYTES } from './tool.limits';
import type { Checked } from './tool.input';
import { utf8ByteLength } from './utf8';

/** C0 and C1 control characters, DEL, and lone surrogates (which have no UTF-8 form). */
function hasForbiddenCharacter(text: string): boolean {
  for (const char of text) {
    const code = char.codePointAt(0) ?? 0;
    if (code <= 0x1f || (code >= 0x7f && code <= 0x9f) || (code >= 0xd800 && code <= 0xdfff)) {
      return true;
    }
  }
  return false;
}

/**
 * Checks a workspace path and gives its one canonical spelling (NFC, `/`-separated, no `.` or empty
 * segments), so that `a/./b`, `a//b` and `a/b` name the same file everywhere.
 */
export function normaliseWorkspacePath(raw: string): Checked<string> {
  const fail = (reason: string): Checked<string> => ({ ok: false, error: `invalid path ${JSON.stringify(raw)}: ${reason}` });
  const trimmed = raw.trim();
  if (hasForbiddenCharacter(trimmed)) {
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
