import type { AnswerBody, Interaction } from '@parley/contracts';
import type { ApiClient } from '../api/api.client';
import { ApiError } from '../api/api.error';
import { answeredWith } from '../api/answer.match';

/**
 * Sends over HTTP an answer the socket could not confirm (its ack timed out, or the connection
 * dropped). The socket may have delivered it all the same, and then HTTP gets a 409 for our own
 * answer: when the interaction was resolved by `subject` with this very answer, it was sent.
 */
export async function answerOverHttp(api: ApiClient, interactionId: string, body: AnswerBody, subject: string | undefined): Promise<Interaction> {
  try {
    return await api.answer(interactionId, body);
  } catch (error) {
    if (!(error instanceof ApiError) || error.status !== 409 || subject === undefined) {
      throw error;
    }
    const current = await api.getInteraction(interactionId).catch(() => undefined);
    if (current !== undefined && answeredWith(current, body, subject)) {
      return current;
    }
    throw error;
  }
}
