/** Whether a command's arguments stay inside the working folder (see command-line.ts). */

import { isDevNull } from './command.parts';
import type { Word } from './command.scanner';

// ---------------------------------------------------------------------------------------------
// Confinement: whether the arguments stay inside the working folder

/** `--file=/etc/passwd`, `host:/path`, `file:///etc`, `a,~/x`: a value that starts outside, after a separator. */
const OUTSIDE_AFTER_SEPARATOR = /[=:@,][/~]/;
/** `-f/etc/passwd`, `-C..`: a short option whose attached value starts outside. */
const OUTSIDE_AFTER_SHORT_OPTION = /^-[\p{L}\p{N}]+(?:[/~]|\.\.(?:\/|$))/u;
const GLOB_CHARACTERS = /[*?[]/;

/**
 * Whether an argument (after quote removal) could name something outside the working folder. Quoting
 * is ignored on purpose: a quoted `*` or `{` only makes the word mean less than it is checked for.
 */
function reachesOutside(text: string): boolean {
  if (text.includes('$') || /^[/~]/.test(text) || OUTSIDE_AFTER_SEPARATOR.test(text) || OUTSIDE_AFTER_SHORT_OPTION.test(text)) {
    return true;
  }
  if (text.includes('/..') || text.includes('../')) {
    return true;
  }
  const parts = text.split(/[/=:@,]/);
  // `..`, `--dir=..`; `.*` and `.?` match `..` when expanded (and, for safety, any pattern starting with `[`).
  if (parts.some((part) => part === '..' || (/^[.[]/.test(part) && GLOB_CHARACTERS.test(part)))) {
    return true;
  }
  // Brace expansion joins and removes characters (`{.,}./x` is `../x`, `{,/}etc` is `/etc`); without
  // `.`, `/` and `~` it can form none of the above.
  return /\{[\s\S]*\}/.test(text) && /[./~]/.test(text);
}

export function isConfined(args: readonly Word[], inputs: readonly Word[]): boolean {
  return args.every((arg) => !reachesOutside(arg.text)) && inputs.every((input) => isDevNull(input) || !reachesOutside(input.text));
}
