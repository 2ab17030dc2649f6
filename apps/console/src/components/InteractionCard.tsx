import type { Interaction, LogEntryOf, Prompt } from '../api/types';
import { actorName, countdown, describeAnswer } from '../format';
import { useNow } from '../live/live.hooks';
import { ApprovalForm } from './answer/ApprovalForm';
import { ChoiceForm } from './answer/ChoiceForm';
import { ConfirmForm } from './answer/ConfirmForm';
import { EditTextForm } from './answer/EditTextForm';
import { FreeTextForm } from './answer/FreeTextForm';
import { ReviewForm } from './answer/ReviewForm';
import { Markdown } from './Markdown';

const KIND_LABELS: Record<Prompt['kind'], string> = {
  free_text: 'Question',
  multiple_choice: 'Choice',
  confirm: 'Confirm',
  edit_text: 'Edit the document',
  review: 'Review',
  tool_approval: 'Approval needed',
};

export interface InteractionCardProps {
  interactionId: string;
  prompt: Prompt;
  /** The interaction as the gateway has it (status, deadline, claim); absent until it is opened. */
  interaction?: Interaction;
  /** The log's record of how it was resolved. */
  resolution?: LogEntryOf<'answer'>;
  checkpoint?: { stage: string; point: string };
  onAnswered?: () => void;
}

/** One question in the conversation: its prompt, then either the answer form or how it was resolved. */
export function InteractionCard({ interactionId, prompt, interaction, resolution, checkpoint, onAnswered }: InteractionCardProps) {
  const open = resolution === undefined && interaction?.status === 'open';
  const status = resolution?.outcome ?? interaction?.status ?? 'opening';
  return (
    <article class={`interaction ${open ? 'open' : 'closed'} kind-${prompt.kind}`} data-testid="interaction" data-interaction-id={interactionId} data-kind={prompt.kind} data-status={status}>
      <header>
        <span class="interaction-kind">{checkpoint ? `Checkpoint ${checkpoint.point} (stage ${checkpoint.stage})` : KIND_LABELS[prompt.kind]}</span>
        {open && interaction ? <Deadline deadline={interaction.deadline} /> : null}
        {open && interaction?.claim ? <span class="claim">claimed by {interaction.claim.subject}</span> : null}
      </header>
      {prompt.kind === 'review' ? <h3 class="prompt">{prompt.prompt}</h3> : <p class="prompt">{prompt.prompt}</p>}
      {open ? (
        <AnswerForm interactionId={interactionId} prompt={prompt} onAnswered={onAnswered} />
      ) : resolution ? (
        <Resolution prompt={prompt} resolution={resolution} />
      ) : status === 'opening' ? (
        <p class="muted">Waiting for the question to open…</p>
      ) : (
        <p class="muted">{status}</p>
      )}
    </article>
  );
}

function Deadline({ deadline }: { deadline: string | null }) {
  const now = useNow();
  return deadline === null ? null : (
    <span class="deadline" title={new Date(deadline).toLocaleString()}>
      {countdown(deadline, now)}
    </span>
  );
}

function AnswerForm({ interactionId, prompt, onAnswered }: { interactionId: string; prompt: Prompt; onAnswered?: () => void }) {
  switch (prompt.kind) {
    case 'free_text':
      return <FreeTextForm interactionId={interactionId} onAnswered={onAnswered} />;
    case 'multiple_choice':
      return <ChoiceForm interactionId={interactionId} prompt={prompt} onAnswered={onAnswered} />;
    case 'confirm':
      return <ConfirmForm interactionId={interactionId} onAnswered={onAnswered} />;
    case 'edit_text':
      return <EditTextForm interactionId={interactionId} document={prompt.document} onAnswered={onAnswered} />;
    case 'review':
      return <ReviewForm interactionId={interactionId} markdown={prompt.markdown} onAnswered={onAnswered} />;
    case 'tool_approval':
      return <ApprovalForm interactionId={interactionId} prompt={prompt} onAnswered={onAnswered} />;
  }
}

function Resolution({ prompt, resolution }: { prompt: Prompt; resolution: LogEntryOf<'answer'> }) {
  const by = actorName(resolution.by);
  if (resolution.outcome !== 'answered' || !resolution.answer) {
    const what = resolution.outcome === 'expired' ? 'No answer before the deadline' : 'Cancelled with the run';
    return (
      <p class="resolution muted" data-testid="interaction-answer">
        {what}
        {prompt.kind === 'tool_approval' ? ' (denied)' : ''}
      </p>
    );
  }
  const { answer } = resolution;
  return (
    <div class="resolution" data-testid="interaction-answer">
      <p>
        <span class="by">{by}:</span> {describeAnswer(answer)}
      </p>
      {answer.kind === 'edit_text' ? (
        <details>
          <summary>The edited document</summary>
          <pre>{answer.text}</pre>
        </details>
      ) : null}
      {prompt.kind === 'review' ? (
        <details>
          <summary>The reviewed document</summary>
          <Markdown source={prompt.markdown} />
        </details>
      ) : null}
    </div>
  );
}
