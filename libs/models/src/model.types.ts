/** The provider-neutral conversation the loop hands to a model adapter (Anthropic-shaped). */
export type ModelBlock =
  | { type: 'text'; text: string }
  | { type: 'tool_use'; id: string; name: string; input: Record<string, unknown> }
  | { type: 'tool_result'; tool_use_id: string; content: string; is_error?: boolean };

export interface ModelMessage {
  role: 'user' | 'assistant';
  content: ModelBlock[];
}

/** A tool as offered to the model: name, description and a JSON Schema of its input. */
export interface ToolSpec {
  name: string;
  description: string;
  input_schema: Record<string, unknown>;
}

export interface ModelRequest {
  system: string;
  messages: ModelMessage[];
  tools: ToolSpec[];
  /** Called with each piece of text while the model writes (streaming adapters only need to). */
  onTextDelta?: (text: string) => void;
  signal?: AbortSignal;
}

export interface ModelToolCall {
  id: string;
  name: string;
  input: Record<string, unknown>;
}

/** One finished assistant turn. */
export interface ModelTurn {
  text: string;
  toolCalls: ModelToolCall[];
  stopReason: string;
  /** Tokens as the provider counted them, when it reports them. */
  usage?: ModelUsage;
}

export interface ModelUsage {
  input: number;
  output: number;
  cacheRead: number;
  cacheWrite: number;
}

export interface ModelAdapter {
  complete(request: ModelRequest): Promise<ModelTurn>;
}
