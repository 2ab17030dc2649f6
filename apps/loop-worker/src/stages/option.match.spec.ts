import { matchOption, normaliseOption } from './option.match';

describe('normaliseOption', () => {
  it.each([
    ['Auto approve', 'autoapprove'],
    ['auto-approve', 'autoapprove'],
    ['AUTO_APPROVE', 'autoapprove'],
    ['  Auto \t approve\n', 'autoapprove'],
    ['auto–approve', 'autoapprove'], // en dash
    ['auto—approve', 'autoapprove'], // em dash
    ['ＡＵＴＯ approve', 'autoapprove'], // full-width letters
    ['Ship it!', 'shipit!'],
    ['- _ -', ''],
  ])('%j → %j', (text, expected) => {
    expect(normaliseOption(text)).toBe(expected);
  });
});

describe('matchOption', () => {
  const options = ['Approve', 'Auto approve', 'Needs work'];

  it.each([
    ['Approve', 'Approve'],
    ['  Approve ', 'Approve'],
    ['approve', 'Approve'],
    ['Auto approve', 'Auto approve'],
    ['auto-approve', 'Auto approve'],
    ['AUTO_APPROVE', 'Auto approve'],
    ['autoapprove', 'Auto approve'],
    ['needs-work', 'Needs work'],
    ['NEEDS   WORK', 'Needs work'],
  ])('%j matches %j', (text, expected) => {
    expect(matchOption(text, options)).toBe(expected);
  });

  it.each([['Approved'], ['auto'], [''], ['   '], ['--'], ['Approve it']])('%j matches nothing', (text) => {
    expect(matchOption(text, options)).toBeNull();
  });

  it('returns the option as declared, not as typed', () => {
    expect(matchOption('auto-approve', ['Auto Approve'])).toBe('Auto Approve');
  });

  it('prefers an exact match over an earlier normalised one', () => {
    expect(matchOption('auto-approve', ['Auto approve', 'auto-approve'])).toBe('auto-approve');
    expect(matchOption('Auto approve', ['auto-approve', 'Auto approve'])).toBe('Auto approve');
  });

  it('takes the first declared option among several normalised matches', () => {
    expect(matchOption('AUTO APPROVE', ['auto-approve', 'Auto approve'])).toBe('auto-approve');
  });

  it('matches nothing against no options', () => {
    expect(matchOption('Approve', [])).toBeNull();
  });
});
