import { useState } from 'preact/hooks';
import type { Prompt } from '../../api/types';
import { AnswerError, useAnswerSubmit } from './answer.submit';

type ChoicePrompt = Extract<Prompt, { kind: 'multiple_choice' }>;

export function ChoiceForm({ interactionId, prompt, onAnswered }: { interactionId: string; prompt: ChoicePrompt; onAnswered?: () => void }) {
  const [picked, setPicked] = useState<number[]>([]);
  const { busy, error, submit } = useAnswerSubmit(interactionId, onAnswered);
  const toggle = (index: number, on: boolean): void => {
    if (prompt.multi) {
      setPicked((current) => (on ? [...current, index].sort((a, b) => a - b) : current.filter((i) => i !== index)));
    } else {
      setPicked([index]);
    }
  };
  return (
    <form
      class="answer-form"
      onSubmit={(event) => {
        event.preventDefault();
        void submit(prompt.multi ? { choices: picked } : { choice: picked[0] });
      }}
    >
      <fieldset>
        <legend>{prompt.multi ? 'Pick one or more' : 'Pick one'}</legend>
        {prompt.options.map((option, index) => (
          <label class="option" key={option.label}>
            <input
              type={prompt.multi ? 'checkbox' : 'radio'}
              name={`choice-${interactionId}`}
              data-testid={`answer-option-${index}`}
              checked={picked.includes(index)}
              onChange={(event) => toggle(index, event.currentTarget.checked)}
            />
            <span class="option-label">{option.label}</span>
            {option.description ? <span class="option-description"> — {option.description}</span> : null}
          </label>
        ))}
      </fieldset>
      <div class="actions">
        <button type="submit" data-testid="answer-submit" disabled={busy || picked.length === 0}>
          Send answer
        </button>
      </div>
      <AnswerError error={error} />
    </form>
  );
}
