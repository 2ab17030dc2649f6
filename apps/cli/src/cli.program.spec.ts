import { PassThrough } from 'node:stream';
import { verifyToken, loadConfig, signToken } from '@parley/platform';
import { ForbiddenError, ParleyError, RateLimitedError, type AuditEntry, type Interaction, type Run } from '@parley/contracts';
import { FakeGateway } from './testing/fake.gateway';
import { CapturedOutput, CliSession, waitFor } from './testing/cli.harness';
import { CliContext } from './cli.context';
import { followRun } from './commands/run.command';

const CHOICE = { kind: 'multiple_choice' as const, prompt: 'Which colour?', options: [{ label: 'Red' }, { label: 'Green', description: 'calm' }], multi: false };

describe('parley CLI (against a fake gateway)', () => {
  let gateway: FakeGateway;
  let env: Record<string, string | undefined>;

  beforeEach(async () => {
    gateway = new FakeGateway();
    await gateway.start();
    env = { PARLEY_URL: gateway.url };
  });

  afterEach(async () => {
    // A test that failed half-way may leave `parley run` following a run; ending it lets jest exit.
    for (const run of gateway.runs.values()) {
      if (!['finished', 'failed', 'cancelled'].includes(run.status)) {
        gateway.fail(run.id, 'the test ended');
      }
    }
    await gateway.stop();
  });

  const cli = (...argv: string[]): CliSession => new CliSession(argv, env);
  const startedRun = async (): Promise<Run> => {
    await waitFor(() => gateway.runs.size > 0, 'a run to be created');
    return [...gateway.runs.values()][0];
  };

  describe('run', () => {
    it('streams text and tools, asks a question, re-asks after invalid input and a 422, and exits 0 with the summary', async () => {
      gateway.rejectAnswers = 1;
      gateway.onRunStarted = (run) => {
        gateway.say(run.id, 'Hello ', 'world');
        gateway.tool(run.id, 'read_file', { path: 'notes.md' }, 'line one\nline two');
        gateway.ask(run.id, CHOICE);
      };
      gateway.onAnswered = (interaction) => gateway.finish(interaction.runId, 'picked a colour');
      const session = cli('run', 'echo', 'pick', 'a', 'colour');
      session.type('5', '1', '1');

      expect(await session.exit).toBe(0);
      const out = session.out;
      expect(out).toMatch(/run \S+ started \(agent echo\)/);
      expect(out).toContain('Hello world\n');
      expect(out.match(/Hello world/g)).toHaveLength(1);
      expect(out).toContain('→ read_file {"path":"notes.md"}');
      expect(out).toContain('← read_file: line one line two');
      expect(out).toContain('? Which colour?');
      expect(out).toContain('1) Green — calm');
      expect(out).toContain('there is no option 5 (choose 0-1)');
      expect(out).toContain('refused by the test gateway — please answer again');
      expect(out).toContain('✓ answer sent');
      expect(out).toContain('✓ run finished (finish): picked a colour');
      expect(gateway.answers.map((a) => [a.via, a.body, a.accepted])).toEqual([
        ['socket', { choice: 1 }, false],
        ['socket', { choice: 1 }, true],
      ]);
      const run = [...gateway.runs.values()][0];
      expect(run).toMatchObject({ task: 'pick a colour', trigger: 'chat', unattended: false });
    });

    it('collects an edited document and a review verdict with feedback', async () => {
      gateway.onRunStarted = (run) => {
        gateway.ask(run.id, { kind: 'edit_text', prompt: 'Fix the draft', document: 'old text' });
      };
      gateway.onAnswered = (interaction) => {
        if (interaction.prompt.kind === 'edit_text') {
          gateway.ask(interaction.runId, { kind: 'review', prompt: 'Release notes', markdown: '# v2\n- faster' });
        } else {
          gateway.finish(interaction.runId);
        }
      };
      const session = cli('run', 'echo', 'write notes');
      session.type('new line 1', 'new line 2', '.', 'n', 'needs a changelog link');

      expect(await session.exit).toBe(0);
      expect(session.out).toContain('old text');
      expect(session.out).toContain('# v2\n- faster');
      expect(gateway.answers.map((a) => a.body)).toEqual([{ text: 'new line 1\nnew line 2' }, { approved: false, feedback: 'needs a changelog link' }]);
    });

    it('keeps an edit_text document as is on an empty first line, and confirms with y', async () => {
      gateway.onRunStarted = (run) => gateway.ask(run.id, { kind: 'edit_text', prompt: 'Edit?', document: 'keep me' });
      gateway.onAnswered = (interaction) => {
        if (interaction.prompt.kind === 'edit_text') {
          gateway.ask(interaction.runId, { kind: 'confirm', prompt: 'Ship it?' });
        } else {
          gateway.finish(interaction.runId);
        }
      };
      const session = cli('run', 'echo', 'edit');
      session.type('', 'maybe', 'y');

      expect(await session.exit).toBe(0);
      expect(session.out).toContain('answer y or n');
      expect(gateway.answers.map((a) => a.body)).toEqual([{ text: 'keep me' }, { confirmed: true }]);
    });

    it('answers tool approvals in the terminal: once, for the run, and with edited arguments for the run', async () => {
      const next: Array<[string, Record<string, unknown>]> = [
        ['write_file', { path: 'notes/a.md', content: 'hi' }],
        ['shell', { command: 'git push origin main' }],
      ];
      gateway.onRunStarted = (run) => gateway.askApproval(run.id, 'shell', { command: 'ls && git status' });
      gateway.onAnswered = (interaction) => {
        const call = next.shift();
        if (call === undefined) {
          gateway.finish(interaction.runId, 'pushed');
        } else {
          gateway.askApproval(interaction.runId, ...call);
        }
      };
      const session = cli('run', 'echo', 'ship it');
      session.type('o', 'yes', 'r', 'e', '{"command": "git push --dry-run origin main"}', 'r');

      expect(await session.exit).toBe(0);
      expect(session.out).toContain('? Run shell command: ls && git status');
      expect(session.out).toContain('  Command: ls && git status\n  Arguments:\n    {\n      "command": "ls && git status"\n    }');
      expect(session.out).toContain('For this run: allows `ls` and `git status` (any arguments inside the workspace) for the rest of the run.');
      expect(session.out).toContain('  Path: notes/a.md');
      expect(session.out).toContain('answer o (once), s (this stage), r (this run), e (edit) or d (deny)');
      expect(session.out).toContain('✓ run finished (finish): pushed');
      expect(gateway.answers.map((a) => [a.body, a.accepted])).toEqual([
        [{ decision: 'allow_once' }, true],
        [{ decision: 'allow_run' }, true],
        [{ decision: 'allow_run', input: { command: 'git push --dry-run origin main' } }, true],
      ]);
      const answers = [...gateway.interactions.values()].map((interaction) => interaction.answer);
      expect(answers[1]).toMatchObject({ decision: 'allow_run', grants: ['run|write_file:path:notes/a.md'], edited: false });
      expect(answers[2]).toMatchObject({ decision: 'allow_run', edited: true, input: { command: 'git push --dry-run origin main' } });
    });

    it('denies an approval with a reason after the gateway refused the edited arguments', async () => {
      gateway.onRunStarted = (run) => gateway.askApproval(run.id, 'shell', { command: 'rm -rf $(pwd)' });
      gateway.onAnswered = (interaction) => gateway.finish(interaction.runId, 'gave up');
      const session = cli('run', 'echo', 'clean up');
      session.type('r', 'e', '{"cmd": "ls"}', 'o', 'd', 'too risky');

      expect(await session.exit).toBe(0);
      expect(session.out).toContain('No reusable grant: This command offers no reusable grant');
      expect(session.out).toContain('this call offers no reusable grant; answer o (once), e (edit) or d (deny)');
      expect(session.out).toMatch(/! invalid answer: input\.command: is required; input\.cmd: unknown field — please answer again\./);
      expect(gateway.answers.map((a) => [a.body, a.accepted])).toEqual([
        [{ decision: 'allow_once', input: { cmd: 'ls' } }, false],
        [{ decision: 'deny', reason: 'too risky' }, true],
      ]);
      expect([...gateway.interactions.values()][0].answer).toMatchObject({ decision: 'deny', reason: 'too risky', edited: false });
    });

    it('says how an approval was decided elsewhere', async () => {
      gateway.onRunStarted = (run) => gateway.askApproval(run.id, 'shell', { command: 'make test' });
      const session = cli('run', 'echo', 'build');
      await waitFor(() => session.out.endsWith('o/s/r/e/d> '), 'the approval prompt');
      const run = await startedRun();
      const interaction = [...gateway.interactions.values()][0];

      gateway.answerAs('alice', interaction.id, { decision: 'allow_run' });
      await waitFor(() => session.out.includes('approved for this run by alice'), 'the resolution notice');
      gateway.finish(run.id);

      expect(await session.exit).toBe(0);
      expect(session.out).toContain(`interaction ${interaction.id} was approved for this run by alice at`);
    });

    it('withdraws the prompt when someone else answers first', async () => {
      gateway.onRunStarted = (run) => gateway.ask(run.id, { kind: 'free_text', prompt: 'Your name?' });
      const session = cli('run', 'echo', 'greet');
      await waitFor(() => session.out.includes('Your name?') && session.out.endsWith('> '), 'the prompt');
      const run = await startedRun();
      const interaction = [...gateway.interactions.values()][0];

      gateway.answerAs('alice', interaction.id, { text: 'Alice' });
      await waitFor(() => session.out.includes('answered by alice'), 'the resolution notice');
      gateway.finish(run.id, 'greeted Alice');

      expect(await session.exit).toBe(0);
      expect(session.out).toContain(`interaction ${interaction.id} was answered by alice at`);
      expect(session.out).toContain('your answer is no longer needed');
      expect(gateway.answers.map((a) => a.via)).toEqual(['http']);
    });

    it('says so on a 409 when the question was answered while the person typed', async () => {
      gateway.onRunStarted = (run) => gateway.ask(run.id, { kind: 'free_text', prompt: 'Quick?' });
      const session = cli('run', 'echo', 'race');
      await waitFor(() => session.out.endsWith('> '), 'the prompt');
      const run = await startedRun();
      const interaction = [...gateway.interactions.values()][0];
      // Resolve behind the CLI's back (no event), as if the event were still in flight.
      gateway.interactions.set(interaction.id, { ...interaction, status: 'answered', resolvedAt: 'T', resolvedBy: { kind: 'user', subject: 'bob' } });
      session.type('me');
      await waitFor(() => session.out.includes('answer not accepted'), 'the conflict message');
      gateway.finish(run.id);

      expect(await session.exit).toBe(0);
      expect(session.out).toContain('answer not accepted: interaction');
      expect(session.out).toContain('already answered by bob');
    });

    it('resubscribes from the last seq after a dropped connection and never asks the same question twice', async () => {
      gateway.onRunStarted = (run) => gateway.ask(run.id, { kind: 'confirm', prompt: 'Deploy now?' });
      gateway.onAnswered = (interaction) => gateway.finish(interaction.runId);
      const session = cli('run', 'echo', 'deploy');
      await waitFor(() => session.out.includes('Deploy now?'), 'the prompt');
      const seen = gateway.events.length;

      gateway.replayEverything = true;
      gateway.dropConnections();
      await waitFor(() => gateway.subscribes.length === 2, 'the resubscription');
      session.type('y');

      expect(await session.exit).toBe(0);
      expect(gateway.subscribes[0]).toMatchObject({ since: 0 });
      expect(gateway.subscribes[1].since).toBe(seen);
      expect(session.out.match(/\? Deploy now\?/g)).toHaveLength(1);
      expect(session.err).toContain('reconnecting');
      expect(gateway.answers.map((a) => a.body)).toEqual([{ confirmed: true }]);
    });

    it('keeps following when stdin is closed, so `parley respond` from elsewhere can answer', async () => {
      gateway.onRunStarted = (run) => gateway.ask(run.id, CHOICE);
      gateway.onAnswered = (interaction) => gateway.finish(interaction.runId, 'done');
      const session = cli('run', 'echo', 'unattended');
      session.stdin.end();
      await waitFor(() => session.out.includes('stdin is closed'), 'the stdin notice');
      const interaction = [...gateway.interactions.values()][0];
      expect(session.out).toContain(`parley respond ${interaction.id} --choice N`);

      const responder = cli('respond', interaction.id, '--choice', '0');
      expect(await responder.exit).toBe(0);
      expect(await session.exit).toBe(0);
      expect(session.out).toContain('answered by cli');
    });

    it('exits 1 with the error on stderr when the run fails', async () => {
      gateway.onRunStarted = (run) => {
        gateway.say(run.id, 'trying');
        gateway.fail(run.id, 'model exploded');
      };
      const session = cli('run', 'echo', 'fail');
      expect(await session.exit).toBe(1);
      expect(session.err).toContain('✗ run failed (model_error): model exploded');
    });

    it('exits 1 when the run is cancelled, and cancels an open prompt', async () => {
      gateway.onRunStarted = (run) => gateway.ask(run.id, { kind: 'free_text', prompt: 'Wait?' });
      const session = cli('run', 'echo', 'cancel me');
      await waitFor(() => session.out.endsWith('> '), 'the prompt');
      const run = await startedRun();

      expect(await cli('cancel', run.id).exit).toBe(0);
      expect(await session.exit).toBe(1);
      expect(session.err).toContain('✗ run cancelled by cli (cancelled)');
    });

    it('replays a run that already ended without asking its old questions', async () => {
      const first = cli('run', 'echo', 'old', '--detach', '--json');
      expect(await first.exit).toBe(0);
      const { runId } = JSON.parse(first.out) as { runId: string };
      const interaction = gateway.ask(runId, { kind: 'free_text', prompt: 'Old question' });
      gateway.answerAs('carol', interaction.id, { text: 'x' });
      gateway.finish(runId, 'long done');

      const stdout = new CapturedOutput();
      const io = { stdin: new PassThrough(), stdout, stderr: new CapturedOutput(), env };
      expect(await followRun(new CliContext(io, {}), runId)).toBe(0);
      expect(stdout.text).not.toContain('Old question');
      expect(stdout.text).toContain('✓ run finished (finish): long done');
    });

    it('--detach --json prints only the run id', async () => {
      const session = cli('run', 'echo', 'hi', '--detach', '--json');
      expect(await session.exit).toBe(0);
      const run = await startedRun();
      expect(JSON.parse(session.out)).toEqual({ runId: run.id });
      expect(run).toMatchObject({ trigger: 'api', unattended: false });
    });

    it('--unattended --detach starts an unattended run from a program', async () => {
      const session = cli('run', 'echo', 'nightly', 'job', '--unattended', '--detach');
      expect(await session.exit).toBe(0);
      const run = await startedRun();
      expect(run).toMatchObject({ trigger: 'api', unattended: true });
      expect(session.out).toBe(`started run ${run.id} (agent echo, unattended)\nfollow it with: parley logs ${run.id} -f\n`);
    });

    it('follows a staged unattended run: stage moves, sub-agents, checkpoints passed by policy, and a checkpoint that asks anyway', async () => {
      gateway.onRunStarted = (run) => {
        gateway.enterStage(run.id, 'plan');
        const child = gateway.startChild(run.id, 'researcher');
        gateway.finish(child.id, 'found it');
        gateway.say(run.id, 'Planned.');
        gateway.proceed(run.id, 'review', 'unattended');
        gateway.enterStage(run.id, 'build');
        gateway.askCheckpoint(run.id, 'ship', { kind: 'confirm', prompt: 'Ship the build?' }, { round: 1 });
      };
      gateway.onAnswered = (interaction) => gateway.finish(interaction.runId, 'shipped');
      const session = cli('run', 'echo', 'build', 'it', '--unattended');
      session.type('y');

      expect(await session.exit).toBe(0);
      const run = await startedRun();
      const child = [...gateway.runs.values()].find((candidate) => candidate.parentRunId === run.id);
      expect(run).toMatchObject({ trigger: 'chat', unattended: true });
      expect(session.out).toContain(`run ${run.id} started (agent echo, unattended)\n── stage plan\n`);
      expect(session.out).toContain(`⇢ sub-agent researcher started as run ${child?.id} (follow it with: parley logs ${child?.id} -f)\n`);
      expect(session.out).toContain('Planned.\n↷ checkpoint review of stage plan proceeded without a person: the run is unattended\n── stage build (from plan)\n');
      expect(session.out).toMatch(/── checkpoint ship of stage build, round 1\n\? Ship the build\?\n {2}\(confirm · interaction \S+\)\n/);
      expect(session.out).toContain('✓ run finished (finish): shipped');
      expect(session.out).not.toContain('found it');
      expect(gateway.answers.map((a) => a.body)).toEqual([{ confirmed: true }]);
    });

    it('asks an edit-purpose checkpoint as a document to edit', async () => {
      gateway.onRunStarted = (run) => {
        gateway.enterStage(run.id, 'draft');
        gateway.askCheckpoint(run.id, 'polish', { kind: 'edit_text', prompt: "Edit the stage's output", document: 'first draft' });
      };
      gateway.onAnswered = (interaction) => gateway.finish(interaction.runId);
      const session = cli('run', 'echo', 'write');
      session.type('final text', '.');

      expect(await session.exit).toBe(0);
      expect(session.out).toContain("── checkpoint polish of stage draft, round 0 (edit)\n? Edit the stage's output\n");
      expect(session.out).toContain('first draft');
      expect(gateway.answers.map((a) => a.body)).toEqual([{ text: 'final text' }]);
    });

    it('--json prints events as JSON lines and prompts on stderr', async () => {
      gateway.onRunStarted = (run) => gateway.ask(run.id, { kind: 'confirm', prompt: 'OK?' });
      gateway.onAnswered = (interaction) => gateway.finish(interaction.runId, 'ok');
      const session = cli('run', 'echo', 'json', '--json');
      session.type('yes');

      expect(await session.exit).toBe(0);
      const events = session.out
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line) as { type: string; seq: number });
      expect(events.map((event) => event.type)).toContain('interaction.opened');
      expect(events.at(-1)?.type).toBe('run.finished');
      expect(session.err).toContain('? OK?');
    });

    it('--json prints the run id first, and retries a handshake refused at the socket limit', async () => {
      gateway.refuseConnections.push(new RateLimitedError('sockets', 1, 'tenant dev is at its limit of 1 sockets'));
      gateway.onRunStarted = (run) => gateway.finish(run.id, 'done');
      const session = cli('run', 'echo', 'hi', '--json');

      expect(await session.exit).toBe(0);
      const run = await startedRun();
      const lines = session.out
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line) as { runId?: string; type?: string });
      expect(lines[0]).toEqual({ runId: run.id });
      expect(lines.at(-1)?.type).toBe('run.finished');
      expect(session.err).toContain('the gateway refused the connection (tenant dev is at its limit of 1 sockets); retrying in 1s');
      expect(gateway.refuseConnections).toEqual([]);
    });

    it('keeps following when a reconnect is refused for an internal error', async () => {
      gateway.onRunStarted = (run) => gateway.ask(run.id, { kind: 'confirm', prompt: 'Go on?' });
      gateway.onAnswered = (interaction) => gateway.finish(interaction.runId);
      const session = cli('run', 'echo', 'blip');
      await waitFor(() => session.out.endsWith('y/n> '), 'the prompt');

      gateway.refuseConnections.push(new ParleyError('internal', 'the event store is not ready'));
      gateway.dropConnections();
      await waitFor(() => gateway.subscribes.length === 2, 'the resubscription', 15_000);
      session.type('y');

      expect(await session.exit).toBe(0);
      expect(session.err).toContain('the gateway refused the connection (the event store is not ready); retrying in');
      expect(gateway.refuseConnections).toEqual([]);
      expect(gateway.answers.map((a) => a.body)).toEqual([{ confirmed: true }]);
    });

    it('says the run keeps going, and how to follow it, when following fails', async () => {
      gateway.refuseConnections.push(new ForbiddenError('sockets are off for this tenant'));
      gateway.onRunStarted = (run) => gateway.say(run.id, 'working');
      const session = cli('run', 'echo', 'x', '--json');

      expect(await session.exit).toBe(1);
      const run = await startedRun();
      expect(JSON.parse(session.out)).toEqual({ runId: run.id });
      expect(session.err).toContain('error: sockets are off for this tenant\n');
      expect(session.err).toContain(`run ${run.id} keeps going (follow it with: parley logs ${run.id} -f)\n`);
      expect(gateway.runs.get(run.id)?.status).toBe('running');
    });

    it('asks on stderr when stdout is redirected to a file and stderr is a terminal', async () => {
      gateway.onRunStarted = (run) => {
        gateway.say(run.id, 'Thinking.');
        gateway.ask(run.id, { kind: 'free_text', prompt: 'Which file?' });
      };
      gateway.onAnswered = (interaction) => gateway.finish(interaction.runId, 'read it');
      const session = new CliSession(['run', 'echo', 'read'], env, { stderr: true });
      await waitFor(() => session.err.includes('? Which file?') && session.err.endsWith('> '), 'the prompt on stderr');
      session.type('notes.md');

      expect(await session.exit).toBe(0);
      expect(session.out).toMatch(/^run \S+ started \(agent echo\)\nThinking\.\n/);
      expect(session.out).toContain('✓ run finished (finish): read it');
      expect(session.out).not.toContain('Which file?');
      expect(session.err).toContain('✓ answer sent');
      expect(gateway.answers.map((a) => a.body)).toEqual([{ text: 'notes.md' }]);
    });

    it('sends a review verdict and an approval denial when stdin ends at their optional follow-up', async () => {
      gateway.onRunStarted = (run) => gateway.ask(run.id, { kind: 'review', prompt: 'Release notes', markdown: '# v2' });
      gateway.onAnswered = (interaction) => gateway.finish(interaction.runId);
      const review = cli('run', 'echo', 'notes');
      review.stdin.end('y\n');
      expect(await review.exit).toBe(0);
      expect(review.out).toContain('✓ answer sent');

      gateway.onRunStarted = (run) => gateway.askApproval(run.id, 'shell', { command: 'rm -rf build' });
      const approval = cli('run', 'echo', 'clean');
      approval.stdin.end('d\n');
      expect(await approval.exit).toBe(0);
      expect(gateway.answers.map((a) => [a.body, a.accepted])).toEqual([
        [{ approved: true }, true],
        [{ decision: 'deny' }, true],
      ]);
    });

    it('escapes terminal control characters in what the model and tools wrote', async () => {
      gateway.onRunStarted = (run) => {
        gateway.say(run.id, 'clear\x1b[2J', ' title\x1b]0;owned\x07 \u202eexe.txt\r\n');
        gateway.tool(run.id, 'read_file', { path: 'a\x1b[8m' }, 'hidden\x1b[8m text\x9b');
        gateway.ask(run.id, { kind: 'confirm', prompt: 'Run \x1b[1mrm\x1b[0m?' });
      };
      gateway.onAnswered = (interaction) => gateway.finish(interaction.runId, 'done\x07');
      const session = cli('run', 'echo', 'x');
      session.type('n');

      expect(await session.exit).toBe(0);
      const run = await startedRun();
      const logs = cli('logs', run.id);
      expect(await logs.exit).toBe(0);
      // eslint-disable-next-line no-control-regex -- looking for raw control characters is the point
      const unsafe = /[\x00-\x08\x0b-\x1f\x7f-\x9f\u202e]/;
      for (const text of [session.out, session.err, logs.out]) {
        expect(text).not.toMatch(unsafe);
      }
      expect(session.out).toContain('clear\\x1b[2J title\\x1b]0;owned\\x07 \\u202eexe.txt\n');
      expect(session.out).toContain('← read_file: hidden\\x1b[8m text\\x9b');
      expect(session.out).toContain('? Run \\x1b[1mrm\\x1b[0m?');
      expect(session.out).toContain('✓ run finished (finish): done\\x07');
      expect(logs.out).toContain('message              clear\\x1b[2J title');
    });

    it('reports an answer as sent when the socket dropped before its ack and HTTP then finds it recorded', async () => {
      gateway.loseAnswerAcks = 1;
      gateway.onRunStarted = (run) => gateway.ask(run.id, CHOICE);
      gateway.onAnswered = (interaction) => gateway.finish(interaction.runId, 'picked');
      const session = cli('run', 'echo', 'pick');
      session.type('1');

      expect(await session.exit).toBe(0);
      expect(session.out).toContain('✓ answer sent');
      expect(session.out).not.toContain('answer not accepted');
      expect(gateway.answers.map((a) => [a.via, a.accepted])).toEqual([['socket', true]]);
    });

    it('asks a claimed approval again once the claim is released', async () => {
      gateway.onRunStarted = (run) => gateway.askApproval(run.id, 'shell', { command: 'make test' });
      gateway.onAnswered = (interaction) => gateway.finish(interaction.runId, 'tested');
      const session = cli('run', 'echo', 'test');
      await waitFor(() => session.out.endsWith('o/s/r/e/d> '), 'the approval prompt');
      const approval = [...gateway.interactions.values()][0];
      // Claimed without the event reaching the CLI first, so its answer meets the claim.
      const until = new Date(Date.now() + 300_000).toISOString();
      gateway.interactions.set(approval.id, { ...approval, claim: { subject: 'bob', until } });
      session.type('o');
      await waitFor(() => session.out.includes('it is asked here again when the claim ends'), 'the claim notice');
      expect(session.out).toContain(`answer not accepted: claimed by bob until ${until}; only they may answer until then`);
      expect(session.out).toContain(`(or answer it then with: parley respond ${approval.id} --approve`);

      gateway.claimAs('bob', approval.id, true);
      await waitFor(() => session.out.match(/\? Run shell command: make test/g)?.length === 2, 'the approval asked again');
      session.type('o');

      expect(await session.exit).toBe(0);
      // The fake gateway lists only answers that got past the claim check.
      expect(gateway.answers.map((a) => [a.body, a.accepted])).toEqual([[{ decision: 'allow_once' }, true]]);
      expect(session.out).toContain('✓ run finished (finish): tested');
    });

    it('reports an unknown agent with the gateway message', async () => {
      const session = cli('run', 'nobody', 'hi');
      expect(await session.exit).toBe(1);
      expect(session.err).toBe('error: agent nobody not found\n');
    });
  });

  describe('ps', () => {
    it('prints a table, filters by status, and prints JSON', async () => {
      gateway.onRunStarted = (run) => gateway.ask(run.id, CHOICE);
      expect(await cli('run', 'echo', 'a', '--detach').exit).toBe(0);
      const run = await startedRun();
      await waitFor(() => gateway.runs.get(run.id)?.status === 'waiting', 'the run to wait');

      const table = cli('ps');
      expect(await table.exit).toBe(0);
      expect(table.out.split('\n')[0]).toMatch(/^ID\s+AGENT\s+STATUS\s+WAIT\s+STAGE\s+TRIGGER\s+UPDATED$/);
      expect(table.out).toMatch(new RegExp(`${run.id}\\s+echo\\s+waiting\\s+question\\s+-\\s+api\\s+(just now|\\d+s ago)`));

      const none = cli('ps', '--status', 'finished');
      expect(await none.exit).toBe(0);
      expect(none.out).toBe('no finished runs\n');

      const json = cli('ps', '--json');
      expect(await json.exit).toBe(0);
      expect((JSON.parse(json.out) as Run[]).map((r) => r.id)).toEqual([run.id]);
    });

    it('says where the next page starts, and lists it with --after', async () => {
      for (const task of ['a', 'b', 'c']) {
        expect(await cli('run', 'echo', task, '--detach').exit).toBe(0);
      }
      await waitFor(() => gateway.runs.size === 3, 'three runs');
      const [oldest] = [...gateway.runs.keys()];
      const first = cli('ps', '--json', '--limit', '2');
      expect(await first.exit).toBe(0);
      expect(JSON.parse(first.out)).toHaveLength(2);
      expect(first.err).toBe('next page: parley ps --after 2 --limit 2\n');
      const rest = cli('ps', '--json', '--limit', '2', '--after', '2');
      expect(await rest.exit).toBe(0);
      expect((JSON.parse(rest.out) as Run[]).map((run) => run.id)).toEqual([oldest]);
      expect(rest.err).toBe('');
    });

    it('shows the stage, unattended runs, and a run waiting on its sub-agent', async () => {
      gateway.onRunStarted = (run) => {
        gateway.enterStage(run.id, 'research');
        gateway.startChild(run.id, 'researcher');
      };
      expect(await cli('run', 'echo', 'dig', '--unattended', '--detach').exit).toBe(0);
      const run = await startedRun();
      await waitFor(() => gateway.runs.size === 2, 'the sub-agent');
      const child = [...gateway.runs.values()][1];

      const table = cli('ps');
      expect(await table.exit).toBe(0);
      expect(table.out).toMatch(new RegExp(`^${run.id}\\s+echo\\s+waiting\\s+child\\s+research\\s+api \\(unattended\\)\\s+(just now|\\d+s ago)$`, 'm'));
      expect(table.out).toMatch(new RegExp(`^${child.id}\\s+researcher\\s+queued\\s+-\\s+-\\s+delegate \\(unattended\\)\\s+`, 'm'));
    });

    it('rejects an unknown status as a usage error', async () => {
      const session = cli('ps', '--status', 'sleeping');
      expect(await session.exit).toBe(2);
      expect(session.err).toContain("argument 'sleeping' is invalid");
    });
  });

  describe('respond', () => {
    const openOne = async (prompt: Parameters<FakeGateway['ask']>[1]) => {
      expect(await cli('run', 'echo', 'x', '--detach').exit).toBe(0);
      const run = await startedRun();
      return gateway.ask(run.id, prompt, '2999-01-01T00:00:00.000Z');
    };

    it('lists open interactions as a table and as JSON', async () => {
      const interaction = await openOne(CHOICE);
      const table = cli('respond');
      expect(await table.exit).toBe(0);
      expect(table.out).toMatch(/^ID\s+RUN\s+KIND\s+PROMPT\s+OPTIONS\s+DEADLINE\n/);
      expect(table.out).toContain('0) Red | 1) Green');

      const json = cli('respond', '--json');
      expect(await json.exit).toBe(0);
      expect(JSON.parse(json.out)).toEqual([
        {
          id: interaction.id,
          runId: interaction.runId,
          kind: 'multiple_choice',
          prompt: 'Which colour?',
          options: ['Red', 'Green'],
          deadline: '2999-01-01T00:00:00.000Z',
          agent: 'echo',
        },
      ]);
      expect(json.err).toBe('');
    });

    it('says when more open interactions wait than one listing shows', async () => {
      const interaction = await openOne(CHOICE);
      for (let n = 0; n < 100; n++) {
        gateway.ask(interaction.runId, { kind: 'free_text', prompt: `more ${n}` });
      }
      const json = cli('respond', '--json');
      expect(await json.exit).toBe(0);
      expect(JSON.parse(json.out)).toHaveLength(100);
      expect(json.err).toBe('more open interactions may wait past these 100 (soonest deadline first): parley respond --after 100\n');
      const rest = cli('respond', '--json', '--after', '100');
      expect(await rest.exit).toBe(0);
      expect((JSON.parse(rest.out) as Array<{ prompt: string }>).map((row) => row.prompt)).toEqual(['more 99']);
      expect(rest.err).toBe('');
      const byRun = cli('respond', '--json', '--run', interaction.runId);
      expect(await byRun.exit).toBe(0);
      expect(byRun.err).toBe(`more open interactions may wait past these 100 (soonest deadline first): parley respond --after 100 --run ${interaction.runId}\n`);
      const mixed = cli('respond', interaction.id, '--approve', '--after', '100');
      expect(await mixed.exit).toBe(2);
      expect(mixed.err).toContain('--after pages the listing');
    });

    it('answers with a choice and prints the resolved interaction', async () => {
      const interaction = await openOne(CHOICE);
      const session = cli('respond', interaction.id, '--choice', '1', '--json');
      expect(await session.exit).toBe(0);
      expect(JSON.parse(session.out)).toMatchObject({ id: interaction.id, status: 'answered', answer: { choices: [1], labels: ['Green'] } });
    });

    it('answers a multi choice with repeated and comma-listed --choice', async () => {
      const interaction = await openOne({ ...CHOICE, options: [{ label: 'a' }, { label: 'b' }, { label: 'c' }], multi: true });
      const session = cli('respond', interaction.id, '--choice', '0,2', '--choice', '1');
      expect(await session.exit).toBe(0);
      expect(session.out).toBe(`answered ${interaction.id} (multiple_choice): 0) a, 2) c, 1) b\n`);
      expect(gateway.answers[0].body).toEqual({ choices: [0, 2, 1] });
    });

    it('answers free text, reading it from stdin with "-"', async () => {
      const interaction = await openOne({ kind: 'edit_text', prompt: 'Edit', document: 'a' });
      const session = cli('respond', interaction.id, '-');
      session.stdin.end('line 1\nline 2\n');
      expect(await session.exit).toBe(0);
      expect(gateway.answers[0].body).toEqual({ text: 'line 1\nline 2\n' });
    });

    it('approves a review with feedback and denies a confirm', async () => {
      const review = await openOne({ kind: 'review', prompt: 'PR', markdown: 'diff' });
      expect(await cli('respond', review.id, '--approve', '--feedback', 'nice').exit).toBe(0);
      const confirm = gateway.ask(review.runId, { kind: 'confirm', prompt: 'Sure?' });
      expect(await cli('respond', confirm.id, '--deny').exit).toBe(0);
      expect(gateway.answers.map((a) => a.body)).toEqual([{ approved: true, feedback: 'nice' }, { confirmed: false }]);
    });

    it('exits 2 when the flags do not fit the kind, without sending anything', async () => {
      const interaction = await openOne({ kind: 'confirm', prompt: 'Sure?' });
      const wrong = cli('respond', interaction.id, 'yes');
      expect(await wrong.exit).toBe(2);
      expect(wrong.err).toBe('error: <text> cannot answer a confirm interaction (use --approve / --deny)\n');
      const both = cli('respond', interaction.id, '--approve', '--deny');
      expect(await both.exit).toBe(2);
      const noId = cli('respond', '--approve');
      expect(await noId.exit).toBe(2);
      expect(gateway.answers).toEqual([]);
    });

    const openApproval = async (tool: string, input: Record<string, unknown>) => {
      expect(await cli('run', 'echo', 'x', '--detach').exit).toBe(0);
      const run = await startedRun();
      return gateway.askApproval(run.id, tool, input, { deadline: '2999-01-01T00:00:00.000Z' });
    };

    it('approves tool calls once, for the stage, for the run, for a folder, with edited arguments, and denies with a reason', async () => {
      const shell = await openApproval('shell', { command: 'ls && git status' });
      const once = cli('respond', shell.id, '--approve');
      expect(await once.exit).toBe(0);
      expect(once.out).toBe(`answered ${shell.id} (tool_approval): approved once\n`);

      const ask = (tool: string, input: Record<string, unknown>) => gateway.askApproval(shell.runId, tool, input);
      const stage = ask('shell', { command: 'git diff' });
      expect(await cli('respond', stage.id, '--approve', '--stage').exit).toBe(0);
      const run = ask('shell', { command: 'git status' });
      const runAnswer = cli('respond', run.id, '--approve', '--run');
      expect(await runAnswer.exit).toBe(0);
      expect(runAnswer.out).toBe(`answered ${run.id} (tool_approval): approved for this run\n`);
      const folder = ask('write_file', { path: 'notes/a.md', content: 'x' });
      const folderAnswer = cli('respond', folder.id, '--run', '--approve', '--dir', 'notes', '--json');
      expect(await folderAnswer.exit).toBe(0);
      expect(JSON.parse(folderAnswer.out)).toMatchObject({ answer: { decision: 'allow_run', grants: ['run|write_file:dir:notes/'] } });
      const edited = ask('shell', { command: 'git push' });
      const editAnswer = cli('respond', edited.id, '--edit', '{"command": "git push --dry-run"}', '--stage');
      expect(await editAnswer.exit).toBe(0);
      expect(editAnswer.out).toBe(`answered ${edited.id} (tool_approval): approved for this stage, with edited arguments\n`);
      const denied = ask('shell', { command: 'rm -rf build' });
      const denyAnswer = cli('respond', denied.id, '--deny', '--reason', 'not now');
      expect(await denyAnswer.exit).toBe(0);
      expect(denyAnswer.out).toBe(`answered ${denied.id} (tool_approval): denied: "not now"\n`);

      expect(gateway.answers.map((a) => a.body)).toEqual([
        { decision: 'allow_once' },
        { decision: 'allow_stage' },
        { decision: 'allow_run' },
        { decision: 'allow_run', directory: 'notes/' },
        { decision: 'allow_stage', input: { command: 'git push --dry-run' } },
        { decision: 'deny', reason: 'not now' },
      ]);
      expect(gateway.interactions.get(stage.id)?.answer).toMatchObject({ grants: ['stage|build|shell:cmd:git diff'] });
    });

    it.each([
      [['--edit', '{"command": ls}'], 'error: --edit: not valid JSON ('],
      [['--edit', '["ls"]'], 'error: --edit: must be a JSON object'],
      [['--approve', '--stage', '--run'], 'error: --stage and --run cannot be combined'],
      [['--deny', '--run'], 'error: --run only go with --approve or --edit, not with --deny'],
      [['--approve', '--reason', 'x'], 'error: --reason only goes with --deny'],
      [['--approve', '--dir', 'notes'], 'error: --dir needs --stage or --run'],
      [['--approve', '--run', '--dir', 'notes'], 'error: --dir: shell grants are not kept per folder'],
      [['--run', 'r1'], 'error: --run r1: a run id only filters the listing; to approve a tool call for the rest of the run, give --run without a value'],
      [['--approve', '--feedback', 'f'], 'error: --feedback cannot answer a tool_approval interaction'],
      [['--stage'], "error: a tool_approval interaction needs --approve (allow once; add --stage or --run for longer), --edit '<json>' or --deny"],
    ])('exits 2 on misplaced approval flags %j, without sending anything', async (flags, message) => {
      const interaction = await openApproval('shell', { command: 'make test' });
      const session = cli('respond', interaction.id, ...flags);
      expect(await session.exit).toBe(2);
      expect(session.err).toContain(message);
      expect(gateway.answers).toEqual([]);
    });

    it('exits 2 on approval flags for other kinds and on --run without a run id when listing', async () => {
      const confirm = await openOne({ kind: 'confirm', prompt: 'Sure?' });
      const stage = cli('respond', confirm.id, '--approve', '--stage');
      expect(await stage.exit).toBe(2);
      expect(stage.err).toBe('error: --stage cannot answer a confirm interaction (use --approve / --deny)\n');
      const noRun = cli('respond', '--run');
      expect(await noRun.exit).toBe(2);
      expect(noRun.err).toBe('error: --run needs a run id to filter the listing (parley respond --run <runId>)\n');
      const filtered = cli('respond', '--run', confirm.runId);
      expect(await filtered.exit).toBe(0);
      expect(filtered.out).toContain(confirm.id);
      expect(gateway.answers).toEqual([]);
    });

    it("exits 1 with the gateway's reason when it refuses the edited arguments", async () => {
      const interaction = await openApproval('shell', { command: 'make test' });
      const session = cli('respond', interaction.id, '--edit', '{"cmd": "make test"}');
      expect(await session.exit).toBe(1);
      expect(session.err).toMatch(/^error: invalid answer: input\.command: is required; input\.cmd: unknown field/);
    });

    it('exits 1 with the gateway message when the interaction is already resolved', async () => {
      const interaction = await openOne({ kind: 'free_text', prompt: 'Name?' });
      gateway.answerAs('dora', interaction.id, { text: 'D' });
      const session = cli('respond', interaction.id, 'me');
      expect(await session.exit).toBe(1);
      expect(session.err).toMatch(/^error: interaction \S+ was already answered by dora at \S+\n$/);
    });

    it('exits 1 with the message of a 404', async () => {
      const session = cli('respond', 'nope', 'x');
      expect(await session.exit).toBe(1);
      expect(session.err).toBe('error: interaction nope not found\n');
    });
  });

  describe('approvals', () => {
    const startRun = async (): Promise<Run> => {
      expect(await cli('run', 'echo', 'x', '--detach').exit).toBe(0);
      return startedRun();
    };
    const memberToken = () => signToken({ tenant: 'dev', sub: 'mo', role: 'member' }, loadConfig({}).jwtSecret);

    it('lists open approvals, oldest deadline first, filtered by tool, agent and run, and as JSON', async () => {
      const run = await startRun();
      const late = gateway.askApproval(run.id, 'shell', { command: 'git push' }, { deadline: '2999-01-02T00:00:00.000Z' });
      const early = gateway.askApproval(run.id, 'write_file', { path: 'notes/a.md', content: 'x' }, { deadline: '2999-01-01T00:00:00.000Z' });
      gateway.ask(run.id, { kind: 'free_text', prompt: 'not an approval' });

      const table = cli('approvals');
      expect(await table.exit).toBe(0);
      const lines = table.out.trimEnd().split('\n');
      expect(lines[0]).toMatch(/^ID\s+AGE\s+DEADLINE\s+AGENT\s+TOOL\s+WHAT\s+CLAIM$/);
      expect(lines[1]).toMatch(new RegExp(`^${early.id}\\s+(just now|\\d+s ago)\\s+in \\d+d\\s+echo\\s+write_file\\s+notes/a\\.md\\s+-$`));
      expect(lines[2]).toMatch(new RegExp(`^${late.id}\\s.*\\secho\\s+shell\\s+git push\\s+-$`));
      expect(lines).toHaveLength(3);

      const byTool = cli('approvals', '--tool', 'shell', '--json');
      expect(await byTool.exit).toBe(0);
      expect((JSON.parse(byTool.out) as Interaction[]).map((i) => i.id)).toEqual([late.id]);
      const byRun = cli('approvals', '--run', run.id, '--agent', 'echo', '--limit', '1', '--json');
      expect(await byRun.exit).toBe(0);
      expect((JSON.parse(byRun.out) as Interaction[]).map((i) => i.id)).toEqual([early.id]);
      // More than a page: stdout holds the page, stderr says how to get the next.
      expect(byRun.err).toBe(`next page: parley approvals --after ${early.id} (with the same filters)\n`);
      const nextPage = cli('approvals', '--run', run.id, '--limit', '1', '--after', early.id, '--json');
      expect(await nextPage.exit).toBe(0);
      expect((JSON.parse(nextPage.out) as Interaction[]).map((i) => i.id)).toEqual([late.id]);
      expect(nextPage.err).toBe('');
      const none = cli('approvals', '--agent', 'other');
      expect(await none.exit).toBe(0);
      expect(none.out).toBe('no open approvals\n');
    });

    it('claims and releases an approval, and shows the claim in listings and logs', async () => {
      const run = await startRun();
      const approval = gateway.askApproval(run.id, 'shell', { command: 'make test' });
      const claim = cli('approvals', '--claim', approval.id);
      expect(await claim.exit).toBe(0);
      expect(claim.out).toMatch(new RegExp(`^approval ${approval.id} claimed by cli until \\d{4}-\\d\\d-\\d\\dT\\S+Z\\n$`));
      const listed = cli('approvals');
      expect(await listed.exit).toBe(0);
      expect(listed.out).toMatch(/cli \(\d+m left\)\n$/);
      const open = cli('respond');
      expect(await open.exit).toBe(0);
      expect(open.out).toContain(approval.id);

      const release = cli('approvals', '--release', approval.id);
      expect(await release.exit).toBe(0);
      expect(release.out).toBe(`released approval ${approval.id}\n`);
      expect(gateway.interactions.get(approval.id)?.claim).toBeUndefined();

      // Released already: a repeat changes nothing.
      const again = cli('approvals', '--release', approval.id);
      expect(await again.exit).toBe(0);
      expect(gateway.interactions.get(approval.id)?.claim).toBeUndefined();

      expect(await cli('respond', approval.id, '--approve', '--run').exit).toBe(0);
      const logs = cli('logs', run.id);
      expect(await logs.exit).toBe(0);
      expect(logs.out).toMatch(new RegExp(`interaction\\.claimed\\s+${approval.id} claimed by cli until \\S+$`, 'm'));
      expect(logs.out).toMatch(new RegExp(`interaction\\.claimed\\s+${approval.id} claim released by cli$`, 'm'));
      expect(logs.out).toMatch(new RegExp(`interaction\\.resolved\\s+${approval.id} approved for this run by cli at \\S+$`, 'm'));
    });

    it("reports someone else's live claim when claiming or answering, and a member's claim as forbidden", async () => {
      const run = await startRun();
      const approval = gateway.askApproval(run.id, 'shell', { command: 'make test' });
      const held = gateway.claimAs('bob', approval.id);
      const until = held.claim?.until ?? '';

      const claim = cli('approvals', '--claim', approval.id);
      expect(await claim.exit).toBe(1);
      expect(claim.err).toBe(`error: claimed by bob until ${until}; only they may answer until then\n`);
      const answer = cli('respond', approval.id, '--approve');
      expect(await answer.exit).toBe(1);
      expect(answer.err).toBe(`error: claimed by bob until ${until}; only they may answer until then\n`);
      const listed = cli('approvals');
      expect(await listed.exit).toBe(0);
      expect(listed.out).toMatch(/bob \(\d+m left\)\n$/);

      env.PARLEY_TOKEN = memberToken();
      const member = cli('approvals', '--claim', approval.id);
      expect(await member.exit).toBe(1);
      expect(member.err).toBe('error: only admins claim approvals\n');
      expect(gateway.answers).toEqual([]);
    });

    it('exits 2 when --claim or --release comes with listing filters or with each other', async () => {
      const both = cli('approvals', '--claim', 'a', '--release', 'b');
      expect(await both.exit).toBe(2);
      expect(both.err).toBe('error: give either --claim or --release, not both\n');
      const filtered = cli('approvals', '--claim', 'a', '--tool', 'shell');
      expect(await filtered.exit).toBe(2);
      expect(filtered.err).toBe('error: --tool only filter the listing; they cannot be used with --claim or --release\n');
    });

    it('prints the safe commands in effect with their source and note', async () => {
      const all = cli('approvals', 'safe');
      expect(await all.exit).toBe(0);
      expect(all.out).toBe(
        [
          'safe commands for every agent (add --agent A for the ones in effect for an agent):',
          'ENTRY       SOURCE   NOTE',
          'ls          default  lists files',
          'git status  default  read-only git',
          'make test   global',
          '',
        ].join('\n'),
      );
      const agent = cli('approvals', 'safe', '--agent', 'echo');
      expect(await agent.exit).toBe(0);
      expect(agent.out.split('\n')[0]).toBe('safe commands for agent echo:');
      expect(agent.out).toMatch(/^npm test\s+agent:echo$/m);
      const json = cli('approvals', 'safe', '--agent', 'echo', '--json');
      expect(await json.exit).toBe(0);
      expect(JSON.parse(json.out)).toEqual({ agent: 'echo', safeCommands: gateway.safeCommands });

      const unknown = cli('approvals', 'safe', '--agent', 'nobody');
      expect(await unknown.exit).toBe(1);
      expect(unknown.err).toBe('error: agent nobody not found\n');
      const misplaced = cli('approvals', 'safe', '--tool', 'shell');
      expect(await misplaced.exit).toBe(2);
      expect(misplaced.err).toBe('error: --tool cannot be used with `parley approvals safe` (it takes only --agent)\n');
    });
  });

  describe('audit', () => {
    it('prints who decided each approval, with short digests, and full entries as JSON', async () => {
      expect(await cli('run', 'echo', 'x', '--detach').exit).toBe(0);
      const run = await startedRun();
      const empty = cli('audit', run.id);
      expect(await empty.exit).toBe(0);
      expect(empty.out).toBe(`no approval decisions in run ${run.id}\n`);

      const edited = gateway.askApproval(run.id, 'shell', { command: 'git push' });
      expect(await cli('respond', edited.id, '--edit', '{"command": "git push --dry-run"}', '--run').exit).toBe(0);
      const expired = gateway.askApproval(run.id, 'write_file', { path: 'a.md', content: 'x' });
      gateway.expire(expired.id);
      gateway.askApproval(run.id, 'shell', { command: 'make test' });
      gateway.finish(run.id);

      const table = cli('audit', run.id);
      expect(await table.exit).toBe(0);
      const lines = table.out.trimEnd().split('\n');
      expect(lines[0]).toMatch(/^TIME \(UTC\)\s+TOOL\s+DECISION\s+SCOPE\s+BASIS\s+APPROVER\s+EDITED\s+DIGEST$/);
      expect(lines[1]).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\s+shell\s+allow_run\s+run\s+person\s+cli\/admin\s+yes\s+[0-9a-f]{12}$/);
      expect(lines[2]).toMatch(/\s+write_file\s+deny\s+-\s+deadline\s+deadline\s+no\s+[0-9a-f]{12}$/);
      expect(lines[3]).toMatch(/\s+shell\s+deny\s+-\s+cancelled\s+stopped\s+no\s+[0-9a-f]{12}$/);

      const json = cli('audit', run.id, '--json');
      expect(await json.exit).toBe(0);
      const entries = JSON.parse(json.out) as AuditEntry[];
      expect(entries.map((entry) => entry.argsDigest)).toEqual(gateway.audits.get(run.id)?.map((entry) => entry.argsDigest));
      expect(entries[0]).toMatchObject({ basis: 'person', decision: 'allow_run', edited: true, grants: ['run|shell:cmd:git push'] });
      expect(entries[0].argsDigest).toMatch(/^[0-9a-f]{64}$/);
      expect(lines[1].endsWith(entries[0].argsDigest.slice(0, 12))).toBe(true);

      const missing = cli('audit', 'nope');
      expect(await missing.exit).toBe(1);
      expect(missing.err).toBe('error: run nope not found\n');
    });
  });

  describe('logs', () => {
    it('prints the events of a run, and JSON lines with --json', async () => {
      gateway.onRunStarted = (run) => {
        gateway.say(run.id, 'thinking ', 'hard');
        gateway.finish(run.id, 'all good');
      };
      expect(await cli('run', 'echo', 'x', '--detach').exit).toBe(0);
      const run = await startedRun();
      await waitFor(() => gateway.runs.get(run.id)?.status === 'finished', 'the run to finish');

      const text = cli('logs', run.id);
      expect(await text.exit).toBe(0);
      expect(text.out).toMatch(/^#1 \d\d:\d\d:\d\d run\.created\s+agent echo \(api\): x$/m);
      expect(text.out).toMatch(/message\s+thinking hard$/m);
      expect(text.out).not.toContain('message.delta');
      expect(text.out).toMatch(/run\.finished\s+finish: all good$/m);

      const json = cli('logs', run.id, '--json');
      expect(await json.exit).toBe(0);
      const types = json.out
        .trim()
        .split('\n')
        .map((line) => (JSON.parse(line) as { type: string }).type);
      expect(types).toEqual(['run.created', 'run.status', 'message.delta', 'message.delta', 'message', 'run.finished']);
    });

    it('says when events it would print were trimmed from the stream, over HTTP and when it subscribes', async () => {
      gateway.onRunStarted = (run) => gateway.say(run.id, 'early');
      expect(await cli('run', 'echo', 'x', '--detach').exit).toBe(0);
      const run = await startedRun();
      await waitFor(() => gateway.events.some((event) => event.type === 'message'), 'the early message');
      gateway.trimmedUpTo = gateway.events.find((event) => event.type === 'message')!.seq;
      const printed = cli('logs', run.id);
      expect(await printed.exit).toBe(0);
      expect(printed.out).not.toContain('run.created');
      expect(printed.err).toBe(`events of run ${run.id} after #0 were trimmed from the event stream: they are not shown\n`);

      // Events said and trimmed between the HTTP read and the subscription.
      gateway.onSubscribe = () => {
        gateway.onSubscribe = () => undefined;
        gateway.say(run.id, 'missed');
        gateway.trimmedUpTo = gateway.events.at(-1)!.seq;
        setImmediate(() => gateway.finish(run.id, 'done'));
      };
      const following = cli('logs', run.id, '-f');
      expect(await following.exit).toBe(0);
      expect(following.out).not.toContain('missed');
      expect(following.out).toMatch(/run\.finished\s+finish: done$/m);
      // Nothing was left to print over HTTP: the subscription replays from #0.
      expect(following.err).toContain('events after #0 were trimmed from the event stream before they could be replayed: they are skipped\n');
    });

    it('-f follows live events until the run ends', async () => {
      expect(await cli('run', 'echo', 'x', '--detach').exit).toBe(0);
      const run = await startedRun();
      const session = cli('logs', run.id, '-f');
      await waitFor(() => gateway.connectionCount === 1 && gateway.subscribes.length === 1, 'the follower to subscribe');
      expect(gateway.subscribes[0]).toEqual({ since: 1, runId: run.id });
      gateway.say(run.id, 'live');
      gateway.finish(run.id, 'bye');

      expect(await session.exit).toBe(0);
      expect(session.out).toMatch(/message\s+live$/m);
      expect(session.out).toMatch(/run\.finished\s+finish: bye$/m);
    });

    it('-f does not wait for an ended run whose end event was trimmed from the stream', async () => {
      gateway.onRunStarted = (run) => gateway.finish(run.id, 'long ago');
      expect(await cli('run', 'echo', 'x', '--detach').exit).toBe(0);
      const run = await startedRun();
      await waitFor(() => gateway.runs.get(run.id)?.status === 'finished', 'the run to finish');
      gateway.events.splice(0, gateway.events.length);

      const session = cli('logs', run.id, '-f');
      expect(await session.exit).toBe(0);
      expect(session.out).toBe('');
      expect(session.err).toBe(`run ${run.id} has ended (finished); its last events were trimmed from the event stream\n`);
      expect(gateway.subscribes).toEqual([]);
    });

    it('-f prints the end of a run that ended between reading its events and looking it up', async () => {
      expect(await cli('run', 'echo', 'x', '--detach').exit).toBe(0);
      const run = await startedRun();
      gateway.onGetRun = (id) => {
        gateway.onGetRun = () => undefined;
        gateway.finish(id, 'just then');
      };
      const session = cli('logs', run.id, '-f');
      expect(await session.exit).toBe(0);
      expect(session.out).toMatch(/run\.finished\s+finish: just then$/m);
      expect(session.err).toBe('');
    });

    it('-f stops when the run ends while it subscribes: with a note when its end was trimmed, else with the end printed once', async () => {
      expect(await cli('run', 'echo', 'x', '--detach').exit).toBe(0);
      const run = await startedRun();
      gateway.onSubscribe = () => {
        gateway.fail(run.id, 'gone');
        gateway.events.splice(0, gateway.events.length);
      };
      const trimmed = cli('logs', run.id, '-f', '--json');
      expect(await trimmed.exit).toBe(0);
      expect(trimmed.out.trim().split('\n').map((line) => (JSON.parse(line) as { type: string }).type)).toEqual(['run.created']);
      expect(trimmed.err).toBe(`run ${run.id} has ended (failed); its last events were trimmed from the event stream\n`);

      expect(await cli('run', 'echo', 'y', '--detach').exit).toBe(0);
      const second = [...gateway.runs.values()][1];
      gateway.onSubscribe = () => gateway.finish(second.id, 'just now');
      const kept = cli('logs', second.id, '-f');
      expect(await kept.exit).toBe(0);
      expect(kept.out.match(/run\.finished\s+finish: just now$/gm)).toHaveLength(1);
      expect(kept.err).toBe('');
    });

    it('-f shows stage moves, checkpoints passed without a person, messages and sub-agents', async () => {
      expect(await cli('run', 'echo', 'x', '--detach').exit).toBe(0);
      const run = await startedRun();
      const session = cli('logs', run.id, '-f');
      await waitFor(() => gateway.subscribes.length === 1, 'the follower to subscribe');
      gateway.enterStage(run.id, 'plan');
      gateway.proceed(run.id, 'review', 'deadline');
      expect(await cli('msg', run.id, 'check the logs').exit).toBe(0);
      const [messageId] = gateway.injectMessages(run.id);
      const child = gateway.startChild(run.id, 'researcher');
      gateway.finish(run.id, 'done');

      expect(await session.exit).toBe(0);
      expect(session.out).toMatch(/stage\.entered\s+plan \(first stage\)$/m);
      expect(session.out).toMatch(/checkpoint\.proceeded checkpoint review of stage plan proceeded without a person: nobody answered before the deadline$/m);
      expect(session.out).toMatch(/message\.received\s+\S+ from cli: "check the logs"$/m);
      expect(session.out).toContain(`message.injected     1 message passed to the agent: ${messageId}\n`);
      expect(session.out).toContain(`child.started        sub-agent researcher: run ${child.id}\n`);
      expect(session.out).toMatch(/run\.status\s+waiting \(child\), stage plan$/m);
    });
  });

  describe('msg', () => {
    it('queues messages from the arguments or stdin, and the follower shows them arrive and reach the agent', async () => {
      gateway.onRunStarted = (run) => gateway.say(run.id, 'working');
      const follower = cli('run', 'echo', 'work');
      await waitFor(() => follower.out.includes('working'), 'the run to start');
      const run = await startedRun();

      const words = cli('msg', run.id, 'also', 'run', 'the', 'linter');
      expect(await words.exit).toBe(0);
      expect(words.out).toBe(`message ${gateway.messages[0].messageId} queued for run ${run.id} (1 pending)\n`);
      const piped = cli('msg', run.id, '-', '--json');
      piped.stdin.end('two\nlines\n');
      expect(await piped.exit).toBe(0);
      expect(JSON.parse(piped.out)).toEqual({ runId: run.id, messageId: gateway.messages[1].messageId, pending: 2 });
      expect(gateway.messages.map((message) => [message.text, message.by.subject])).toEqual([
        ['also run the linter', 'cli'],
        ['two\nlines', 'cli'],
      ]);

      await waitFor(() => follower.out.includes('✉ message from cli: two lines'), 'the second message to show');
      gateway.injectMessages(run.id);
      gateway.finish(run.id);
      expect(await follower.exit).toBe(0);
      expect(follower.out).toContain('✉ message from cli: also run the linter\n✉ message from cli: two lines\n✉ 2 messages passed to the agent\n');
    });

    it('exits 1 with the gateway message for an ended or unknown run, and 2 for an empty message', async () => {
      expect(await cli('run', 'echo', 'x', '--detach').exit).toBe(0);
      const run = await startedRun();
      gateway.finish(run.id);

      const ended = cli('msg', run.id, 'too late');
      expect(await ended.exit).toBe(1);
      expect(ended.err).toBe(`error: no run accepted the message: run ${run.id} has ended (finished)\n`);
      const unknown = cli('msg', 'nope', 'hi');
      expect(await unknown.exit).toBe(1);
      expect(unknown.err).toBe('error: run nope not found\n');
      const blank = cli('msg', run.id, ' ');
      expect(await blank.exit).toBe(2);
      expect(blank.err).toBe('error: the message must not be empty\n');
      const emptyStdin = cli('msg', run.id, '-');
      emptyStdin.stdin.end('\n');
      expect(await emptyStdin.exit).toBe(2);
      expect(await cli('msg', run.id).exit).toBe(2);
      expect(gateway.messages).toEqual([]);
    });
  });

  describe('stop', () => {
    it('stops a run and says who stopped it; `cancel` is the same command', async () => {
      gateway.onRunStarted = (run) => gateway.ask(run.id, { kind: 'free_text', prompt: 'Wait?' });
      expect(await cli('run', 'echo', 'x', '--detach').exit).toBe(0);
      const run = await startedRun();
      await waitFor(() => gateway.runs.get(run.id)?.status === 'waiting', 'the run to wait');

      const stop = cli('stop', run.id);
      expect(await stop.exit).toBe(0);
      expect(stop.out).toBe(`run ${run.id} is cancelled, stopped by cli\n`);
      expect(gateway.runs.get(run.id)).toMatchObject({ status: 'cancelled', stoppedBy: { kind: 'user', subject: 'cli' } });
      const again = cli('cancel', run.id);
      expect(await again.exit).toBe(1);
      expect(again.err).toBe(`error: run ${run.id} has already ended (cancelled)\n`);

      const second = cli('run', 'echo', 'y', '--detach', '--json');
      expect(await second.exit).toBe(0);
      const { runId } = JSON.parse(second.out) as { runId: string };
      const json = cli('cancel', runId, '--json');
      expect(await json.exit).toBe(0);
      expect(JSON.parse(json.out)).toMatchObject({ id: runId, status: 'cancelled', stoppedBy: { subject: 'cli' } });
      const unknown = cli('stop', 'nope');
      expect(await unknown.exit).toBe(1);
      expect(unknown.err).toBe('error: run nope not found\n');
    });

    it('says that a run a worker holds stops at its next step', async () => {
      gateway.holdStops = true;
      gateway.onRunStarted = (run) => gateway.say(run.id, 'busy');
      const follower = cli('run', 'echo', 'long', 'job');
      await waitFor(() => follower.out.includes('busy'), 'the run to be running');
      const run = await startedRun();

      const stop = cli('stop', run.id);
      expect(await stop.exit).toBe(0);
      expect(stop.out).toBe(`run ${run.id} is running; it stops at its next step\n`);
      gateway.completeStops();
      expect(await follower.exit).toBe(1);
      expect(follower.err).toContain('✗ run cancelled by cli (cancelled)');
    });
  });

  describe('schedules', () => {
    it('lists the schedules as a table and as JSON', async () => {
      const none = cli('schedules');
      expect(await none.exit).toBe(0);
      expect(none.out).toBe('no schedules\n');

      const next = new Date(Date.now() + (2 * 3600 + 300) * 1000).toISOString();
      gateway.schedules.push(
        { agent: 'echo', name: 'daily', cron: '0 9 * * *', timezone: 'Europe/Berlin', owner: 'ops', task: 'Summarise the day', next },
        { agent: 'echo', name: 'nightly', cron: '0 2 * * *', owner: 'scheduler', task: 'x'.repeat(80), next: null },
      );
      const table = cli('schedules');
      expect(await table.exit).toBe(0);
      const lines = table.out.trimEnd().split('\n');
      expect(lines[0]).toMatch(/^AGENT\s+NAME\s+CRON\s+OWNER\s+NEXT\s+TASK$/);
      expect(lines[1]).toMatch(/^echo\s+daily\s+0 9 \* \* \* \(Europe\/Berlin\)\s+ops\s+in 2h \(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC\)\s+Summarise the day$/);
      expect(lines[2]).toMatch(/^echo\s+nightly\s+0 2 \* \* \*\s+scheduler\s+not scheduled yet\s+x{59}…$/);

      const json = cli('schedules', '--json');
      expect(await json.exit).toBe(0);
      expect(JSON.parse(json.out)).toEqual(gateway.schedules);

      env.PARLEY_TOKEN = signToken({ tenant: 'dev', sub: 'mo', role: 'member' }, loadConfig({}).jwtSecret);
      const member = cli('schedules');
      expect(await member.exit).toBe(1);
      expect(member.err).toBe('error: only admins and services list schedules\n');
    });
  });

  describe('agents, token, connection and usage', () => {
    it('lists agents', async () => {
      const table = cli('agents');
      expect(await table.exit).toBe(0);
      expect(table.out).toMatch(/^NAME\s+PROVIDER\s+TOOLS\s+DESCRIPTION\necho\s+scripted\s+ask_user,read_file\s+repeats what it is told\n$/);
      const json = cli('agents', '--json');
      expect(await json.exit).toBe(0);
      expect(JSON.parse(json.out)).toEqual(gateway.agents);
    });

    it('prints a dev token signed with PARLEY_JWT_SECRET', async () => {
      const secret = 'a-test-secret-of-some-length';
      const session = new CliSession(['token', '--tenant', 'acme', '--sub', 'ann', '--role', 'member', '--ttl', '60'], { PARLEY_JWT_SECRET: secret });
      expect(await session.exit).toBe(0);
      await expect(verifyToken(session.out.trim(), secret)).resolves.toEqual({ tenant: 'acme', sub: 'ann', role: 'member' });

      const json = new CliSession(['token', '--json'], {});
      expect(await json.exit).toBe(0);
      const parsed = JSON.parse(json.out) as { token: string; role: string };
      await expect(verifyToken(parsed.token, loadConfig({}).jwtSecret)).resolves.toEqual({ tenant: 'dev', sub: 'cli', role: 'admin' });
    });

    it('signs tokens with PARLEY_JWT_ISSUER and PARLEY_JWT_AUDIENCE when they are set', async () => {
      const deployment = { PARLEY_JWT_SECRET: 'a-test-secret-of-some-length', PARLEY_JWT_ISSUER: 'https://id.example', PARLEY_JWT_AUDIENCE: 'parley' };
      const session = new CliSession(['token', '--sub', 'ann'], deployment);
      expect(await session.exit).toBe(0);
      const checks = { secret: deployment.PARLEY_JWT_SECRET, issuer: deployment.PARLEY_JWT_ISSUER, audience: deployment.PARLEY_JWT_AUDIENCE };
      await expect(verifyToken(session.out.trim(), checks)).resolves.toEqual({ tenant: 'dev', sub: 'ann', role: 'admin' });
    });

    it('rejects a bad role or ttl as a usage error', async () => {
      expect(await cli('token', '--role', 'root').exit).toBe(2);
      expect(await cli('token', '--ttl', '0').exit).toBe(2);
      expect(await cli('token', '--tenant', 'Bad Tenant').exit).toBe(2);
    });

    it('uses --token / PARLEY_TOKEN and reports a 401', async () => {
      const flag = cli('agents', '--token', 'not-a-jwt');
      expect(await flag.exit).toBe(1);
      expect(flag.err).toMatch(/^error: invalid token: /);
      env.PARLEY_TOKEN = 'also-not-a-jwt';
      const fromEnv = cli('agents');
      expect(await fromEnv.exit).toBe(1);
      expect(fromEnv.err).toMatch(/^error: invalid token: /);
    });

    it('reports an unreachable gateway', async () => {
      await gateway.stop();
      const session = cli('ps');
      expect(await session.exit).toBe(1);
      expect(session.err).toMatch(/^error: cannot reach the gateway at http:\/\/127\.0\.0\.1:\d+: connect ECONNREFUSED/);
      gateway = new FakeGateway();
      await gateway.start();
    });

    it('exits 2 on usage errors and 0 on --help', async () => {
      expect(await cli().exit).toBe(2);
      expect(await cli('bogus').exit).toBe(2);
      expect(await cli('run', 'echo').exit).toBe(2);
      expect(await cli('ps', '--nope').exit).toBe(2);
      expect(await cli('ps', '--url', 'ftp://x').exit).toBe(2);
      const help = cli('--help');
      expect(await help.exit).toBe(0);
      expect(help.out).toContain('respond');
      expect(help.out).toContain('approvals');
      expect(help.out).toContain('audit');
      for (const command of ['msg', 'stop|cancel', 'schedules']) {
        expect(help.out).toContain(command);
      }
      const runHelp = cli('run', '--help');
      expect(await runHelp.exit).toBe(0);
      expect(runHelp.out).toContain('--unattended');
      const approvalsHelp = cli('approvals', '--help');
      expect(await approvalsHelp.exit).toBe(0);
      expect(approvalsHelp.out).toContain('--claim <id>');
      expect(approvalsHelp.out).toContain('safe');
      const respondHelp = cli('respond', '--help');
      expect(await respondHelp.exit).toBe(0);
      expect(respondHelp.out).toContain('--edit <json>');
    });
  });
});
