import { createHash } from 'node:crypto';
import type { AgentDefinition, Answer, AnswerBody, ApprovalPrompt, ErrorIssue } from '@parley/contracts';
import { safeCommandsInEffect, type SafeCommandInEffect } from '../shell/safe-commands';
import { errorResult, okResult } from '../tool-result';
import { answerApproval } from './approval.answer';
import { approvalPrompt } from './approval.prompt';
import { approvalVerdict, withApproverEdits } from './approval.result';
import { argsDigest, canonicalJson } from './args.digest';
import { coverWithoutAsking } from './call.policy';
import { describeCall, foldersOf, grantKey, grantMember, membersToLookUp } from './call.scope';
import { hasEffects, isApprovable, offeredTools, permissionOf } from './tool.permissions';

const sha256 = (text: string): string => createHash('sha256').update(text).digest('hex');

const promptFor = (tool: string, input: Record<string, unknown>, stage = 'main'): ApprovalPrompt =>
  approvalPrompt(tool, input, describeCall(tool, input), stage);

/** Runs answerApproval and returns both what it returned and the issues it pushed. */
const answer = (prompt: ApprovalPrompt, body: AnswerBody): { result: Answer | undefined; issues: ErrorIssue[] } => {
  const issues: ErrorIssue[] = [];
  const result = answerApproval(prompt, body, issues);
  return { result, issues };
};

const fieldsOf = (issues: readonly ErrorIssue[]): string[] => issues.map((issue) => issue.field);

const agent = (permissions: AgentDefinition['permissions'] = {}, tools: string[] = []): Pick<AgentDefinition, 'tools' | 'permissions'> => ({
  tools,
  permissions,
});

// ---------------------------------------------------------------------------------------------

describe('tool permissions', () => {
  it.each(['list_files', 'read_file', 'finish', 'ask_user_text', 'ask_user_choice', 'ask_user_confirm', 'edit_document', 'present_for_review'])(
    '%s is allowed by default',
    (tool) => {
      expect(permissionOf(agent(), tool)).toBe('allow');
      expect(hasEffects(tool)).toBe(false);
    },
  );

  it.each(['write_file', 'delete_file', 'shell', 'http_request'])('%s asks by default', (tool) => {
    expect(permissionOf(agent(), tool)).toBe('ask');
    expect(hasEffects(tool)).toBe(true);
  });

  it('an explicit permission overrides the default either way', () => {
    const configured = agent({ shell: 'allow', write_file: 'deny', read_file: 'ask', list_files: 'deny' });
    expect(permissionOf(configured, 'shell')).toBe('allow');
    expect(permissionOf(configured, 'write_file')).toBe('deny');
    expect(permissionOf(configured, 'read_file')).toBe('ask');
    expect(permissionOf(configured, 'list_files')).toBe('deny');
    // Tools not named keep their default.
    expect(permissionOf(configured, 'delete_file')).toBe('ask');
    expect(permissionOf(configured, 'ask_user_text')).toBe('allow');
  });

  it('offeredTools drops denied tools and keeps the order of the rest', () => {
    const configured = agent({ shell: 'deny', write_file: 'ask', read_file: 'allow' }, [
      'read_file',
      'shell',
      'write_file',
      'http_request',
      'finish',
    ]);
    expect(offeredTools(configured)).toEqual(['read_file', 'write_file', 'http_request', 'finish']);
  });

  it('offeredTools offers everything when nothing is denied, and nothing when everything is', () => {
    expect(offeredTools(agent({}, ['shell', 'finish']))).toEqual(['shell', 'finish']);
    expect(offeredTools(agent({ shell: 'deny', finish: 'deny' }, ['shell', 'finish']))).toEqual([]);
  });

  it('only workspace, shell and http tools are approvable', () => {
    for (const tool of ['list_files', 'read_file', 'write_file', 'delete_file', 'shell', 'http_request']) {
      expect(isApprovable(tool)).toBe(true);
    }
    for (const tool of ['finish', 'ask_user_text', 'ask_user_choice', 'ask_user_confirm', 'edit_document', 'present_for_review', 'nope']) {
      expect(isApprovable(tool)).toBe(false);
    }
  });
});

// ---------------------------------------------------------------------------------------------

describe('canonicalJson and argsDigest', () => {
  it('sorts keys at every level, so key order does not matter', () => {
    const a = { b: 1, a: { d: [3, { z: 1, y: 2 }], c: 'x' } };
    const b = { a: { c: 'x', d: [3, { y: 2, z: 1 }] }, b: 1 };
    expect(canonicalJson(a)).toBe(canonicalJson(b));
    expect(canonicalJson(a)).toBe('{"a":{"c":"x","d":[3,{"y":2,"z":1}]},"b":1}');
  });

  it('keeps the order of array items', () => {
    expect(canonicalJson({ list: [2, 1, 3] })).toBe('{"list":[2,1,3]}');
    expect(canonicalJson({ list: [2, 1, 3] })).not.toBe(canonicalJson({ list: [1, 2, 3] }));
    expect(canonicalJson([{ b: 1, a: 2 }, 'x'])).toBe('[{"a":2,"b":1},"x"]');
  });

  it('leaves scalars and null as JSON does', () => {
    expect(canonicalJson(null)).toBe('null');
    expect(canonicalJson('text')).toBe('"text"');
    expect(canonicalJson(3)).toBe('3');
    expect(canonicalJson({ a: null, b: true })).toBe('{"a":null,"b":true}');
  });

  it('argsDigest is the SHA-256 hex of the canonical JSON', () => {
    const input = { path: 'notes/a.md', content: 'hi', meta: { z: [1, 2], a: null } };
    const expected = sha256('{"content":"hi","meta":{"a":null,"z":[1,2]},"path":"notes/a.md"}');
    expect(argsDigest(input)).toBe(expected);
    expect(argsDigest(input)).toMatch(/^[0-9a-f]{64}$/);
    expect(argsDigest({ meta: { a: null, z: [1, 2] }, path: 'notes/a.md', content: 'hi' })).toBe(expected);
    expect(argsDigest({ ...input, content: 'other' })).not.toBe(expected);
  });
});

// ---------------------------------------------------------------------------------------------

describe('describeCall', () => {
  describe('shell', () => {
    it('a reusable line needs one grant per command and offers each distinct command once', () => {
      const scope = describeCall('shell', { command: 'ls -la && git status && ls notes' });
      expect(scope.telling).toEqual({ label: 'command', value: 'ls -la && git status && ls notes' });
      expect(scope.summary).toBe('Run shell command: ls -la && git status && ls notes');
      expect(scope.needs.map((need) => need.keys)).toEqual([['shell:cmd:ls'], ['shell:cmd:git status'], ['shell:cmd:ls']]);
      expect(scope.needs.map((need) => need.command?.program)).toEqual(['ls', 'git', 'ls']);
      expect(scope.needs[0].command?.args).toEqual(['-la']);
      expect(scope.offer).toEqual({
        reusable: true,
        keys: ['shell:cmd:ls', 'shell:cmd:git status'],
        description: '`ls` and `git status` (any arguments inside the workspace)',
      });
    });

    it('keys npm scripts by script name', () => {
      const scope = describeCall('shell', { command: 'npm run build' });
      expect(scope.offer).toMatchObject({ reusable: true, keys: ['shell:cmd:npm run build'] });
    });

    it.each([
      ['ls $(pwd)', 'command substitution'],
      ['cat a.md > out.md', 'writes to a file'],
      ['bash -c ls', 'runs other commands'],
      ['X=1 ls', 'sets variables'],
    ])('a non-reusable line (%j) offers no grant, says why, and needs nothing', (command, why) => {
      const scope = describeCall('shell', { command });
      expect(scope.needs).toEqual([]);
      expect(scope.telling).toEqual({ label: 'command', value: command });
      expect(scope.offer.reusable).toBe(false);
      if (scope.offer.reusable) {
        return;
      }
      expect(scope.offer.reason).toMatch(/^This command offers no reusable grant: /);
      expect(scope.offer.reason).toContain(why);
    });
  });

  describe('file tools', () => {
    it('foldersOf lists the workspace and every enclosing folder', () => {
      expect(foldersOf('a/b/c.md')).toEqual(['', 'a/', 'a/b/']);
      expect(foldersOf('top.md')).toEqual(['']);
    });

    it.each(['read_file', 'write_file', 'delete_file'])('%s needs the path or one of its folders', (tool) => {
      const scope = describeCall(tool, { path: 'notes/2024/plan.md', content: 'x' });
      expect(scope.telling).toEqual({ label: 'path', value: 'notes/2024/plan.md' });
      expect(scope.summary).toBe(`${tool} notes/2024/plan.md`);
      expect(scope.needs).toEqual([
        {
          keys: [`${tool}:path:notes/2024/plan.md`, `${tool}:dir:`, `${tool}:dir:notes/`, `${tool}:dir:notes/2024/`],
        },
      ]);
      expect(scope.offer).toEqual({
        reusable: true,
        keys: [`${tool}:path:notes/2024/plan.md`],
        description: `${tool} on notes/2024/plan.md`,
        directories: foldersOf('notes/2024/plan.md'),
      });
    });

    it('a file at the top offers only the whole workspace as a folder', () => {
      const scope = describeCall('write_file', { path: 'a.md', content: '' });
      expect(scope.needs[0].keys).toEqual(['write_file:path:a.md', 'write_file:dir:']);
      expect(scope.offer).toMatchObject({ directories: [''] });
    });
  });

  describe('http_request', () => {
    it('keys by method and host, and tells the host', () => {
      const scope = describeCall('http_request', { method: 'POST', url: 'https://API.Example.com/v1/items?q=1', body: '{}' });
      expect(scope.telling).toEqual({ label: 'host', value: 'api.example.com' });
      expect(scope.summary).toBe('HTTP POST https://api.example.com/v1/items?q=1');
      expect(scope.needs).toEqual([{ keys: ['http_request:host:POST api.example.com'] }]);
      expect(scope.offer).toEqual({
        reusable: true,
        keys: ['http_request:host:POST api.example.com'],
        description: 'POST requests to api.example.com',
      });
    });

    it('defaults to GET and keeps a non-default port in the host', () => {
      const scope = describeCall('http_request', { url: 'http://127.0.0.1:8080/health' });
      expect(scope.telling).toEqual({ label: 'host', value: '127.0.0.1:8080' });
      expect(scope.needs).toEqual([{ keys: [grantKey.host('GET', '127.0.0.1:8080')] }]);
      expect(scope.offer).toMatchObject({ keys: ['http_request:host:GET 127.0.0.1:8080'], description: 'GET requests to 127.0.0.1:8080' });
    });

    it('GET and POST to the same host are different grants', () => {
      const get = describeCall('http_request', { method: 'GET', url: 'https://a.example/x' });
      const post = describeCall('http_request', { method: 'POST', url: 'https://a.example/x' });
      expect(get.needs[0].keys).not.toEqual(post.needs[0].keys);
    });
  });

  it('another tool (list_files) is one grant for any arguments', () => {
    const scope = describeCall('list_files', {});
    expect(scope).toEqual({
      telling: { label: 'path', value: '(the whole workspace)' },
      summary: 'Call list_files',
      needs: [{ keys: ['list_files:all'] }],
      offer: { reusable: true, keys: ['list_files:all'], description: 'list_files (any arguments)' },
    });
  });

  it('membersToLookUp lists run and stage members of every key once', () => {
    const scope = describeCall('shell', { command: 'ls && ls -a && pwd' });
    expect(membersToLookUp(scope.needs, 'main')).toEqual([
      'run|shell:cmd:ls',
      'stage|main|shell:cmd:ls',
      'run|shell:cmd:pwd',
      'stage|main|shell:cmd:pwd',
    ]);
    expect(grantMember.run('k')).toBe('run|k');
    expect(grantMember.stage('s', 'k')).toBe('stage|s|k');
  });
});

// ---------------------------------------------------------------------------------------------

describe('approvalPrompt', () => {
  it('carries the call, its telling argument, the stage and the offer', () => {
    const input = { command: 'git status' };
    const scope = describeCall('shell', input);
    expect(approvalPrompt('shell', input, scope, 'review')).toEqual({
      kind: 'tool_approval',
      prompt: 'Run shell command: git status',
      tool: 'shell',
      input,
      telling: { label: 'command', value: 'git status' },
      stage: 'review',
      grant: scope.offer,
    });
  });
});

// ---------------------------------------------------------------------------------------------

describe('coverWithoutAsking', () => {
  const NO_SAFE: SafeCommandInEffect[] = [];
  const DEFAULT_SAFE = safeCommandsInEffect({ global: [] });
  const cover = (tool: string, input: Record<string, unknown>, granted: string[], safe: readonly SafeCommandInEffect[] = NO_SAFE, stage = 'main') =>
    coverWithoutAsking(describeCall(tool, input), input, { stage, granted: new Set(granted), safe });

  it('every need granted for the run → grant, with the members that covered it', () => {
    const input = { command: 'git status && npm run build' };
    const covered = cover('shell', input, ['run|shell:cmd:git status', 'run|shell:cmd:npm run build', 'run|shell:cmd:rm']);
    expect(covered).toEqual({
      basis: 'grant',
      covered: ['run|shell:cmd:git status', 'run|shell:cmd:npm run build'],
      argsDigest: argsDigest(input),
    });
  });

  it('a grant for the current stage covers', () => {
    const input = { command: 'git status' };
    expect(cover('shell', input, ['stage|main|shell:cmd:git status'])).toEqual({
      basis: 'grant',
      covered: ['stage|main|shell:cmd:git status'],
      argsDigest: argsDigest(input),
    });
  });

  it("a grant for another stage does not cover", () => {
    expect(cover('shell', { command: 'git status' }, ['stage|review|shell:cmd:git status'])).toBeNull();
    expect(cover('shell', { command: 'git status' }, ['stage|review|shell:cmd:git status'], NO_SAFE, 'review')).not.toBeNull();
  });

  it('a command repeated on the line is listed once', () => {
    const covered = cover('shell', { command: 'git status && git status -s' }, ['run|shell:cmd:git status']);
    expect(covered?.covered).toEqual(['run|shell:cmd:git status']);
  });

  it('safe commands and granted commands together → grant', () => {
    const input = { command: 'cat notes/a.md && git status' };
    const covered = cover('shell', input, ['run|shell:cmd:git status'], DEFAULT_SAFE);
    expect(covered?.basis).toBe('grant');
    expect(covered?.covered).toContain('run|shell:cmd:git status');
    expect(covered?.argsDigest).toBe(argsDigest(input));
  });

  it('only safe commands → safe_command', () => {
    const input = { command: 'cat notes/a.md | wc -l && ls' };
    const covered = cover('shell', input, [], DEFAULT_SAFE);
    expect(covered?.basis).toBe('safe_command');
    expect(covered?.argsDigest).toBe(argsDigest(input));
    // The commands' keys, never their arguments (which could hold anything).
    expect(covered?.covered).toEqual(['cat', 'wc', 'ls']);
  });

  it('an agent or global entry with a subcommand covers that subcommand only', () => {
    const safe = safeCommandsInEffect({ global: ['git status'] });
    expect(cover('shell', { command: 'git status --short' }, [], safe)?.basis).toBe('safe_command');
    expect(cover('shell', { command: 'git push' }, [], safe)).toBeNull();
  });

  it('a grant or a safe command never covers arguments reaching outside the workspace', () => {
    expect(cover('shell', { command: 'cat notes.md' }, ['run|shell:cmd:cat'])?.basis).toBe('grant');
    expect(cover('shell', { command: 'cat /proc/1/environ' }, ['run|shell:cmd:cat'])).toBeNull();
    expect(cover('shell', { command: 'cat ../other/x' }, ['run|shell:cmd:cat'], DEFAULT_SAFE)).toBeNull();
    expect(cover('shell', { command: 'grep -r KEY $HOME' }, [], DEFAULT_SAFE)).toBeNull();
  });

  it('one uncovered command → null (a person must approve)', () => {
    expect(cover('shell', { command: 'cat a.md && rm a.md' }, [], DEFAULT_SAFE)).toBeNull();
    expect(cover('shell', { command: 'git status && git push' }, ['run|shell:cmd:git status'], DEFAULT_SAFE)).toBeNull();
  });

  it('nothing granted and nothing safe → null', () => {
    expect(cover('shell', { command: 'ls' }, [])).toBeNull();
  });

  it('a non-reusable line → null even when every program on it is safe or granted', () => {
    expect(cover('shell', { command: 'cat a.md > b.md' }, ['run|shell:cmd:cat'], DEFAULT_SAFE)).toBeNull();
    expect(cover('shell', { command: 'echo $(ls)' }, ['run|shell:cmd:echo', 'run|shell:cmd:ls'], DEFAULT_SAFE)).toBeNull();
  });

  it('a command written with a path is not a safe command', () => {
    expect(cover('shell', { command: '/bin/ls' }, [], DEFAULT_SAFE)).toBeNull();
  });

  it('file tools are covered by the exact path or any enclosing folder, for the run or the stage', () => {
    const input = { path: 'notes/2024/plan.md', content: 'x' };
    expect(cover('write_file', input, ['run|write_file:path:notes/2024/plan.md'])?.covered).toEqual(['run|write_file:path:notes/2024/plan.md']);
    expect(cover('write_file', input, ['stage|main|write_file:dir:notes/'])?.covered).toEqual(['stage|main|write_file:dir:notes/']);
    expect(cover('write_file', input, ['run|write_file:dir:'])?.basis).toBe('grant');
    expect(cover('write_file', input, ['run|write_file:dir:other/'])).toBeNull();
    // A grant for another tool on the same path does not cover.
    expect(cover('write_file', input, ['run|delete_file:path:notes/2024/plan.md'])).toBeNull();
  });

  it('http requests are covered by a grant for that method and host only', () => {
    const input = { method: 'GET', url: 'https://api.example.com/x' };
    expect(cover('http_request', input, ['run|http_request:host:GET api.example.com'])?.basis).toBe('grant');
    expect(cover('http_request', input, ['run|http_request:host:POST api.example.com'])).toBeNull();
    expect(cover('http_request', input, ['run|http_request:host:GET other.example.com'])).toBeNull();
  });
});

// ---------------------------------------------------------------------------------------------

describe('answerApproval', () => {
  const shellPrompt = promptFor('shell', { command: 'git status' });
  const writeInput = { path: 'notes/2024/plan.md', content: 'draft' };
  const writePrompt = promptFor('write_file', writeInput);

  it('requires a decision', () => {
    const { result, issues } = answer(shellPrompt, {});
    expect(result).toBeUndefined();
    expect(fieldsOf(issues)).toEqual(['decision']);
  });

  describe('deny', () => {
    it('records the trimmed reason, no grants, and the digest of the prompt input', () => {
      const { result, issues } = answer(shellPrompt, { decision: 'deny', reason: '  not now  ' });
      expect(issues).toEqual([]);
      expect(result).toEqual({
        kind: 'tool_approval',
        decision: 'deny',
        reason: 'not now',
        edited: false,
        grants: [],
        argsDigest: argsDigest(shellPrompt.input),
      });
    });

    it('leaves out a missing or blank reason', () => {
      expect(answer(shellPrompt, { decision: 'deny' }).result).not.toHaveProperty('reason');
      expect(answer(shellPrompt, { decision: 'deny', reason: '   ' }).result).not.toHaveProperty('reason');
    });

    it('refuses input and directory, naming each', () => {
      const withInput = answer(shellPrompt, { decision: 'deny', input: { command: 'ls' } });
      expect(withInput.result).toBeUndefined();
      expect(fieldsOf(withInput.issues)).toEqual(['input']);

      const withBoth = answer(writePrompt, { decision: 'deny', input: writeInput, directory: 'notes' });
      expect(withBoth.result).toBeUndefined();
      expect(fieldsOf(withBoth.issues)).toEqual(['input', 'directory']);
    });
  });

  it('refuses a reason with an allow decision', () => {
    for (const decision of ['allow_once', 'allow_stage', 'allow_run'] as const) {
      const { result, issues } = answer(shellPrompt, { decision, reason: 'because' });
      expect(result).toBeUndefined();
      expect(fieldsOf(issues)).toEqual(['reason']);
    }
  });

  describe('allow_once', () => {
    it('without an edit runs the prompt input unchanged and grants nothing', () => {
      const { result, issues } = answer(shellPrompt, { decision: 'allow_once' });
      expect(issues).toEqual([]);
      expect(result).toEqual({
        kind: 'tool_approval',
        decision: 'allow_once',
        input: { command: 'git status' },
        edited: false,
        grants: [],
        argsDigest: argsDigest({ command: 'git status' }),
      });
    });

    it('with an edit that changes the arguments runs the edit and digests it', () => {
      const edit = { path: 'notes/2024/plan.md', content: 'final' };
      const { result, issues } = answer(writePrompt, { decision: 'allow_once', input: edit });
      expect(issues).toEqual([]);
      expect(result).toEqual({ kind: 'tool_approval', decision: 'allow_once', input: edit, edited: true, grants: [], argsDigest: argsDigest(edit) });
      expect(result?.kind === 'tool_approval' && result.argsDigest).not.toBe(argsDigest(writeInput));
    });

    it('with an edit equal to the original (keys in another order) is not edited', () => {
      const { result, issues } = answer(writePrompt, { decision: 'allow_once', input: { content: 'draft', path: 'notes/2024/plan.md' } });
      expect(issues).toEqual([]);
      expect(result).toMatchObject({ decision: 'allow_once', edited: false, grants: [], argsDigest: argsDigest(writeInput) });
    });

    it('an edit equal to the model arguments of a tool whose schema adds a default runs the checked arguments', () => {
      // The prompt holds the model's arguments as sent (no method); the schema adds method GET.
      const prompt = promptFor('http_request', { url: 'https://api.example.com/x' });
      const { result, issues } = answer(prompt, { decision: 'allow_once', input: { url: 'https://api.example.com/x' } });
      expect(issues).toEqual([]);
      expect(result).toMatchObject({ decision: 'allow_once', input: { method: 'GET', url: 'https://api.example.com/x' }, grants: [], edited: false });
    });

    it('an edit that does not fit the tool schema is refused, naming the bad field', () => {
      const { result, issues } = answer(writePrompt, { decision: 'allow_once', input: { path: 'notes/a.md' } });
      expect(result).toBeUndefined();
      expect(fieldsOf(issues)).toEqual(['input.content']);

      const wrongType = answer(shellPrompt, { decision: 'allow_once', input: { command: 42 } });
      expect(wrongType.result).toBeUndefined();
      expect(fieldsOf(wrongType.issues)).toEqual(['input.command']);
      expect(wrongType.issues[0].reason).toMatch(/must be a string/);

      const unknown = answer(shellPrompt, { decision: 'allow_once', input: { command: 'ls', cwd: '/' } });
      expect(unknown.issues).toEqual([{ field: 'input.cwd', reason: 'unknown field' }]);
    });

    it('refuses a directory', () => {
      const { result, issues } = answer(writePrompt, { decision: 'allow_once', directory: 'notes' });
      expect(result).toBeUndefined();
      expect(fieldsOf(issues)).toEqual(['directory']);
    });
  });

  describe('allow_run and allow_stage', () => {
    it('allow_run grants each offered key for the run', () => {
      const prompt = promptFor('shell', { command: 'git status && npm run build && git status -s' });
      const { result, issues } = answer(prompt, { decision: 'allow_run' });
      expect(issues).toEqual([]);
      expect(result).toEqual({
        kind: 'tool_approval',
        decision: 'allow_run',
        input: prompt.input,
        edited: false,
        grants: ['run|shell:cmd:git status', 'run|shell:cmd:npm run build'],
        argsDigest: argsDigest(prompt.input),
      });
    });

    it('allow_stage grants for the prompt stage', () => {
      const prompt = promptFor('shell', { command: 'git status' }, 'review');
      const { result, issues } = answer(prompt, { decision: 'allow_stage' });
      expect(issues).toEqual([]);
      expect(result).toMatchObject({ decision: 'allow_stage', grants: ['stage|review|shell:cmd:git status'], edited: false });
    });

    it('a file tool without a directory grants the exact path', () => {
      expect(answer(writePrompt, { decision: 'allow_run' }).result).toMatchObject({ grants: ['run|write_file:path:notes/2024/plan.md'] });
      expect(answer(writePrompt, { decision: 'allow_stage' }).result).toMatchObject({ grants: ['stage|main|write_file:path:notes/2024/plan.md'] });
    });

    it('http grants the method and host', () => {
      const prompt = promptFor('http_request', { method: 'GET', url: 'https://api.example.com/x' });
      expect(answer(prompt, { decision: 'allow_run' }).result).toMatchObject({ grants: ['run|http_request:host:GET api.example.com'] });
    });

    it('refuses a scoped approval of a non-reusable command, pointing at allow_once', () => {
      const prompt = promptFor('shell', { command: 'ls > out.txt' });
      for (const decision of ['allow_run', 'allow_stage'] as const) {
        const { result, issues } = answer(prompt, { decision });
        expect(result).toBeUndefined();
        expect(fieldsOf(issues)).toEqual(['decision']);
        expect(issues[0].reason).toMatch(/^This command offers no reusable grant: .*Use allow_once\.$/);
      }
      expect(answer(prompt, { decision: 'allow_once' }).issues).toEqual([]);
    });

    it('grants follow the edited call: an edit that makes the command non-reusable cannot be allowed for the run', () => {
      const { result, issues } = answer(shellPrompt, { decision: 'allow_run', input: { command: 'git status; curl x | sh' } });
      expect(result).toBeUndefined();
      expect(fieldsOf(issues)).toEqual(['decision']);
      // The same edit is fine once.
      expect(answer(shellPrompt, { decision: 'allow_once', input: { command: 'git status; curl x | sh' } }).result).toMatchObject({ edited: true });
    });

    it('grants follow the edited call: an edited command is granted, not the original', () => {
      const { result, issues } = answer(shellPrompt, { decision: 'allow_run', input: { command: 'git diff' } });
      expect(issues).toEqual([]);
      expect(result).toMatchObject({
        input: { command: 'git diff' },
        edited: true,
        grants: ['run|shell:cmd:git diff'],
        argsDigest: argsDigest({ command: 'git diff' }),
      });
    });

    it.each([
      ['notes', 'notes/'],
      ['notes/', 'notes/'],
      ['./notes/', 'notes/'],
      ['  notes  ', 'notes/'],
      ['notes/2024', 'notes/2024/'],
      ['', ''],
      ['.', ''],
      ['/', ''],
    ])('directory %j of a file tool grants the folder %j', (directory, folder) => {
      const run = answer(writePrompt, { decision: 'allow_run', directory });
      expect(run.issues).toEqual([]);
      expect(run.result).toMatchObject({ grants: [`run|write_file:dir:${folder}`], edited: false });
      const stage = answer(writePrompt, { decision: 'allow_stage', directory });
      expect(stage.result).toMatchObject({ grants: [`stage|main|write_file:dir:${folder}`] });
    });

    it.each(['other', 'notes/2025', 'notes/2024/plan.md', 'note'])('directory %j that does not hold the file is refused', (directory) => {
      const { result, issues } = answer(writePrompt, { decision: 'allow_run', directory });
      expect(result).toBeUndefined();
      expect(fieldsOf(issues)).toEqual(['directory']);
      expect(issues[0].reason).toContain('"notes/"');
    });

    it('the directory must hold the edited path', () => {
      const edit = { path: 'other/plan.md', content: 'draft' };
      expect(fieldsOf(answer(writePrompt, { decision: 'allow_run', input: edit, directory: 'notes' }).issues)).toEqual(['directory']);
      expect(answer(writePrompt, { decision: 'allow_run', input: edit, directory: 'other' }).result).toMatchObject({
        grants: ['run|write_file:dir:other/'],
        edited: true,
      });
    });

    it('refuses a directory for a tool that is not a file tool', () => {
      const shell = answer(shellPrompt, { decision: 'allow_run', directory: 'notes' });
      expect(shell.result).toBeUndefined();
      expect(fieldsOf(shell.issues)).toEqual(['directory']);
      expect(shell.issues[0].reason).toContain('shell');

      const http = answer(promptFor('http_request', { method: 'GET', url: 'https://api.example.com/x' }), { decision: 'allow_stage', directory: '' });
      expect(fieldsOf(http.issues)).toEqual(['directory']);
    });
  });
});

// ---------------------------------------------------------------------------------------------

describe('approvalVerdict', () => {
  const errorText = (verdict: ReturnType<typeof approvalVerdict>): string => {
    if (verdict.allowed) {
      throw new Error('expected a denial');
    }
    expect(verdict.result.isError).toBe(true);
    return (JSON.parse(verdict.result.content) as { ok: boolean; error: string }).error;
  };

  it('an expired approval is denied, saying nobody approved it', () => {
    expect(errorText(approvalVerdict('expired', undefined))).toMatch(/nobody approved this call before its deadline/);
  });

  it('a cancelled approval is denied, saying the run was stopped', () => {
    expect(errorText(approvalVerdict('cancelled', undefined))).toMatch(/run was stopped/);
  });

  it('an answered deny shows the reason', () => {
    const deny: Answer = { kind: 'tool_approval', decision: 'deny', reason: 'too risky', edited: false, grants: [], argsDigest: 'd' };
    const message = errorText(approvalVerdict('answered', deny));
    expect(message).toContain('denied by the approver: too risky');
    expect(message).toContain('Do not retry');
  });

  it('an answered deny without a reason says only that it was denied', () => {
    const deny: Answer = { kind: 'tool_approval', decision: 'deny', edited: false, grants: [], argsDigest: 'd' };
    expect(errorText(approvalVerdict('answered', deny))).toMatch(/^denied by the approver\. Do not retry/);
  });

  it('an answered allow runs with the recorded input and says whether it was edited', () => {
    const allow: Answer = { kind: 'tool_approval', decision: 'allow_run', input: { command: 'ls' }, edited: true, grants: ['run|shell:cmd:ls'], argsDigest: 'd' };
    expect(approvalVerdict('answered', allow)).toEqual({ allowed: true, input: { command: 'ls' }, edited: true });
    const once: Answer = { kind: 'tool_approval', decision: 'allow_once', input: { command: 'ls' }, edited: false, grants: [], argsDigest: 'd' };
    expect(approvalVerdict('answered', once)).toEqual({ allowed: true, input: { command: 'ls' }, edited: false });
  });

  it('an answer that cannot be read denies the call', () => {
    expect(errorText(approvalVerdict('answered', undefined))).toMatch(/could not be read/);
    expect(errorText(approvalVerdict('answered', { kind: 'confirm', confirmed: true }))).toMatch(/could not be read/);
    const noInput: Answer = { kind: 'tool_approval', decision: 'allow_once', edited: false, grants: [], argsDigest: 'd' };
    expect(errorText(approvalVerdict('answered', noInput))).toMatch(/could not be read/);
  });
});

describe('withApproverEdits', () => {
  const ran = { command: 'git diff' };

  it('adds a note and the arguments to a JSON object result', () => {
    const edited = withApproverEdits(okResult({ stdout: 'x' }), ran);
    expect(edited.isError).toBe(false);
    const body = JSON.parse(edited.content);
    expect(body).toMatchObject({ ok: true, stdout: 'x' });
    expect(body.approver_edited.arguments).toEqual(ran);
    expect(body.approver_edited.note).toMatch(/approver changed the arguments/);
  });

  it('wraps non-JSON content as result', () => {
    const edited = withApproverEdits({ content: 'plain text', isError: false }, ran);
    expect(JSON.parse(edited.content)).toEqual({ result: 'plain text', approver_edited: expect.objectContaining({ arguments: ran }) });
  });

  it('wraps JSON that is not an object as result', () => {
    expect(JSON.parse(withApproverEdits({ content: '[1,2]', isError: false }, ran).content)).toMatchObject({ result: [1, 2] });
    expect(JSON.parse(withApproverEdits({ content: '"s"', isError: false }, ran).content)).toMatchObject({ result: 's' });
  });

  it('keeps isError', () => {
    const failed = withApproverEdits(errorResult('boom'), ran);
    expect(failed.isError).toBe(true);
    expect(JSON.parse(failed.content)).toMatchObject({ ok: false, error: 'boom', approver_edited: { arguments: ran } });
    expect(withApproverEdits(errorResult('soft', false), ran).isError).toBe(false);
  });
});
