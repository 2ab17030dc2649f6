/**
 * What a shell command changed in its scratch folder: the walk after the command, which reads the
 * text files that may be written back to the workspace, within bounds the command cannot push.
 */
import { constants as fsConstants, promises as fs, type Dirent } from 'node:fs';
import { normaliseWorkspacePath } from '../workspace.path';

/**
 * At most this many files and folders of the scratch folder (the workspace's copy included) are looked
 * at after a command; when there are more, none of the command's file changes are kept. Bounds the
 * time and memory the scan takes, which the workspace's byte limit alone does not (empty files).
 */
export const SHELL_MAX_SCANNED_ENTRIES = 5_000;

export interface WorkspaceChanges {
  /** New or changed text files, sorted by path. */
  writes: Array<{ path: string; content: string }>;
  /** Workspace files that no longer exist, sorted. */
  deletes: string[];
  /** What is not written back (binary, too large, symlink, special file, bad path), sorted by path. */
  skipped: Array<{ path: string; reason: string }>;
}

/** Why none of a command's file changes are kept; found before they are all read into memory. */
export interface ChangesRefused {
  refused: string;
}

/** The workspace's files as put in the scratch folder before the command. */
export interface Placed {
  /** Workspace path → content, for the files put in the scratch folder. */
  files: Map<string, string>;
  /** Workspace files that could not be put there; they are left as they are. */
  skipped: Array<{ path: string; reason: string }>;
}

const strictUtf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

interface Scan {
  /** The per-file and the workspace's size limits (ShellLimits). */
  limits: { maxFileBytes: number; maxWorkspaceBytes: number };
  /** Files and folders looked at so far. */
  entries: number;
  /** Bytes of the files that would be in the workspace after the command, of those looked at so far. */
  keptBytes: number;
  /** Set when the scan stops early; none of the changes are kept then. */
  refused: string | null;
  /** Paths found, whatever their kind, except folders. */
  seen: Set<string>;
  /** Text files that may be written back. */
  texts: Map<string, string>;
  skipped: Array<{ path: string; reason: string }>;
  /** Folders that could not be listed: workspace files under them are not taken as deleted. */
  unreadable: string[];
}

/** What the command changed in the scratch folder, or why none of it is kept (the scan stopped early). */
export async function collectChanges(work: string, placed: Placed, limits: Scan['limits']): Promise<WorkspaceChanges | ChangesRefused> {
  const scan: Scan = { limits, entries: 0, keptBytes: 0, refused: null, seen: new Set(), texts: new Map(), skipped: [], unreadable: [] };
  await walk(Buffer.from(work), '', scan, placed.files);
  if (scan.refused !== null) {
    return { refused: scan.refused };
  }

  const writes = [...scan.texts]
    .filter(([file, content]) => placed.files.get(file) !== content)
    .map(([file, content]) => ({ path: file, content }))
    .sort((a, b) => compare(a.path, b.path));
  const missing = [...placed.files.keys()].filter((file) => !scan.seen.has(file));
  // A file under a folder that could not be listed (the root itself is "") may well still be there.
  const unchecked = new Set(missing.filter((file) => scan.unreadable.some((folder) => isUnder(file, folder))));
  const deletes = missing.filter((file) => !unchecked.has(file)).sort(compare);
  const skipped = [
    ...placed.skipped,
    ...scan.skipped,
    ...[...unchecked].map((file) => ({ path: file, reason: 'in a folder that could not be read; left unchanged' })),
  ].sort((a, b) => compare(a.path, b.path));
  return { writes, deletes, skipped };
}

/** `folder` is a workspace folder path without a trailing slash, "" for the root. */
function isUnder(file: string, folder: string): boolean {
  return folder === '' || file.startsWith(`${folder}/`);
}

/**
 * Walks a folder without following symbolic links, stopping (with `scan.refused` set) at the first
 * entry past SHELL_MAX_SCANNED_ENTRIES or the first file that takes what would be kept past the
 * workspace limit. Names are read as bytes so that non-UTF-8 names are seen too.
 */
async function walk(dir: Buffer, prefix: string, scan: Scan, original: ReadonlyMap<string, string>): Promise<void> {
  const entries = await listFolder(dir, prefix, scan);
  for (const { name: rawName, entry } of entries ?? []) {
    if (scan.refused !== null) {
      return;
    }
    const full = Buffer.concat([dir, Buffer.from('/'), rawName]);
    const name = decodeName(rawName);
    const relative = prefix === '' ? name.text : `${prefix}/${name.text}`;
    if (!name.valid) {
      scan.skipped.push({ path: relative, reason: `${entry.isDirectory() ? 'folder' : 'file'} name is not valid UTF-8` });
      continue;
    }
    if (entry.isDirectory()) {
      await walk(full, relative, scan, original);
      continue;
    }
    scan.seen.add(relative);
    const before = original.get(relative);
    const found = await examine(full, entry, relative, before, scan.limits.maxFileBytes);
    if (found.ok) {
      scan.texts.set(relative, found.content);
    } else if (found.reason !== undefined) {
      scan.skipped.push({ path: relative, reason: found.reason });
    }
    // What the workspace will hold by this name: the new text, or else what it held before, if anything.
    keep(scan, Buffer.byteLength(found.ok ? found.content : (before ?? '')));
  }
}

async function examine(full: Buffer, entry: Dirent, relative: string, before: string | undefined, maxFileBytes: number): Promise<ReadOutcome> {
  if (entry.isSymbolicLink()) {
    return { ok: false, reason: 'symbolic link' };
  }
  if (!entry.isFile()) {
    return { ok: false, reason: 'special file (not a regular file)' };
  }
  return readText(full, relative, before, maxFileBytes);
}

/**
 * The entries of a folder, read one by one so that no more than SHELL_MAX_SCANNED_ENTRIES are ever
 * held; null (with the folder noted as unreadable) when it cannot be listed, or once the scan stops.
 */
async function listFolder(dir: Buffer, prefix: string, scan: Scan): Promise<Array<{ name: Buffer; entry: Dirent }> | null> {
  const entries: Array<{ name: Buffer; entry: Dirent }> = [];
  try {
    // latin1 maps each byte of a name to one character and back, so names that are not UTF-8 survive.
    for await (const entry of await fs.opendir(dir, { encoding: 'latin1' })) {
      scan.entries += 1;
      if (scan.entries > SHELL_MAX_SCANNED_ENTRIES) {
        scan.refused = `more than ${SHELL_MAX_SCANNED_ENTRIES} files and folders after the command; at most ${SHELL_MAX_SCANNED_ENTRIES} are looked at`;
        return null;
      }
      entries.push({ name: Buffer.from(entry.name, 'latin1'), entry });
    }
  } catch (error) {
    scan.unreadable.push(prefix);
    scan.skipped.push({ path: prefix === '' ? '.' : `${prefix}/`, reason: `folder could not be read (${errorCode(error)})` });
    return null;
  }
  return entries;
}

/**
 * Counts a file that is still there after the command, as the workspace would hold it (its new text,
 * or its old content when it is not written back). Workspace files left out of the scratch folder, or
 * in folders that could not be read, are not counted, so the count never exceeds what the commit
 * would find: a refusal here is one the commit would make too, and says so in the same words.
 */
function keep(scan: Scan, bytes: number): void {
  scan.keptBytes += bytes;
  const max = scan.limits.maxWorkspaceBytes;
  if (scan.keptBytes > max && scan.refused === null) {
    scan.refused = `workspace full: the changes would make at least ${scan.keptBytes} bytes, over the limit of ${max}`;
  }
}

function decodeName(name: Buffer): { text: string; valid: boolean } {
  try {
    return { text: strictUtf8.decode(name), valid: true };
  } catch {
    return { text: name.toString('utf8'), valid: false };
  }
}

type ReadOutcome = { ok: true; content: string } | { ok: false; reason?: string };

/** A regular file's content when it can go back to the workspace; no reason when it is unchanged. */
async function readText(full: Buffer, relative: string, before: string | undefined, maxFileBytes: number): Promise<ReadOutcome> {
  const normalised = normaliseWorkspacePath(relative);
  if (!normalised.ok) {
    return { ok: false, reason: normalised.error };
  }
  if (normalised.value !== relative) {
    return { ok: false, reason: `not a workspace path (its canonical spelling is ${JSON.stringify(normalised.value)})` };
  }
  let handle;
  try {
    // O_NOFOLLOW and O_NONBLOCK: never follow a link or wait on a FIFO swapped in since the listing.
    handle = await fs.open(full, fsConstants.O_RDONLY | fsConstants.O_NOFOLLOW | fsConstants.O_NONBLOCK);
  } catch (error) {
    return { ok: false, reason: `could not be read (${errorCode(error)})` };
  }
  try {
    const stat = await handle.stat();
    if (!stat.isFile()) {
      return { ok: false, reason: 'special file (not a regular file)' };
    }
    const beforeBytes = before === undefined ? undefined : Buffer.from(before, 'utf8');
    const sameSize = beforeBytes !== undefined && stat.size === beforeBytes.length;
    if (stat.size > maxFileBytes && !sameSize) {
      return { ok: false, reason: `${stat.size} bytes, over the ${maxFileBytes}-byte limit per file` };
    }
    // At most one byte past what could be kept: a process still writing to the file (one that left
    // the command's process group) cannot make this read grow.
    const bytes = await readAtMost(handle, Math.max(maxFileBytes, beforeBytes?.length ?? 0) + 1);
    if (beforeBytes !== undefined && bytes.equals(beforeBytes)) {
      // Unchanged, even if it would not pass the checks below (e.g. the limit was lowered since).
      return { ok: false };
    }
    if (bytes.length > maxFileBytes) {
      // Only part of it was read: the size it had when looked at, or more if it grew since.
      return { ok: false, reason: `${Math.max(stat.size, bytes.length)} bytes or more, over the ${maxFileBytes}-byte limit per file` };
    }
    if (bytes.includes(0)) {
      return { ok: false, reason: 'not text (contains NUL bytes)' };
    }
    try {
      return { ok: true, content: strictUtf8.decode(bytes) };
    } catch {
      return { ok: false, reason: 'not UTF-8 text' };
    }
  } catch (error) {
    return { ok: false, reason: `could not be read (${errorCode(error)})` };
  } finally {
    await handle.close();
  }
}

/** The file's first `most` bytes (all of it when shorter). */
async function readAtMost(handle: fs.FileHandle, most: number): Promise<Buffer> {
  const buffer = Buffer.allocUnsafe(most);
  let filled = 0;
  while (filled < most) {
    const { bytesRead } = await handle.read(buffer, filled, most - filled, filled);
    if (bytesRead === 0) {
      break;
    }
    filled += bytesRead;
  }
  return buffer.subarray(0, filled);
}

export function errorCode(error: unknown): string {
  if (typeof error === 'object' && error !== null && 'code' in error && typeof error.code === 'string') {
    return error.code;
  }
  return error instanceof Error ? error.message : String(error);
}

export function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
