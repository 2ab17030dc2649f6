import { useState } from 'preact/hooks';
import { Markdown } from '../Markdown';
import { AnswerError, useAnswerSubmit } from './answer.submit';

export function ReviewForm({ interactionId, markdown, onAnswered }: { interactionId: string; markdown: string; onAnswered?: () => void }) {
  const [feedback, setFeedback] = useState('');
  const { busy, error, submit } = useAnswerSubmit(interactionId, onAnswered);
  const id = `review-feedback-${interactionId}`;
  const send = (approved: boolean): void => {
    const trimmed = feedback.trim();
    void submit(trimmed === '' ? { approved } : { approved, feedback: trimmed });
  };
  return (
    <div class="answer-form">
      <Markdown source={markdown} testId="review-document" />
      <label for={id}>Feedback (optional)</label>
      <textarea id={id} data-testid="review-feedback" rows={3} value={feedback} onInput={(event) => setFeedback(event.currentTarget.value)} />
      <div class="actions">
        <button type="button" data-testid="review-approve" disabled={busy} onClick={() => send(true)}>
          Approve
        </button>
        <button type="button" class="secondary" data-testid="review-reject" disabled={busy} onClick={() => send(false)}>
          Request changes
        </button>
      </div>
      <AnswerError error={error} />
    </div>
  );
}
