/** Number formats of the bench's report: 'n/a' for what was not measured. */
const fin = (v: number) => Number.isFinite(v);
export const ms = (v: number) => (fin(v) ? `${v.toFixed(2)} ms` : 'n/a');
export const ms0 = (v: number) => (fin(v) ? `${Math.round(v).toLocaleString('en-US')} ms` : 'n/a');
export const n0 = (v: number) => (fin(v) ? Math.round(v).toLocaleString('en-US') : 'n/a');
export const n1 = (v: number) => (fin(v) ? v.toFixed(1) : 'n/a');
export const n2 = (v: number) => (fin(v) ? v.toFixed(2) : 'n/a');
export const b0 = (v: number) => (fin(v) ? `${Math.round(v).toLocaleString('en-US')} B` : 'n/a');
export const us = (v: number) => (fin(v) ? `${v.toFixed(2)} µs` : 'n/a');
export const ratio = (a: number, b: number) => (b > 0 && fin(a) ? `${(a / b).toFixed(2)}×` : 'n/a');
export const yes = (ok: boolean) => (ok ? '**yes**' : '**no**');
export const cell = (line: string) => `\`${line.replace(/\|/g, '\\|').replace(/\n/g, '⏎')}\``;
