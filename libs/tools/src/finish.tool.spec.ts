import { prepareFinish, summaryOfReply } from './finish.tool';

describe('prepareFinish', () => {
  it('trims the summary', () => {
    expect(prepareFinish({ summary: '  Done: wrote plan.md \n' })).toEqual({ ok: true, summary: 'Done: wrote plan.md' });
  });

  it('cuts the summary to 4000 bytes on a character boundary', () => {
    const result = prepareFinish({ summary: '日'.repeat(2000) });
    expect(result).toEqual({ ok: true, summary: '日'.repeat(1333) });
  });

  it('refuses a missing, empty or non-string summary, naming the field', () => {
    expect(prepareFinish({})).toEqual({ ok: false, error: 'invalid finish input: summary: is required' });
    expect(prepareFinish({ summary: '  ' })).toEqual({ ok: false, error: 'invalid finish input: summary: must not be empty' });
    expect(prepareFinish({ summary: ['a'] })).toEqual({ ok: false, error: 'invalid finish input: summary: must be a string' });
    expect(prepareFinish('done')).toEqual({ ok: false, error: 'invalid finish input: expected a JSON object' });
  });

  it('refuses an unknown field, naming it', () => {
    expect(prepareFinish({ summary: 'Done', status: 'partial' })).toEqual({ ok: false, error: 'invalid finish input: status: unknown field' });
  });
});

describe('summaryOfReply', () => {
  it("bounds a reply's text as a finish summary, and gives none for a blank one", () => {
    expect(summaryOfReply('  All done.\n')).toBe('All done.');
    expect(summaryOfReply('é'.repeat(600_000))).toBe('é'.repeat(2000));
    expect(summaryOfReply('   \n ')).toBeUndefined();
  });
});
