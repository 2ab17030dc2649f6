export * from './tool.names';
export * from './tool.limits';
export * from './tool.schemas';
export { UnknownToolError, checkToolInput, toolDescription, toolSpecs } from './tool.catalogue';
export { truncateUtf8, utf8ByteLength } from './utf8';
export { errorResult, okResult, type ToolResult } from './tool-result';
export { prepareHumanToolCall, type PreparedHumanToolCall } from './human-tool.arguments';
export {
  CANCELLED_ERROR,
  NO_ANSWER_ERROR,
  ResolutionMismatchError,
  SKIPPED_FOR_QUESTION_ERROR,
  budgetExhaustedResult,
  renderResolution,
  skippedForQuestionResult,
} from './human-tool.result';
export { normaliseWorkspacePath } from './workspace.path';
export { executeWorkspaceTool, type WorkspaceLimits, type WorkspaceToolCall } from './workspace.tools';
export { prepareFinish, summaryOfReply, type PreparedFinish } from './finish.tool';
export type { EffectOutcome, WorkspaceFile, WorkspacePort } from './workspace.port';
export * from './approvals';
export { analyseCommandLine, describeCommandKeys, type CommandLineAnalysis, type SimpleCommand } from './shell/command-line';
export {
  DEFAULT_SAFE_COMMANDS,
  isSafeCommand,
  parseSafeCommandEntry,
  safeCommandsInEffect,
  type SafeCommandInEffect,
  type SafeCommandSource,
} from './shell/safe-commands';
export { executeShellTool, ShellInputSchema, type ShellWorkspace } from './shell/shell.tool';
export type { ShellLimits } from './shell/shell.runner';
export { executeHttpRequest, hostAllowed, requestHost, HttpRequestInputSchema, type HttpPolicy } from './http/http-request.tool';
export { ToolsInFlight, toolsInFlight } from './tools-in-flight';
