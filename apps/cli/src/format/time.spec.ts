import { formatAge, formatClock, formatDeadline, formatDuration, formatUntil } from './time';

const now = new Date('2030-01-01T12:00:00.000Z');

describe('time formatting', () => {
  it.each([
    [0, '0s'],
    [59, '59s'],
    [60, '1m'],
    [7199, '1h'],
    [3 * 86400 + 5, '3d'],
  ])('formatDuration(%d) = %s', (seconds, text) => {
    expect(formatDuration(seconds)).toBe(text);
  });

  it('formats ages', () => {
    expect(formatAge('2030-01-01T11:55:00.000Z', now)).toBe('5m ago');
    expect(formatAge('2030-01-01T12:00:00.000Z', now)).toBe('just now');
    expect(formatAge('not a date', now)).toBe('not a date');
  });

  it('formats deadlines', () => {
    expect(formatDeadline(null, now)).toBe('none');
    expect(formatDeadline('2030-01-01T13:00:00.000Z', now)).toBe('in 1h');
    expect(formatDeadline('2030-01-01T11:00:00.000Z', now)).toBe('overdue');
  });

  it('formats the time until something happens', () => {
    expect(formatUntil('2030-01-01T15:00:00.000Z', now)).toBe('in 3h');
    expect(formatUntil('2030-01-01T11:59:00.000Z', now)).toBe('now');
    expect(formatUntil('soon', now)).toBe('soon');
  });

  it('formats a clock time in UTC', () => {
    expect(formatClock('2030-01-01T09:08:07.123Z')).toBe('09:08:07');
  });
});
