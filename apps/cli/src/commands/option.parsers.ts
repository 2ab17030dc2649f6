import { InvalidArgumentError } from 'commander';

/** A commander option parser for an integer in [min, max]; commander reports the error (exit 2). */
export function parseIntOption(min: number, max: number): (value: string) => number {
  return (value) => {
    if (!/^\d+$/.test(value.trim())) {
      throw new InvalidArgumentError(`expected a whole number (${min}-${max}).`);
    }
    const number = Number(value);
    if (number < min || number > max) {
      throw new InvalidArgumentError(`expected a number from ${min} to ${max}.`);
    }
    return number;
  };
}

/** Collects a repeatable option's values (no default, so help does not print "default: []"). */
export function collect(value: string, previous: string[] | undefined): string[] {
  return [...(previous ?? []), value];
}
