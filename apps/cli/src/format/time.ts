const UNITS: Array<[suffix: string, seconds: number]> = [
  ['d', 86_400],
  ['h', 3_600],
  ['m', 60],
  ['s', 1],
];

/** "42s", "5m", "3h", "2d": the largest whole unit. */
export function formatDuration(seconds: number): string {
  const whole = Math.max(0, Math.floor(seconds));
  for (const [suffix, size] of UNITS) {
    if (whole >= size) {
      return `${Math.floor(whole / size)}${suffix}`;
    }
  }
  return '0s';
}

/** "5m ago"; the raw text when it is not a date. */
export function formatAge(iso: string, now: Date): string {
  const at = Date.parse(iso);
  if (Number.isNaN(at)) {
    return iso;
  }
  const seconds = (now.getTime() - at) / 1000;
  return seconds < 1 ? 'just now' : `${formatDuration(seconds)} ago`;
}

/** "in 5m", "overdue", or "none" for an interaction that waits forever. */
export function formatDeadline(iso: string | null, now: Date): string {
  if (iso === null) {
    return 'none';
  }
  const at = Date.parse(iso);
  if (Number.isNaN(at)) {
    return iso;
  }
  const seconds = (at - now.getTime()) / 1000;
  return seconds <= 0 ? 'overdue' : `in ${formatDuration(seconds)}`;
}

/** "in 5m", or "now" once the time has come; the raw text when it is not a date. */
export function formatUntil(iso: string, now: Date): string {
  const at = Date.parse(iso);
  if (Number.isNaN(at)) {
    return iso;
  }
  const seconds = (at - now.getTime()) / 1000;
  return seconds < 1 ? 'now' : `in ${formatDuration(seconds)}`;
}

/** HH:MM:SS (UTC) of an ISO time, for event listings. */
export function formatClock(iso: string): string {
  const at = Date.parse(iso);
  return Number.isNaN(at) ? iso : new Date(at).toISOString().slice(11, 19);
}
