import type { Browser, BrowserContext, Page } from 'playwright-core';
import { CliSession } from '../../apps/cli/src/testing/cli.harness';
import { createGateway } from '../../apps/gateway/src/gateway.app';
import { buildConsole, launchChromium, openConsole } from '../support/browser';
import { TestStack, writeAgents } from '../support/stack';
import { waitFor, within } from '../support/wait-for';

/** Asks every kind of question in turn, then asks to write a file (an approval), then finishes. */
const everyKind = {
  name: 'every-kind',
  description: 'asks every kind of question',
  model: {
    provider: 'scripted',
    turns: [
      { text: 'First a free question.', tool_calls: [{ name: 'ask_user_text', input: { question: 'What is the goal?' } }] },
      {
        text: 'Got {{last_answer}}.',
        tool_calls: [{ name: 'ask_user_choice', input: { question: 'Which colour?', options: [{ label: 'Red' }, { label: 'Green', description: 'calm' }, { label: 'Blue' }] } }],
      },
      { tool_calls: [{ name: 'ask_user_choice', input: { question: 'Which days?', multi: true, options: ['Mon', 'Tue', 'Wed'] } }] },
      { tool_calls: [{ name: 'ask_user_confirm', input: { question: 'Shall I go on?' } }] },
      { tool_calls: [{ name: 'edit_document', input: { instructions: 'Fix the draft.', content: 'draft line' } }] },
      { tool_calls: [{ name: 'present_for_review', input: { title: 'The plan', markdown: '# Plan\n\n- **one**\n- two\n\n<script>window.pwned = 1</script><img src=x onerror="window.pwned = 2">' } }] },
      { text: 'Writing it down.', tool_calls: [{ name: 'write_file', input: { path: 'notes/plan.md', content: 'the plan' } }] },
      { tool_calls: [{ name: 'finish', input: { summary: 'all done: {{last_answer}}' } }] },
    ],
  },
  tools: ['ask_user_text', 'ask_user_choice', 'ask_user_confirm', 'edit_document', 'present_for_review', 'write_file', 'finish'],
  limits: { max_iterations: 20, max_ask_user_per_loop: 20, interaction_timeout_secs: 0 },
};

/** Two questions with a model turn between them (the restart test answers the first while the gateway is down). */
const twoQuestions = {
  name: 'two-questions',
  model: {
    provider: 'scripted',
    turns: [
      { text: 'Question one coming.', tool_calls: [{ name: 'ask_user_text', input: { question: 'First question?' } }] },
      { text: 'Thanks for {{last_answer}}; question two.', tool_calls: [{ name: 'ask_user_text', input: { question: 'Second question?' } }] },
      { tool_calls: [{ name: 'finish', input: { summary: 'finished with {{last_answer}}' } }] },
    ],
  },
  tools: ['ask_user_text', 'finish'],
  limits: { max_iterations: 5, interaction_timeout_secs: 0 },
};

/** The writer under another name: the queue's paging test filters on it. */
const PAGED = 501;

const writer = {
  name: 'writer',
  model: {
    provider: 'scripted',
    turns: [
      { tool_calls: [{ name: 'write_file', input: { path: 'out.txt', content: 'x' } }] },
      { tool_calls: [{ name: 'finish', input: { summary: 'done: {{last_answer}}' } }] },
    ],
  },
  tools: ['write_file', 'finish'],
  limits: { max_iterations: 5, interaction_timeout_secs: 900 },
};

describe('the web console, in a real browser', () => {
  let stack: TestStack;
  let browser: Browser;
  let build: { dir: string; remove: () => void };
  const contexts: BrowserContext[] = [];
  const alice = () => stack.token({ sub: 'alice', role: 'member' });
  const ada = () => stack.token({ sub: 'ada', role: 'admin' });
  const bob = () => stack.token({ sub: 'bob', role: 'admin' });

  const open = async (token: string, path = '/'): Promise<Page> => {
    const { context, page } = await openConsole(browser, stack.url, token, path);
    contexts.push(context);
    return page;
  };
  const question = (page: Page, interactionId: string) => page.locator(`[data-testid="interaction"][data-interaction-id="${interactionId}"]`);
  const answerEntry = async (runId: string, interactionId: string) =>
    waitFor(async () => (await stack.log(runId)).find((e) => e.type === 'answer' && e.interactionId === interactionId), {
      timeoutMs: 20_000,
      message: `the answer to ${interactionId} in the log`,
    });
  /** The next open interaction after `previous` (the run moved on after the answer). */
  const nextQuestion = async (runId: string, previous?: string) =>
    waitFor(
      async () => {
        const body = await stack.run(runId);
        return body.run.status === 'waiting' && body.interaction && body.interaction.id !== previous ? body.interaction : undefined;
      },
      { timeoutMs: 20_000, message: `run ${runId} to ask after ${previous}` },
    );

  beforeAll(async () => {
    [build, browser] = await Promise.all([buildConsole(), launchChromium()]);
    stack = await TestStack.start({
      agentsDir: writeAgents([everyKind, twoQuestions, writer, { ...writer, name: 'paged' }]),
      // The paging test opens more approvals than a member may start runs per minute.
      overrides: { consoleDir: build.dir, limitUserRunsPerMinute: 0, limitRunsPerMinute: 0, limitConcurrentRuns: 0, limitUserConcurrentRuns: 0, limitOpenInteractions: 0 },
    });
  }, 120_000);

  afterEach(async () => {
    await Promise.all(contexts.splice(0).map((context) => context.close()));
  });

  afterAll(async () => {
    await browser?.close();
    await stack?.close();
    build?.remove();
  });

  describe('serving', () => {
    it('serves index.html at / and client routes (no-cache, CSP), hashed assets with a long cache, and leaves /v1 and /healthz alone', async () => {
      const page = { headers: { accept: 'text/html,application/xhtml+xml,*/*;q=0.8' } };
      const index = await fetch(`${stack.url}/`, page);
      expect(index.status).toBe(200);
      expect(index.headers.get('content-type')).toMatch(/text\/html/);
      expect(index.headers.get('cache-control')).toBe('no-cache');
      const csp = index.headers.get('content-security-policy') ?? '';
      expect(csp).toContain("script-src 'self'");
      expect(csp).toContain("connect-src 'self';");
      expect(csp).toContain("frame-ancestors 'none'");
      const html = await index.text();
      const asset = /src="(\/assets\/[^"]+\.js)"/.exec(html)?.[1];
      expect(asset).toBeDefined();

      for (const route of ['/runs', '/runs/3f2a-b', '/approvals', '/runs/']) {
        const reply = await fetch(`${stack.url}${route}`, page);
        expect(reply.status).toBe(200);
        expect(await reply.text()).toBe(html);
      }
      // API clients (no text/html in Accept) keep the API's JSON 404 off the API's routes.
      const api = await fetch(`${stack.url}/runs`);
      expect(api.status).toBe(404);
      expect(((await api.json()) as { error: { code: string } }).error.code).toBe('not_found');
      const js = await fetch(`${stack.url}${asset}`);
      expect(js.status).toBe(200);
      expect(js.headers.get('cache-control')).toMatch(/max-age=31536000.*immutable/);

      const missing = await fetch(`${stack.url}/v1/nothing-here`, page);
      expect(missing.status).toBe(404);
      expect(((await missing.json()) as { error: { code: string } }).error.code).toBe('not_found');
      expect((await fetch(`${stack.url}/healthz`)).status).toBe(200);
      expect((await fetch(`${stack.url}/v1/runs`)).status).toBe(401);
      expect((await fetch(`${stack.url}/favicon.ico`, page)).status).toBe(404);
      expect((await fetch(`${stack.url}/`, { ...page, method: 'POST' })).status).toBe(404);
    });

    it('answers a short plain page when the console is not built', async () => {
      const gateway = await createGateway({ ...stack.config, consoleDir: `${build.dir}-missing` });
      try {
        await gateway.listen(0, '127.0.0.1');
        const url = (await gateway.getUrl()).replace('[::1]', '127.0.0.1');
        const res = await fetch(`${url}/`, { headers: { accept: 'text/html' } });
        expect(res.status).toBe(404);
        expect(res.headers.get('content-type')).toMatch(/text\/plain/);
        expect(await res.text()).toMatch(/console is not built[\s\S]*npm run build:console/);
        expect((await fetch(`${url}/healthz`)).status).toBe(200);
      } finally {
        await gateway.close();
      }
    });

    it('parley token --open prints the console URL with the token, and does not fail without an opener', async () => {
      const cli = new CliSession(['token', '--open', '--tenant', 'acme', '--sub', 'alice', '--role', 'member'], {
        PARLEY_URL: stack.url,
        PARLEY_JWT_SECRET: stack.config.jwtSecret,
        PATH: '/nonexistent',
      });
      expect(await cli.exit).toBe(0);
      const url = new URL(cli.out.trim());
      expect(`${url.origin}`).toBe(stack.url);
      expect(url.pathname).toBe('/');
      const token = url.searchParams.get('token');
      expect((await stack.http('GET', '/v1/runs', undefined, token)).status).toBe(200);
    });
  });

  describe('sign-in', () => {
    it('signs in with ?token=, removes it from the address bar, shows who you are, and signs out', async () => {
      const page = await open(alice(), '/runs');
      await expect(page.getByTestId('whoami').textContent()).resolves.toMatch(/acme\s*·\s*alice\s*·\s*member/);
      expect(page.url()).toBe(`${stack.url}/runs`);
      await page.getByTestId('connection').and(page.locator('[data-state="live"]')).waitFor();
      // A reload keeps the session (sessionStorage), and the token is not in the history entry.
      await page.reload();
      await page.getByTestId('whoami').waitFor();
      expect(page.url()).not.toContain('token');

      await page.getByTestId('sign-out').click();
      await page.getByTestId('token-input').waitFor();
      await expect(page.evaluate('window.sessionStorage.length')).resolves.toBe(0);

      await page.getByTestId('token-input').fill('not a token');
      await page.getByTestId('sign-in').click();
      await expect(page.getByTestId('sign-in-error').textContent()).resolves.toMatch(/not a Parley token/);
      await page.getByTestId('token-input').fill(ada());
      await page.getByTestId('sign-in').click();
      await expect(page.getByTestId('whoami').textContent()).resolves.toMatch(/acme\s*·\s*ada\s*·\s*admin/);
    });

    it('asks before a ?token= link switches a signed-in tab to another identity', async () => {
      const page = await open(alice(), '/runs');
      await expect(page.getByTestId('whoami').textContent()).resolves.toMatch(/acme\s*·\s*alice/);
      const stranger = stack.token({ tenant: 'globex', sub: 'mallory', role: 'admin' });
      const dialogs: string[] = [];

      page.once('dialog', (dialog) => {
        dialogs.push(dialog.message());
        void dialog.dismiss();
      });
      await page.goto(`${stack.url}/runs?token=${encodeURIComponent(stranger)}`);
      await expect(page.getByTestId('whoami').textContent()).resolves.toMatch(/acme\s*·\s*alice/);
      expect(page.url()).not.toContain('token');
      expect(dialogs[0]).toContain('mallory (admin) of tenant globex');

      page.once('dialog', (dialog) => void dialog.accept());
      await page.goto(`${stack.url}/runs?token=${encodeURIComponent(stranger)}`);
      await expect(page.getByTestId('whoami').textContent()).resolves.toMatch(/globex\s*·\s*mallory/);
    });

    it('shows the approval queue to admins only', async () => {
      const member = await open(alice());
      await member.getByTestId('whoami').waitFor();
      expect(await member.getByTestId('nav-approvals').count()).toBe(0);
      await member.goto(`${stack.url}/approvals`);
      await member.getByTestId('approvals-forbidden').waitFor();

      const admin = await open(ada());
      await admin.getByTestId('nav-approvals').click();
      await admin.getByRole('heading', { name: 'Approval queue' }).waitFor();
      expect(admin.url()).toBe(`${stack.url}/approvals`);
    });
  });

  describe('runs', () => {
    it('starts a run from the list, which updates live, and answers every interaction kind in place', async () => {
      const page = await open(alice());
      await page.getByTestId('start-agent').selectOption('every-kind');
      await page.getByTestId('start-task').fill('try every kind');
      await page.getByTestId('start-submit').click();
      await page.waitForURL(/\/runs\/[A-Za-z0-9_-]+$/);
      const runId = page.url().split('/').pop()!;
      const run = page.getByTestId('run-page');
      await run.getByTestId('chat-task').getByText('try every kind').waitFor();

      // free text
      let ix = await nextQuestion(runId);
      let card = question(page, ix.id);
      await card.getByText('What is the goal?').waitFor();
      await card.getByLabel('Your answer').fill('ship it');
      await card.getByTestId('answer-submit').click();
      expect((await answerEntry(runId, ix.id)).answer).toEqual({ kind: 'free_text', text: 'ship it' });
      await card.getByTestId('interaction-answer').getByText('ship it').waitFor();
      await page.getByTestId('chat-model').getByText('Got ship it.').waitFor();

      // single choice (labels and descriptions shown)
      ix = await nextQuestion(runId, ix.id);
      card = question(page, ix.id);
      await card.getByText('calm').waitFor();
      await card.getByTestId('answer-option-1').check();
      await card.getByTestId('answer-submit').click();
      expect((await answerEntry(runId, ix.id)).answer).toEqual({ kind: 'multiple_choice', choices: [1], labels: ['Green'] });

      // multi choice
      ix = await nextQuestion(runId, ix.id);
      card = question(page, ix.id);
      await card.getByTestId('answer-option-0').check();
      await card.getByTestId('answer-option-2').check();
      await card.getByTestId('answer-submit').click();
      expect((await answerEntry(runId, ix.id)).answer).toEqual({ kind: 'multiple_choice', choices: [0, 2], labels: ['Mon', 'Wed'] });
      await card.getByTestId('interaction-answer').getByText('Mon, Wed').waitFor();

      // confirm
      ix = await nextQuestion(runId, ix.id);
      card = question(page, ix.id);
      await card.getByText('Shall I go on?').waitFor();
      await card.getByTestId('confirm-yes').click();
      expect((await answerEntry(runId, ix.id)).answer).toEqual({ kind: 'confirm', confirmed: true });

      // edit a document
      ix = await nextQuestion(runId, ix.id);
      card = question(page, ix.id);
      await expect(card.getByTestId('edit-text').inputValue()).resolves.toBe('draft line');
      await card.getByTestId('edit-text').fill('fixed line\nand another');
      await card.getByTestId('answer-submit').click();
      expect((await answerEntry(runId, ix.id)).answer).toEqual({ kind: 'edit_text', text: 'fixed line\nand another' });

      // review a markdown document: rendered, sanitised, feedback sent
      ix = await nextQuestion(runId, ix.id);
      card = question(page, ix.id);
      const doc = card.getByTestId('review-document');
      await doc.locator('h1', { hasText: 'Plan' }).waitFor();
      await doc.locator('strong', { hasText: 'one' }).waitFor();
      expect(await doc.locator('script').count()).toBe(0);
      expect(await doc.locator('img[onerror]').count()).toBe(0);
      await card.getByTestId('review-feedback').fill('add dates');
      await card.getByTestId('review-approve').click();
      expect((await answerEntry(runId, ix.id)).answer).toEqual({ kind: 'review', approved: true, feedback: 'add dates' });
      await expect(page.evaluate('window.pwned')).resolves.toBeUndefined();

      // tool approval: a bad edit is refused next to the field, a good one runs the edited call
      ix = await nextQuestion(runId, ix.id);
      expect(ix.prompt.kind).toBe('tool_approval');
      card = question(page, ix.id);
      await expect(card.getByTestId('approval-telling').textContent()).resolves.toBe('notes/plan.md');
      await card.getByTestId('edit-args-toggle').check();
      await card.getByTestId('edit-args').fill('{ "path": 5, "content": "x" }');
      await card.getByTestId('approve-once').click();
      await expect(card.getByTestId('edit-args-error').textContent()).resolves.toMatch(/path/);
      await card.getByTestId('edit-args').fill('{ "path": "notes/edited.md", "content": "edited plan" }');
      await card.getByTestId('approve-run').click();
      const approval = (await answerEntry(runId, ix.id)).answer;
      expect(approval).toMatchObject({ kind: 'tool_approval', decision: 'allow_run', edited: true, input: { path: 'notes/edited.md', content: 'edited plan' } });

      // the run finishes, and the page and the list say so
      await run.getByTestId('run-end').getByText('Run finished').waitFor();
      await stack.waitForStatus(runId, 'finished');
      const toolCall = page.getByTestId('chat-tool-call').filter({ hasText: 'write_file' });
      await toolCall.locator('summary').click();
      await toolCall.getByText('notes/edited.md').first().waitFor();
      await page.getByTestId('nav-runs').click();
      await page.locator(`[data-testid="run-row"][data-run-id="${runId}"][data-status="finished"]`).waitFor();
    });

    it('shows a run started elsewhere appear and change live in the list', async () => {
      const page = await open(alice());
      await page.getByTestId('connection').and(page.locator('[data-state="live"]')).waitFor();
      const runId = await stack.startRun('two-questions', 'started by the API', alice());
      const row = page.locator(`[data-testid="run-row"][data-run-id="${runId}"]`);
      await row.and(page.locator('[data-status="waiting"]')).waitFor();
      await expect(row.getByTestId('run-status').textContent()).resolves.toMatch(/waiting\s*·\s*question/);
      await stack.http('POST', `/v1/runs/${runId}/stop`, undefined, alice());
      await row.and(page.locator('[data-status="cancelled"]')).waitFor();
    });

    it('sends a mid-run message and stops the run after a confirm; the unread message is marked discarded', async () => {
      const runId = await stack.startRun('two-questions', 'talk to me', alice());
      await stack.waitForQuestion(runId, 20_000, alice());
      const page = await open(alice(), `/runs/${runId}`);
      await page.getByTestId('message-text').fill('also bring snacks');
      await page.getByTestId('message-send').click();
      await page.locator('[data-testid="chat-user"][data-pending="true"]', { hasText: 'also bring snacks' }).waitFor();
      await waitFor(async () => (await stack.http('GET', `/v1/runs/${runId}/events`, undefined, alice())).body.events.some((e: any) => e.type === 'message.received'), {
        message: 'the message to reach the run',
      });

      await page.getByTestId('stop-run').click();
      await page.getByTestId('stop-cancel').click();
      expect((await stack.run(runId)).run.status).toBe('waiting');
      await page.getByTestId('stop-run').click();
      await page.getByTestId('stop-confirm').click();
      await page.getByTestId('run-end').getByText('Run cancelled').waitFor();
      await expect(page.getByTestId('run-end').textContent()).resolves.toContain('by alice');
      expect((await stack.run(runId)).run.status).toBe('cancelled');
      // The run never read the message: the page says so instead of waiting for it.
      await page.locator('[data-testid="chat-user"][data-pending="discarded"]', { hasText: 'also bring snacks' }).getByText('never read: the run ended first').waitFor();
    });
  });

  describe('approval queue', () => {
    it('counts down, shows claims, and removes a card live when another admin resolves it, naming who', async () => {
      const first = await open(ada(), '/approvals');
      const second = await open(bob(), '/approvals');
      await Promise.all([first, second].map((p) => p.getByTestId('connection').and(p.locator('[data-state="live"]')).waitFor()));
      const runId = await stack.startRun('writer', 'write out.txt', alice());
      const ix = await stack.waitForQuestion(runId, 20_000, ada());
      const cardIn = (page: Page) => page.locator(`[data-testid="approval-card"][data-interaction-id="${ix.id}"]`);

      await cardIn(first).waitFor();
      await cardIn(second).waitFor();
      await expect(cardIn(first).getByTestId('approval-countdown').textContent()).resolves.toMatch(/1[45]m \d\ds left/);

      await cardIn(second).getByTestId('claim').click();
      await cardIn(first).getByTestId('claim-holder').getByText('Claimed by bob').waitFor();
      await cardIn(second).getByTestId('claim-holder').getByText('You hold the claim').waitFor();

      await cardIn(second).getByTestId('approve-once').click();
      await cardIn(first).getByTestId('approval-resolved').getByText('resolved by bob (allowed once)').waitFor();
      await cardIn(first).waitFor({ state: 'detached', timeout: 20_000 });
      await cardIn(second).waitFor({ state: 'detached', timeout: 20_000 });
      await stack.waitForStatus(runId, 'finished');
    });

    it('filters by agent, tool and run, and removes a card answered through the API', async () => {
      const page = await open(ada(), '/approvals');
      await page.getByTestId('connection').and(page.locator('[data-state="live"]')).waitFor();
      const runId = await stack.startRun('writer', 'filtered', alice());
      const ix = await stack.waitForQuestion(runId, 20_000, ada());
      const card = page.locator(`[data-testid="approval-card"][data-interaction-id="${ix.id}"]`);
      await card.waitFor();

      await page.getByTestId('filter-tool').fill('delete_file');
      await page.getByTestId('filter-apply').click();
      await card.waitFor({ state: 'detached' });
      await page.getByTestId('filter-tool').fill('write_file');
      await page.getByTestId('filter-agent').fill('writer');
      await page.getByTestId('filter-runId').fill(runId);
      await page.getByTestId('filter-apply').click();
      await card.waitFor();

      expect((await stack.answer(ix.id, { decision: 'deny', reason: 'not now' }, bob())).status).toBe(200);
      await card.getByTestId('approval-resolved').getByText('resolved by bob (denied)').waitFor();
      await card.waitFor({ state: 'detached' });
    });
  });

  describe('approval queue, paged', () => {
    it('shows the queue 500 at a time: Next page goes on past the last card, First page goes back', async () => {
      const runs: string[] = [];
      for (let i = 0; i < PAGED; i += 25) {
        runs.push(...(await Promise.all(Array.from({ length: Math.min(25, PAGED - i) }, (_, n) => stack.startRun('paged', `page ${i + n}`, alice())))));
      }
      const queueHead = async () => (await stack.http('GET', '/v1/approvals?agent=paged&limit=500', undefined, ada())).body as { approvals: unknown[]; next: string | null };
      await waitFor(async () => (await queueHead()).next !== null, { timeoutMs: 60_000, message: `${PAGED} approvals to be open` });
      const page = await open(ada(), '/approvals');
      await page.getByTestId('filter-agent').fill('paged');
      await page.getByTestId('filter-apply').click();
      const cards = page.getByTestId('approval-card');
      await waitFor(async () => (await cards.count()) === 500, { timeoutMs: 20_000, message: 'the first page of 500 cards' });
      expect(await page.getByTestId('approvals-first').count()).toBe(0);

      await page.getByTestId('approvals-next').click();
      await waitFor(async () => (await cards.count()) === PAGED - 500, { timeoutMs: 20_000, message: 'the second page' });
      expect(await page.getByTestId('approvals-next').count()).toBe(0);
      const onPageTwo = await cards.first().getAttribute('data-interaction-id');
      const firstPage = (await queueHead()).approvals as Array<{ id: string }>;
      expect(firstPage.map((ix) => ix.id)).not.toContain(onPageTwo);

      await page.getByTestId('approvals-first').click();
      await waitFor(async () => (await cards.count()) === 500, { timeoutMs: 20_000, message: 'the first page of 500 cards' });
      await Promise.all(runs.map((runId) => stack.http('POST', `/v1/runs/${runId}/stop`, {}, alice())));
    }, 180_000);
  });

  describe('live', () => {
    it('reconnects after the gateway restarts and shows the events it missed, once', async () => {
      // Each step has its own named bound, so a step that hangs says which it was.
      const runId = await stack.startRun('two-questions', 'survive a restart', alice());
      const first = await stack.waitForQuestion(runId, 20_000, alice());
      const page = await within('open the run page', 30_000, () => open(alice(), `/runs/${runId}`));
      await question(page, first.id).getByTestId('answer-text').waitFor();
      const connection = page.getByTestId('connection');
      await connection.and(page.locator('[data-state="live"]')).waitFor();

      const port = Number(new URL(stack.url).port);
      await within('stop the gateway', 20_000, () => stack.stopGateway());
      await connection.and(page.locator('[data-state="reconnecting"]')).waitFor();
      // Another gateway takes the answer while this one is down; the run goes on to its second question.
      const other = await within('start another gateway', 20_000, async () => {
        const app = await createGateway(stack.config);
        await app.listen(0, '127.0.0.1');
        return app;
      });
      try {
        const otherUrl = (await other.getUrl()).replace('[::1]', '127.0.0.1');
        const res = await within('answer through the other gateway', 20_000, () =>
          fetch(`${otherUrl}/v1/interactions/${first.id}/answer`, {
            method: 'POST',
            headers: { authorization: `Bearer ${alice()}`, 'content-type': 'application/json' },
            body: JSON.stringify({ text: 'while you were away' }),
            signal: AbortSignal.timeout(20_000),
          }),
        );
        expect(res.status).toBe(200);
        await waitFor(
          async () => {
            const r = await fetch(`${otherUrl}/v1/runs/${runId}`, { headers: { authorization: `Bearer ${alice()}` }, signal: AbortSignal.timeout(5_000) });
            const body = (await r.json()) as { run: { status: string }; interaction?: { id: string } };
            return body.run.status === 'waiting' && body.interaction && body.interaction.id !== first.id;
          },
          { message: 'the run to ask its second question', timeoutMs: 20_000 },
        );
      } finally {
        await within('close the other gateway', 20_000, () => other.close());
      }
      await within('restart the gateway on its port', 20_000, async () => {
        stack.gateway = await createGateway(stack.config);
        await stack.gateway.listen(port, '127.0.0.1');
      });

      await connection.and(page.locator('[data-state="live"]')).waitFor({ timeout: 30_000 });
      const second = await stack.waitForQuestion(runId, 20_000, alice());
      // The replay brought the console up to the run's newest event.
      const events = (await within('read the run events', 20_000, () => stack.http('GET', `/v1/runs/${runId}/events`, undefined, alice()))).body.events;
      const newest = events[events.length - 1].seq;
      await waitFor(async () => Number(await connection.getAttribute('data-seq')) >= newest, { message: `the console to reach seq ${newest}`, timeoutMs: 20_000 });
      await question(page, first.id).getByTestId('interaction-answer').getByText('while you were away').waitFor();
      await question(page, second.id).getByText('Second question?').waitFor();
      expect(await page.getByTestId('chat-model').filter({ hasText: 'Thanks for while you were away; question two.' }).count()).toBe(1);
      expect(await page.getByTestId('interaction').count()).toBe(2);

      // Still live after the replay: the second answer goes through and the run finishes on the page.
      await question(page, second.id).getByTestId('answer-text').fill('back again');
      await question(page, second.id).getByTestId('answer-submit').click();
      await page.getByTestId('run-summary').getByText('finished with back again').waitFor();
      expect(await page.getByTestId('chat-model').count()).toBe(2);
      // Many steps (a gateway down and up, a second gateway, socket.io's reconnect backoff), each with
      // its own bound: the whole may take over a minute on a loaded CI machine.
    }, 150_000);
  });
});
