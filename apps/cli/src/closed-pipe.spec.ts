import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { compileHook } from '../../../test/harness/harness';
import { exitQuietlyWhenPipeCloses } from './closed-pipe';

describe('the CLI when the pipe it writes to closes', () => {
  it('exits 0 on EPIPE, and lets any other stream error through', () => {
    const [stdout, stderr] = [new PassThrough(), new PassThrough()];
    const exits: number[] = [];
    exitQuietlyWhenPipeCloses([stdout, stderr], (code) => exits.push(code));
    stdout.emit('error', Object.assign(new Error('write EPIPE'), { code: 'EPIPE' }));
    expect(exits).toEqual([0]);
    expect(() => stderr.emit('error', Object.assign(new Error('write EIO'), { code: 'EIO' }))).toThrow('EIO');
  });

  it('a reader that closes before the CLI writes (`parley --help | head -0`) ends it quietly, status 0', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'parley-cli-pipe-'));
    try {
      const root = join(__dirname, '..', '..', '..');
      const child = spawn(process.execPath, ['-r', compileHook(dir), join(root, 'apps', 'cli', 'src', 'main.ts'), '--help'], {
        env: { ...process.env, PARLEY_HARNESS_ROOT: root, PARLEY_HARNESS_PARENT_PID: String(process.pid) },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      // Closed before the CLI (still compiling) writes its first byte.
      child.stdout.destroy();
      let stderr = '';
      child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
      const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
      expect(stderr).not.toContain('EPIPE');
      expect(code).toBe(0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 30_000);
});
