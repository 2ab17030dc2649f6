import { useState } from 'preact/hooks';
import type { AnswerBody, ApprovalDecision, Prompt } from '../../api/types';
import { prettyJson } from '../../format';
import { AnswerError, useAnswerSubmit } from './answer.submit';

type ApprovalPrompt = Extract<Prompt, { kind: 'tool_approval' }>;

/** The four choices of a tool approval, with optional argument editing and a folder to grant. */
export function ApprovalForm({ interactionId, prompt, onAnswered }: { interactionId: string; prompt: ApprovalPrompt; onAnswered?: () => void }) {
  const { busy, error, submit } = useAnswerSubmit(interactionId, onAnswered);
  const [editing, setEditing] = useState(false);
  const [argsText, setArgsText] = useState(() => prettyJson(prompt.input));
  const [argsProblem, setArgsProblem] = useState<string>();
  const [reason, setReason] = useState('');
  const [directory, setDirectory] = useState<string>('');
  const { grant } = prompt;
  const directories = grant.reusable ? (grant.directories ?? []) : [];
  const ids = { args: `args-${interactionId}`, reason: `reason-${interactionId}`, dir: `dir-${interactionId}` };

  const allow = (decision: Exclude<ApprovalDecision, 'deny'>): void => {
    const body: AnswerBody = { decision };
    if (editing) {
      try {
        const parsed = JSON.parse(argsText) as unknown;
        if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
          setArgsProblem('the arguments must be a JSON object');
          return;
        }
        body.input = parsed as Record<string, unknown>;
      } catch (caught) {
        setArgsProblem(`not valid JSON: ${caught instanceof Error ? caught.message : String(caught)}`);
        return;
      }
    }
    setArgsProblem(undefined);
    if (decision !== 'allow_once' && directory !== '') {
      // "" in the select means "this path only"; a folder choice is sent as the folder itself.
      body.directory = directory === '/' ? '' : directory;
    }
    void submit(body);
  };
  const deny = (): void => {
    const trimmed = reason.trim();
    void submit(trimmed === '' ? { decision: 'deny' } : { decision: 'deny', reason: trimmed });
  };
  const inputReason = argsProblem ?? error?.reasonFor('input');

  return (
    <div class="answer-form approval-form">
      <dl class="approval-facts">
        <dt>Tool</dt>
        <dd data-testid="approval-tool">{prompt.tool}</dd>
        <dt>{prompt.telling.label}</dt>
        <dd>
          <code data-testid="approval-telling">{prompt.telling.value}</code>
        </dd>
        <dt>Stage</dt>
        <dd>{prompt.stage}</dd>
        <dt>Scoped grant</dt>
        <dd>{grant.reusable ? grant.description : grant.reason}</dd>
      </dl>
      <details>
        <summary>Arguments</summary>
        <pre>{prettyJson(prompt.input)}</pre>
      </details>
      <label class="inline">
        <input type="checkbox" data-testid="edit-args-toggle" checked={editing} onChange={(event) => setEditing(event.currentTarget.checked)} />
        Edit the arguments before allowing
      </label>
      {editing ? (
        <div class={`field${inputReason ? ' invalid' : ''}`}>
          <label for={ids.args}>Arguments (JSON)</label>
          <textarea
            id={ids.args}
            class="code"
            data-testid="edit-args"
            rows={Math.min(16, argsText.split('\n').length + 1)}
            value={argsText}
            aria-invalid={inputReason ? 'true' : 'false'}
            aria-describedby={inputReason ? `${ids.args}-error` : undefined}
            onInput={(event) => setArgsText(event.currentTarget.value)}
          />
          {inputReason ? (
            <p class="field-error" id={`${ids.args}-error`} role="alert" data-testid="edit-args-error">
              {inputReason}
            </p>
          ) : null}
        </div>
      ) : null}
      {directories.length > 0 ? (
        <div class="field">
          <label for={ids.dir}>Grant for the stage or run covers</label>
          <select id={ids.dir} data-testid="grant-directory" value={directory} onChange={(event) => setDirectory(event.currentTarget.value)}>
            <option value="">this path only</option>
            {directories.map((dir) => (
              <option key={dir} value={dir === '' ? '/' : dir}>
                {dir === '' ? 'the whole workspace' : `everything under ${dir}`}
              </option>
            ))}
          </select>
          {error?.reasonFor('directory') ? <p class="field-error">{error.reasonFor('directory')}</p> : null}
        </div>
      ) : null}
      <div class="actions">
        <button type="button" data-testid="approve-once" disabled={busy} onClick={() => allow('allow_once')}>
          Allow once
        </button>
        <button
          type="button"
          data-testid="approve-stage"
          disabled={busy || !grant.reusable}
          title={grant.reusable ? undefined : grant.reason}
          onClick={() => allow('allow_stage')}
        >
          Allow for this stage
        </button>
        <button type="button" data-testid="approve-run" disabled={busy || !grant.reusable} title={grant.reusable ? undefined : grant.reason} onClick={() => allow('allow_run')}>
          Allow for this run
        </button>
      </div>
      <div class="field">
        <label for={ids.reason}>Reason for denying (shown to the model, optional)</label>
        <input id={ids.reason} type="text" data-testid="deny-reason" maxLength={2000} value={reason} onInput={(event) => setReason(event.currentTarget.value)} />
        {error?.reasonFor('reason') ? <p class="field-error">{error.reasonFor('reason')}</p> : null}
      </div>
      <div class="actions">
        <button type="button" class="danger" data-testid="approve-deny" disabled={busy} onClick={deny}>
          Deny
        </button>
      </div>
      <AnswerError error={error} fields={['input', 'directory', 'reason']} />
    </div>
  );
}
