import { ErrorCode } from 'bullmq';
import { LostLocks, lostLockJobId } from './lost-lock';

/** An error as BullMQ's finishedErrors builds it: the message, and the script's code as `code`. */
const scriptError = (message: string, code: ErrorCode) => Object.assign(new Error(message), { code });

describe('lostLockJobId', () => {
  it.each([
    ['a failed lock renewal', new Error('could not renew lock for job run.t1.r-1.0')],
    ['a move without the lock', scriptError('Missing lock for job run.t1.r-1.0. moveToFinished', ErrorCode.JobLockNotExist)],
    ['a retry without the lock', scriptError('Missing lock for job run.t1.r-1.0. moveToDelayed', ErrorCode.JobLockNotExist)],
    ["a move under another worker's lock", scriptError('Lock mismatch for job run.t1.r-1.0. Cmd moveToFinished from active', ErrorCode.JobLockMismatch)],
  ])('names the job of %s', (_, error) => {
    expect(lostLockJobId(error)).toBe('run.t1.r-1.0');
  });

  it.each([
    ['a connection error', new Error('Connection is closed.')],
    ['a missing job', scriptError('Missing key for job run.t1.r-1.0. moveToFinished', ErrorCode.JobNotExist)],
    ['a job in another state', scriptError('Job run.t1.r-1.0 is not in the active state. moveToFinished', ErrorCode.JobNotInState)],
    ['a lost-lock message under another code', scriptError('Missing lock for job run.t1.r-1.0. moveToFinished', ErrorCode.JobNotExist)],
    ['a lost-lock code under another message', scriptError('lock gone', ErrorCode.JobLockNotExist)],
    ['a renewal message with a code', scriptError('could not renew lock for job run.t1.r-1.0', ErrorCode.JobLockNotExist)],
    ['a renewal message inside another', new Error('handler said: could not renew lock for job x')],
    ['no error at all', 'could not renew lock for job x'],
  ])('is undefined for %s', (_, error) => {
    expect(lostLockJobId(error)).toBeUndefined();
  });
});

describe('LostLocks', () => {
  it('says a job is new once while its signs keep coming, and again after a quiet spell', () => {
    const locks = new LostLocks(1000);
    expect(locks.isNew('a', 0)).toBe(true);
    expect(locks.isNew('b', 10)).toBe(true);
    expect(locks.isNew('a', 900)).toBe(false);
    // Each sign extends the spell: 1800 is within 1000 of 900.
    expect(locks.isNew('a', 1800)).toBe(false);
    expect(locks.isNew('a', 2801)).toBe(true);
    expect(locks.isNew('b', 2802)).toBe(true);
  });
});
