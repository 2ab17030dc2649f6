/** Why the command-line scanner refuses a line, shared by the scanner and the grant-key derivation. */

// ---------------------------------------------------------------------------------------------
// What the scanner refuses, and why (each reason completes "This command offers no reusable grant: …").

export const REASONS = {
  empty: 'the command line is empty',
  controlCharacters: 'it contains control characters',
  bidiControls: 'it contains bidirectional text controls, which can disguise what it runs',
  commandSubstitution: 'it uses command substitution ($(...))',
  arithmetic: 'it uses arithmetic expansion ($((...)))',
  backticks: 'it uses command substitution (backticks)',
  processSubstitution: 'it uses process substitution (<(...) or >(...))',
  heredoc: 'it uses a heredoc (<<)',
  herestring: 'it uses a here-string (<<<)',
  parentheses: 'it uses a subshell or grouping ((...))',
  braces: 'it uses command grouping ({ ...; })',
  comment: 'it contains a comment (#), which hides what follows from a reader',
  unterminatedQuote: 'it has an unterminated quote',
  unterminatedParameter: 'it has an unterminated ${...}',
  dollarQuote: "it uses $'...' or $\"...\" quoting",
  trailingBackslash: 'it ends with a backslash',
  continuationInWord: 'it continues a line (backslash-newline) in the middle of a word',
  continuationInQuotes: 'it continues a line (backslash-newline) inside double quotes',
  fdVariable: 'it stores a file descriptor in a variable ({name}>...)',
  onlyRedirections: 'it has a command made only of redirections',
  assignment: 'it sets variables for the command (X=1 ...)',
  negation: 'it negates a command (!)',
} as const;

export class UnreadableCommandLine extends Error {
  constructor(readonly reason: string) {
    super(reason);
  }
}

export function unreadable(reason: string): UnreadableCommandLine {
  return new UnreadableCommandLine(reason);
}
