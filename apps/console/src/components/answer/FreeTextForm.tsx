import { useState } from 'preact/hooks';
import { AnswerError, useAnswerSubmit } from './answer.submit';

export function FreeTextForm({ interactionId, onAnswered }: { interactionId: string; onAnswered?: () => void }) {
  const [text, setText] = useState('');
  const { busy, error, submit } = useAnswerSubmit(interactionId, onAnswered);
  const id = `answer-text-${interactionId}`;
  return (
    <form
      class="answer-form"
      onSubmit={(event) => {
        event.preventDefault();
        void submit({ text });
      }}
    >
      <label for={id}>Your answer</label>
      <textarea id={id} data-testid="answer-text" rows={3} value={text} onInput={(event) => setText(event.currentTarget.value)} />
      <div class="actions">
        <button type="submit" data-testid="answer-submit" disabled={busy}>
          Send answer
        </button>
      </div>
      <AnswerError error={error} />
    </form>
  );
}
