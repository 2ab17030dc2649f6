/** The text a tool call gives back to the model, as stored in a `tool_result` log entry. */
export interface ToolResult {
  content: string;
  isError: boolean;
}

/** A successful result: `{"ok":true,...fields}`. */
export function okResult(fields: Record<string, unknown>): ToolResult {
  return { content: JSON.stringify({ ok: true, ...fields }), isError: false };
}

/**
 * A failed result: `{"ok":false,"error":...}`. `isError` is true when the model did something it
 * should change (bad input, over a limit); false when nobody is at fault and the run just carries on.
 */
export function errorResult(error: string, isError = true): ToolResult {
  return { content: JSON.stringify({ ok: false, error }), isError };
}
