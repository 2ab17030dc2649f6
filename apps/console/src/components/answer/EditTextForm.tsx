import { useState } from 'preact/hooks';
import { AnswerError, useAnswerSubmit } from './answer.submit';

export function EditTextForm({ interactionId, document, onAnswered }: { interactionId: string; document: string; onAnswered?: () => void }) {
  const [text, setText] = useState(document);
  const { busy, error, submit } = useAnswerSubmit(interactionId, onAnswered);
  const id = `edit-text-${interactionId}`;
  return (
    <form
      class="answer-form"
      onSubmit={(event) => {
        event.preventDefault();
        void submit({ text });
      }}
    >
      <label for={id}>Document</label>
      <textarea id={id} class="document" data-testid="edit-text" rows={Math.min(24, Math.max(6, text.split('\n').length + 1))} value={text} onInput={(event) => setText(event.currentTarget.value)} />
      <div class="actions">
        <button type="submit" data-testid="answer-submit" disabled={busy}>
          Save document
        </button>
        <button type="button" class="secondary" disabled={busy || text === document} onClick={() => setText(document)}>
          Undo my changes
        </button>
      </div>
      <AnswerError error={error} />
    </form>
  );
}
