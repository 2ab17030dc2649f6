/**
 * `npm run screenshots`: writes docs/console-runs.png, docs/console-run.png and
 * docs/console-approvals.png from a real stack (the demo agent) in headless chromium.
 * Not a test (jest runs it only through that script's --testMatch).
 */
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { buildConsole, launchChromium, openConsole } from '../support/browser';
import { TestStack } from '../support/stack';
import { waitFor } from '../support/wait-for';

const DOCS = join(__dirname, '..', '..', 'docs');

it('writes the console screenshots into docs/', async () => {
  const build = await buildConsole();
  const browser: Browser = await launchChromium();
  const stack = await TestStack.start({ overrides: { consoleDir: build.dir } });
  try {
    const admin = stack.token({ tenant: 'acme', sub: 'ada', role: 'admin' });
    const alice = stack.token({ tenant: 'acme', sub: 'alice', role: 'member' });
    const bob = stack.token({ tenant: 'acme', sub: 'bob', role: 'member' });
    const nextQuestion = async (runId: string, previous?: string) =>
      waitFor(
        async () => {
          const body = await stack.run(runId, admin);
          return body.run.status === 'waiting' && body.interaction && body.interaction.id !== previous ? body.interaction : undefined;
        },
        { timeoutMs: 20_000, message: `run ${runId} to ask` },
      );
    /** Answers the demo's questions up to its approval (write_file). */
    const toApproval = async (runId: string, token: string) => {
      const choice = await nextQuestion(runId);
      await stack.answer(choice.id, { choice: 1 }, token);
      const text = await nextQuestion(runId, choice.id);
      await stack.answer(text.id, { text: 'Budget 5k, in May, near Lyon' }, token);
      return nextQuestion(runId, text.id);
    };

    // A finished run, two runs waiting on approvals (one claimed), a stopped one, and one asking a question.
    const finished = await stack.startRun('demo', 'Plan the spring workshop', alice);
    const approval = await toApproval(finished, alice);
    await stack.answer(approval.id, { decision: 'allow_once' }, alice);
    const review = await nextQuestion(finished, approval.id);
    await stack.answer(review.id, { approved: true, feedback: 'Looks good' }, alice);
    await stack.waitForStatus(finished, 'finished');

    const stopped = await stack.startRun('demo', 'Organise a farewell party', bob);
    await nextQuestion(stopped);
    await stack.http('POST', `/v1/runs/${stopped}/stop`, undefined, bob);

    const waitingA = await stack.startRun('demo', 'Plan our team offsite', alice);
    const claimed = await toApproval(waitingA, alice);
    await stack.http('POST', `/v1/approvals/${claimed.id}/claim`, undefined, stack.token({ tenant: 'acme', sub: 'bob', role: 'admin' }));
    const waitingB = await stack.startRun('demo', 'Quarterly planning retreat', bob);
    await toApproval(waitingB, bob);

    const asking = await stack.startRun('demo', 'A summer party for the whole floor', alice);
    const choice = await nextQuestion(asking);
    await stack.answer(choice.id, { choice: 2 }, alice);
    await nextQuestion(asking, choice.id);

    const { page } = await openConsole(browser, stack.url, admin, '/runs');
    await page.getByTestId('connection').and(page.locator('[data-state="live"]')).waitFor();
    await page.locator(`[data-testid="run-row"][data-run-id="${finished}"][data-status="finished"]`).waitFor();
    await page.screenshot({ path: join(DOCS, 'console-runs.png'), fullPage: true });

    await page.locator(`[data-testid="run-row"][data-run-id="${asking}"] [data-testid="run-link"]`).click();
    await page.getByTestId('answer-text').waitFor();
    await page.getByTestId('answer-text').fill('Rooftop, 40 people, a Friday in July');
    await page.screenshot({ path: join(DOCS, 'console-run.png'), fullPage: true });

    await page.getByTestId('nav-approvals').click();
    await page.getByTestId('approval-card').nth(1).waitFor();
    await page.getByTestId('approval-card').filter({ has: page.getByTestId('edit-args-toggle') }).first().getByTestId('edit-args-toggle').check();
    await page.screenshot({ path: join(DOCS, 'console-approvals.png'), fullPage: true });
  } finally {
    await browser.close();
    await stack.close();
    build.remove();
  }
});
