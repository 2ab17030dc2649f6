import { CronExpressionParser } from 'cron-parser';
import type { ErrorIssue, Schedule } from '@parley/contracts';

const EVERY_MINUTE = '* * * * *';

/**
 * A schedule's cron and time zone read as BullMQ's job schedulers read them (cron-parser, in the
 * time zone), so a value they would reject fails the agent file instead of leaving the old
 * scheduler firing. `at` is the schedule's field path (`schedules.N`).
 */
export function scheduleTimingProblems(schedule: Pick<Schedule, 'cron' | 'timezone'>, at: string): ErrorIssue[] {
  const problems: ErrorIssue[] = [];
  const zoneKnown = firingProblem(EVERY_MINUTE, schedule.timezone) === null;
  if (!zoneKnown) {
    problems.push({ field: `${at}.timezone`, reason: `unknown time zone "${schedule.timezone}" (use an IANA name such as Europe/Berlin, or UTC)` });
  }
  const cronProblem = fieldCountProblem(schedule.cron) ?? firingProblem(schedule.cron, zoneKnown ? schedule.timezone : 'UTC');
  if (cronProblem !== null) {
    problems.push({ field: `${at}.cron`, reason: cronProblem });
  }
  return problems;
}

/**
 * cron-parser fills in fields left out, so a short pattern would parse as something else than
 * meant. A macro (`@daily`, `@hourly`...) stands alone; the parser tells an unknown one.
 */
function fieldCountProblem(cron: string): string | null {
  if (cron.trim().startsWith('@')) {
    return /^@[a-z]+$/.test(cron) ? null : 'a macro such as @daily stands alone, in lowercase, without spaces';
  }
  return cron.trim().split(/\s+/).length < 5 ? 'needs 5 or 6 fields (minute hour day month weekday, with seconds first when 6), or a macro such as @daily' : null;
}

/** The parser's reason when the pattern has no next firing in that zone, else null. */
function firingProblem(cron: string, timezone: string): string | null {
  try {
    CronExpressionParser.parse(cron, { tz: timezone, currentDate: new Date() }).next();
    return null;
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  }
}
