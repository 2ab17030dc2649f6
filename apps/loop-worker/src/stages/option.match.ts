/**
 * How a person's answer is matched to a checkpoint option. Options are declared by the agent's
 * author ("Auto approve"), people type or pick them ("auto-approve", "AUTO_APPROVE"): case,
 * whitespace, dashes and underscores do not count.
 */

/** Dash punctuation of any script (-, ‐, –, —, …), underscores and whitespace. */
const IGNORED = /[\s\p{Pd}_]+/gu;

/**
 * The form two options are compared in: Unicode NFKC (so full-width letters match their ASCII
 * forms), lower case, without whitespace, dashes or underscores. "Auto approve" → "autoapprove".
 */
export function normaliseOption(text: string): string {
  return text.normalize('NFKC').toLowerCase().replace(IGNORED, '');
}

/**
 * The declared option the text names, as declared, or null. An exact match (ignoring only
 * whitespace around the text) wins over a normalised one; among several normalised matches the
 * first declared wins, so callers order `options` by priority. A text that normalises to nothing
 * (blank, or only dashes) matches nothing.
 */
export function matchOption(text: string, options: readonly string[]): string | null {
  const trimmed = text.trim();
  const exact = options.find((option) => option === text || option === trimmed);
  if (exact !== undefined) {
    return exact;
  }
  const key = normaliseOption(text);
  if (key === '') {
    return null;
  }
  return options.find((option) => normaliseOption(option) === key) ?? null;
}
