/** The scripted agent every chaos run plays: three questions (one an approval) and workspace writes. */
export const CHAOS_AGENT = 'chaos';
export const CHAOS_TIMEOUT_SECS = 4;
export const CHAOS_OPTIONS = ['red', 'green', 'blue'];
/** The file the shell step appends one line to: a second application would show as a second line. */
export const JOURNAL = 'journal.txt';
export const CODENAME = 'codename.txt';

export function chaosAgent() {
  return {
    name: CHAOS_AGENT,
    model: {
      provider: 'scripted',
      turns: [
        { tool_calls: [{ name: 'ask_user_text', input: { question: 'Codename?' } }] },
        // permission ask: parks on a tool_approval; the content is the answer to the question above.
        { tool_calls: [{ name: 'write_file', input: { path: CODENAME, content: '{{last_answer}}' } }] },
        { tool_calls: [{ name: 'ask_user_choice', input: { question: 'Colour?', options: CHAOS_OPTIONS.map((label) => ({ label })) } }] },
        // An append, not a replace: a step applied twice leaves two lines.
        { tool_calls: [{ name: 'shell', input: { command: `echo 'colour={{last_answer}}' >> ${JOURNAL}` } }] },
        { tool_calls: [{ name: 'finish', input: { summary: 'done' } }] },
      ],
    },
    tools: ['ask_user_text', 'ask_user_choice', 'write_file', 'shell', 'finish'],
    permissions: { write_file: 'ask', shell: 'allow' },
    limits: { max_iterations: 10, max_ask_user_per_loop: 3, interaction_timeout_secs: CHAOS_TIMEOUT_SECS },
  };
}

/** The text answer to a question: derived from its interaction id, so the checker can recompute it. */
export function textAnswerFor(interactionId: string): string {
  return `ans-${interactionId.replace(/[^a-zA-Z0-9]/g, '').slice(0, 12)}`;
}

export function choiceFor(interactionId: string): number {
  let sum = 0;
  for (const char of interactionId) {
    sum = (sum * 31 + char.charCodeAt(0)) % 1_000_003;
  }
  return sum % CHAOS_OPTIONS.length;
}
