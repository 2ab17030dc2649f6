import { ModelError } from './model.errors';
import type { ModelMessage, ModelRequest } from './model.types';
import { ScriptedModelAdapter, type ScriptedTurnInput } from './scripted.adapter';

const SCRIPT: ScriptedTurnInput[] = [
  { text: 'Let me ask you.', tool_calls: [{ name: 'ask_user', input: { question: 'Favourite colour?' } }] },
  {
    text: 'You said {{last_answer}}.',
    tool_calls: [
      { name: 'write_file', input: { path: 'colour.txt', content: '{{last_answer}}', meta: { tags: ['{{last_answer}}!', 7, null] } } },
      { name: 'read_file', input: { path: 'colour.txt' } },
    ],
  },
  { text: 'Done.' },
];

const user = (text: string): ModelMessage => ({ role: 'user', content: [{ type: 'text', text }] });
const assistantCalling = (...ids: string[]): ModelMessage => ({
  role: 'assistant',
  content: ids.map((id) => ({ type: 'tool_use', id, name: 'tool', input: {} })),
});
const results = (...entries: Array<[string, string]>): ModelMessage => ({
  role: 'user',
  content: entries.map(([id, content]) => ({ type: 'tool_result', tool_use_id: id, content })),
});

function request(messages: ModelMessage[], extra: Partial<ModelRequest> = {}): ModelRequest {
  return { system: '', messages, tools: [], ...extra };
}

describe('ScriptedModelAdapter', () => {
  it('plays the turn given by the number of assistant messages so far', async () => {
    const adapter = new ScriptedModelAdapter(SCRIPT);

    const first = await adapter.complete(request([user('hi')]));
    expect(first).toEqual({
      text: 'Let me ask you.',
      toolCalls: [{ id: 'scripted_0_0', name: 'ask_user', input: { question: 'Favourite colour?' } }],
      stopReason: 'tool_use',
    });

    const history = [user('hi'), assistantCalling('scripted_0_0'), results(['scripted_0_0', '{"ok":true,"answer":"blue"}'])];
    const second = await adapter.complete(request(history));
    expect(second.toolCalls.map((call) => call.id)).toEqual(['scripted_1_0', 'scripted_1_1']);

    const third = await adapter.complete(
      request([...history, assistantCalling('scripted_1_0', 'scripted_1_1'), results(['scripted_1_0', 'ok'], ['scripted_1_1', 'ok'])]),
    );
    expect(third).toEqual({ text: 'Done.', toolCalls: [], stopReason: 'end_turn' });
  });

  it('plays the same turn again when a step is re-run on the same history', async () => {
    const adapter = new ScriptedModelAdapter(SCRIPT);
    const history = [user('hi'), assistantCalling('scripted_0_0'), results(['scripted_0_0', '{"ok":true,"answer":"blue"}'])];

    expect(await adapter.complete(request(history))).toEqual(await adapter.complete(request(history)));
    expect(await new ScriptedModelAdapter(SCRIPT).complete(request(history))).toEqual(await adapter.complete(request(history)));
  });

  it('returns an empty end_turn past the last turn, without deltas', async () => {
    const adapter = new ScriptedModelAdapter([{ text: 'only turn' }]);
    const deltas: string[] = [];

    const turn = await adapter.complete(request([user('hi'), { role: 'assistant', content: [{ type: 'text', text: 'only turn' }] }, user('more?')], {
      onTextDelta: (text) => deltas.push(text),
    }));

    expect(turn).toEqual({ text: '', toolCalls: [], stopReason: 'end_turn' });
    expect(deltas).toEqual([]);
  });

  it('fills {{last_answer}} in the text and deep in tool inputs from the latest tool_result', async () => {
    const adapter = new ScriptedModelAdapter(SCRIPT);
    const history = [
      user('hi'),
      assistantCalling('a'),
      results(['a', '{"ok":true,"answer":"red"}'], ['b', '{"ok":true,"answer":"blue"}']),
    ];

    const turn = await adapter.complete(request(history));

    expect(turn.text).toBe('You said blue.');
    expect(turn.toolCalls[0].input).toEqual({ path: 'colour.txt', content: 'blue', meta: { tags: ['blue!', 7, null] } });
    expect(SCRIPT[1].tool_calls?.[0].input).toEqual({
      path: 'colour.txt',
      content: '{{last_answer}}',
      meta: { tags: ['{{last_answer}}!', 7, null] },
    });
  });

  it.each([
    ['a string answer as is', '{"ok":true,"answer":"yes"}', 'yes'],
    ['a list of strings joined', '{"ok":true,"answer":["red","green"]}', 'red, green'],
    ['a number as JSON', '{"ok":true,"answer":42}', '42'],
    ['an object as JSON', '{"ok":true,"answer":{"confirmed":true}}', '{"confirmed":true}'],
    ['a mixed list as JSON', '{"ok":true,"answer":["a",1]}', '["a",1]'],
    ['a failed result raw', '{"ok":false,"error":"nope"}', '{"ok":false,"error":"nope"}'],
    ['a result without answer raw', '{"ok":true,"path":"x"}', '{"ok":true,"path":"x"}'],
    ['plain text raw', 'just text', 'just text'],
    ['replacement patterns verbatim', '{"ok":true,"answer":"$& $1 $$"}', '$& $1 $$'],
  ])('uses %s', async (_case, content, expected) => {
    const adapter = new ScriptedModelAdapter([{ text: 'first' }, { text: '<{{last_answer}}>' }]);
    const turn = await adapter.complete(request([user('hi'), assistantCalling('t'), results(['t', content])]));
    expect(turn.text).toBe(`<${expected}>`);
  });

  it('fills {{last_answer}} with nothing before any tool has answered', async () => {
    const adapter = new ScriptedModelAdapter([{ text: '[{{last_answer}}]' }]);
    expect((await adapter.complete(request([user('hi')]))).text).toBe('[]');
  });

  it('streams the text in a few deltas before returning', async () => {
    const adapter = new ScriptedModelAdapter([{ text: 'A scripted model streams its text in pieces 🙂.' }]);
    const deltas: string[] = [];

    const turn = await adapter.complete(request([user('hi')], { onTextDelta: (text) => deltas.push(text) }));

    expect(deltas.length).toBeGreaterThan(1);
    expect(deltas.join('')).toBe(turn.text);
  });

  it('stops when the signal is aborted', async () => {
    const adapter = new ScriptedModelAdapter([{ text: 'some text to stream' }]);
    const controller = new AbortController();

    const pending = adapter.complete(request([user('hi')], { signal: controller.signal, onTextDelta: () => controller.abort() }));

    await expect(pending).rejects.toMatchObject({ code: 'model_error', kind: 'aborted', retryable: false });
    await expect(adapter.complete(request([user('hi')], { signal: controller.signal }))).rejects.toBeInstanceOf(ModelError);
  });
});
