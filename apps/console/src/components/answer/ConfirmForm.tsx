import { AnswerError, useAnswerSubmit } from './answer.submit';

export function ConfirmForm({ interactionId, onAnswered }: { interactionId: string; onAnswered?: () => void }) {
  const { busy, error, submit } = useAnswerSubmit(interactionId, onAnswered);
  return (
    <div class="answer-form">
      <div class="actions">
        <button type="button" data-testid="confirm-yes" disabled={busy} onClick={() => void submit({ confirmed: true })}>
          Yes
        </button>
        <button type="button" class="secondary" data-testid="confirm-no" disabled={busy} onClick={() => void submit({ confirmed: false })}>
          No
        </button>
      </div>
      <AnswerError error={error} />
    </div>
  );
}
