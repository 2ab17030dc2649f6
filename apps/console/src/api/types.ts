/**
 * The shapes the console reads and sends, taken from libs/contracts as types only: they are
 * erased at build time, so no zod (or any other server code) reaches the browser bundle.
 */
export type {
  Actor,
  AgentSummary,
  Answer,
  AnswerBody,
  ApprovalDecision,
  ErrorBody,
  ErrorIssue,
  Interaction,
  LogEntry,
  LogEntryOf,
  ParleyEvent,
  Prompt,
  Role,
  Run,
  RunStatus,
  TokenClaims,
} from '@parley/contracts';
