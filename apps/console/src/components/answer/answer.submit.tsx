import { useState } from 'preact/hooks';
import { ApiError } from '../../api/api.error';
import type { AnswerBody } from '../../api/types';
import { useApp } from '../../app.context';
import { FormError } from '../FormError';

export interface AnswerSubmit {
  busy: boolean;
  error?: ApiError;
  submit: (body: AnswerBody) => Promise<boolean>;
}

/** Sends an answer over HTTP; the gateway's refusal (422 naming the field, 409 with the winner) is kept for display. */
export function useAnswerSubmit(interactionId: string, onAnswered?: () => void): AnswerSubmit {
  const { http } = useApp();
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<ApiError>();
  const submit = async (body: AnswerBody): Promise<boolean> => {
    setBusy(true);
    setError(undefined);
    try {
      await http.answer(interactionId, body);
      onAnswered?.();
      return true;
    } catch (caught) {
      setError(caught instanceof ApiError ? caught : new ApiError(0, 'internal', String(caught)));
      return false;
    } finally {
      setBusy(false);
    }
  };
  return { busy, error, submit };
}

/** An answer's error; reasons for fields shown next to their own input are not repeated here. */
export function AnswerError({ error, fields = [] }: { error?: ApiError; fields?: string[] }) {
  const shownElsewhere = error !== undefined && fields.some((field) => error.reasonFor(field) !== undefined);
  return <FormError message={error && (shownElsewhere ? `${error.code}: see the field above` : error.message)} testId="answer-error" />;
}
