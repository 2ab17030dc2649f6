import { ParleyError } from '@parley/contracts';
import { UnknownToolError, checkToolInput, toolSpecs } from './tool.catalogue';
import { ALL_TOOL_NAMES, HUMAN_TOOLS, HUMAN_TOOL_KINDS, WORKSPACE_TOOLS, isHumanTool, isToolName, isWorkspaceTool } from './tool.names';

describe('tool names', () => {
  it('lists every tool once', () => {
    expect([...ALL_TOOL_NAMES].sort()).toEqual(
      [
        'ask_user_choice',
        'ask_user_confirm',
        'ask_user_text',
        'delete_file',
        'edit_document',
        'finish',
        'list_files',
        'present_for_review',
        'read_file',
        'write_file',
        'shell',
        'http_request',
        'complete_stage',
        'delegate',
        'needs_input',
      ].sort(),
    );
  });

  it('tells human tools from the others', () => {
    for (const name of HUMAN_TOOLS) {
      expect(isHumanTool(name)).toBe(true);
      expect(isWorkspaceTool(name)).toBe(false);
    }
    for (const name of [...WORKSPACE_TOOLS, 'finish', 'nope', '']) {
      expect(isHumanTool(name)).toBe(false);
    }
    expect(isWorkspaceTool('finish')).toBe(false);
    expect(isToolName('finish')).toBe(true);
    expect(isToolName('toString')).toBe(false);
  });

  it('maps human tools to interaction kinds', () => {
    expect(HUMAN_TOOL_KINDS).toEqual({
      ask_user_text: 'free_text',
      ask_user_choice: 'multiple_choice',
      ask_user_confirm: 'confirm',
      edit_document: 'edit_text',
      present_for_review: 'review',
    });
  });
});

describe('toolSpecs', () => {
  it('gives a spec for every tool: object JSON Schema, no $schema key, non-empty description', () => {
    const specs = toolSpecs(ALL_TOOL_NAMES);
    expect(specs.map((spec) => spec.name)).toEqual([...ALL_TOOL_NAMES]);
    for (const spec of specs) {
      expect(spec.description.length).toBeGreaterThan(10);
      expect(spec.input_schema).toMatchObject({ type: 'object', properties: expect.any(Object) });
      expect(spec.input_schema).not.toHaveProperty('$schema');
    }
  });

  it('hands out the same specs each time, frozen to their depth, so no caller can change what the next one is offered', () => {
    const [first] = toolSpecs(['write_file']);
    const [again] = toolSpecs(['write_file', 'write_file']);
    expect(again).toBe(first);
    const properties = first.input_schema.properties as Record<string, { description?: string }>;
    expect(() => {
      properties.path.description = 'changed';
    }).toThrow(TypeError);
    expect(() => {
      (first as { name: string }).name = 'other';
    }).toThrow(TypeError);
  });

  it('tells the model that no field beyond those described is accepted, in nested objects too', () => {
    for (const spec of toolSpecs(ALL_TOOL_NAMES)) {
      expect([spec.name, spec.input_schema.additionalProperties]).toEqual([spec.name, false]);
    }
    const [choice] = toolSpecs(['ask_user_choice']);
    expect(choice.input_schema).toMatchObject({ properties: { options: { items: { additionalProperties: false } } } });
  });

  it('describes ask_user_choice with options of 2 to 20 and an optional multi', () => {
    const [spec] = toolSpecs(['ask_user_choice']);
    expect(spec.input_schema).toMatchObject({
      required: ['question', 'options'],
      properties: {
        question: { type: 'string' },
        options: {
          type: 'array',
          minItems: 2,
          maxItems: 20,
          items: { type: 'object', properties: { label: { type: 'string' }, description: { type: 'string' } }, required: ['label'] },
        },
        multi: { type: 'boolean', default: false },
      },
    });
  });

  it('describes the other inputs with their required fields', () => {
    const required = Object.fromEntries(toolSpecs(ALL_TOOL_NAMES).map((spec) => [spec.name, spec.input_schema.required ?? []]));
    expect(required).toEqual({
      list_files: [],
      read_file: ['path'],
      write_file: ['path', 'content'],
      delete_file: ['path'],
      finish: ['summary'],
      ask_user_text: ['question'],
      ask_user_choice: ['question', 'options'],
      ask_user_confirm: ['question'],
      edit_document: ['instructions', 'content'],
      present_for_review: ['title', 'markdown'],
      shell: ['command'],
      http_request: ['url'],
      complete_stage: ['output'],
      delegate: ['agent', 'task'],
      needs_input: ['missing'],
    });
  });

  it('keeps the order asked for and drops repeats', () => {
    expect(toolSpecs(['finish', 'read_file', 'finish']).map((spec) => spec.name)).toEqual(['finish', 'read_file']);
    expect(toolSpecs([])).toEqual([]);
  });

  it('throws a typed error naming every unknown tool', () => {
    let thrown: unknown;
    try {
      toolSpecs(['read_file', 'rm_rf', 'sudo', 'rm_rf']);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(UnknownToolError);
    expect(thrown).toBeInstanceOf(ParleyError);
    const error = thrown as UnknownToolError;
    expect(error.unknownNames).toEqual(['rm_rf', 'sudo']);
    expect(error.code).toBe('bad_request');
    expect(error.message).toMatch(/^unknown tools: rm_rf, sudo \(known: list_files, /);
  });
});

describe('checkToolInput', () => {
  /** A valid call of each tool: an unknown field added to it must be the only thing refused. */
  const VALID: Record<(typeof ALL_TOOL_NAMES)[number], Record<string, unknown>> = {
    list_files: {},
    read_file: { path: 'a.md' },
    write_file: { path: 'a.md', content: 'x' },
    delete_file: { path: 'a.md' },
    finish: { summary: 'done' },
    ask_user_text: { question: 'Why?' },
    ask_user_choice: { question: 'Which?', options: [{ label: 'A' }, { label: 'B' }] },
    ask_user_confirm: { question: 'OK?' },
    edit_document: { instructions: 'Fix', content: 'x' },
    present_for_review: { title: 'T', markdown: 'm' },
    shell: { command: 'make' },
    http_request: { method: 'POST', url: 'https://api.example.com/pay' },
    complete_stage: { output: 'draft' },
    delegate: { agent: 'helper', task: 'Sum it up' },
    needs_input: { missing: 'the budget' },
  };

  it.each(ALL_TOOL_NAMES.map((name) => [name]))('refuses an unknown field in a call of %s, naming it', (name) => {
    expect(checkToolInput(name, VALID[name])).toMatchObject({ ok: true });
    expect(checkToolInput(name, { ...VALID[name], extra: 1 })).toEqual({ ok: false, error: `invalid ${name} input: extra: unknown field` });
  });

  it('does not hand back a POST stripped of the body the model meant to send', () => {
    expect(checkToolInput('http_request', { method: 'POST', url: 'https://api.example.com/pay', data: '{"amount":100}' })).toEqual({
      ok: false,
      error: 'invalid http_request input: data: unknown field',
    });
    expect(checkToolInput('shell', { command: 'make', cwd: 'sub' })).toEqual({ ok: false, error: 'invalid shell input: cwd: unknown field' });
  });

  it('names an unknown field next to the other problems', () => {
    expect(checkToolInput('write_file', { path: 'a.md', text: 'x' })).toEqual({ ok: false, error: 'invalid write_file input: content: is required; text: unknown field' });
  });
});
