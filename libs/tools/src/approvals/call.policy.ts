import type { AutoApproval } from '@parley/contracts';
import { isSafeCommand, type SafeCommandInEffect } from '../shell/safe-commands';
import { argsDigest } from './args.digest';
import { membersGranting, type CallScope } from './call.scope';

/**
 * Whether a call whose permission is `ask` may run without asking: every thing it does must be
 * granted (for the run, or for the current stage) or be a safe command. Returns what covered it,
 * or null when a person must approve.
 */
export function coverWithoutAsking(
  scope: CallScope,
  input: Record<string, unknown>,
  context: { stage: string; granted: ReadonlySet<string>; safe: readonly SafeCommandInEffect[] },
): AutoApproval | null {
  if (scope.needs.length === 0) {
    return null;
  }
  const grants: string[] = [];
  const safe: string[] = [];
  for (const need of scope.needs) {
    // "Any arguments" means any arguments inside the scratch folder; anything reaching out asks again.
    if (need.command && !need.command.confined) {
      return null;
    }
    const granted = need.keys
      .flatMap((key) => membersGranting(key, context.stage))
      .find((member) => context.granted.has(member));
    if (granted !== undefined) {
      grants.push(granted);
      continue;
    }
    if (need.command && isSafeCommand(need.command, context.safe)) {
      // The command's key ("cat", "git status"), never its arguments: the audit must not copy them.
      safe.push(need.command.key ?? need.command.program);
      continue;
    }
    return null;
  }
  return { basis: grants.length > 0 ? 'grant' : 'safe_command', covered: [...new Set([...grants, ...safe])], argsDigest: argsDigest(input) };
}
