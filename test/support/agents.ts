/** Scripted agents the end-to-end tests share. */
export function askerAgent(name = 'asker', timeoutSecs = 0, maxAsk = 3) {
  return {
    name,
    model: {
      provider: 'scripted',
      turns: [
        { text: 'One question.', tool_calls: [{ name: 'ask_user_text', input: { question: 'What now?' } }] },
        { tool_calls: [{ name: 'finish', input: { summary: 'got: {{last_answer}}' } }] },
      ],
    },
    tools: ['ask_user_text', 'finish', 'write_file'],
    permissions: { write_file: 'allow' },
    limits: { max_iterations: 5, max_ask_user_per_loop: maxAsk, interaction_timeout_secs: timeoutSecs },
  };
}

export function quickAgent(name = 'quick') {
  return {
    name,
    model: {
      provider: 'scripted',
      turns: [
        { tool_calls: [{ name: 'write_file', input: { path: 'out.txt', content: 'hello' } }] },
        { tool_calls: [{ name: 'finish', input: { summary: 'wrote out.txt' } }] },
      ],
    },
    tools: ['write_file', 'finish'],
    permissions: { write_file: 'allow' },
    limits: { max_iterations: 5 },
  };
}
