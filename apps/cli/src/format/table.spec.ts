import { renderTable } from './table';

describe('renderTable', () => {
  it('pads all but the last column, flattens whitespace and cuts long cells', () => {
    const text = renderTable(
      [{ header: 'ID' }, { header: 'NAME', max: 6 }, { header: 'NOTE' }],
      [
        ['1', 'short', 'a'],
        ['22', 'a very long name', 'multi\nline'],
      ],
    );
    expect(text).toBe(['ID  NAME    NOTE', '1   short   a', '22  a ver…  multi line', ''].join('\n'));
  });

  it('prints just the header for no rows', () => {
    expect(renderTable([{ header: 'A' }, { header: 'B' }], [])).toBe('A  B\n');
  });
});
