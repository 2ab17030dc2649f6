import { truncate } from './text';

export interface Column {
  header: string;
  /** Cells longer than this are cut; the last column is never padded. */
  max?: number;
}

/** A plain, left-aligned text table (header row first), ending with a newline. */
export function renderTable(columns: Column[], rows: string[][]): string {
  const cells = [columns.map((column) => column.header), ...rows].map((row) =>
    columns.map((column, index) => {
      const flat = (row[index] ?? '').replace(/\s+/g, ' ').trim();
      return column.max === undefined ? flat : truncate(flat, column.max);
    }),
  );
  const widths = columns.map((_, index) => Math.max(...cells.map((row) => row[index].length)));
  return cells
    .map((row) =>
      row
        .map((cell, index) => (index === row.length - 1 ? cell : cell.padEnd(widths[index])))
        .join('  ')
        .trimEnd(),
    )
    .map((line) => `${line}\n`)
    .join('');
}
