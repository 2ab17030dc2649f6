import type { Socket as TcpSocket } from 'node:net';

/** Counts the system calls a socket's writes make (one per `_write` or `_writev`). */
export function countWrites(tcp: TcpSocket): { count: number } {
  const counter = { count: 0 };
  const stream = tcp as unknown as { _write: (...args: unknown[]) => void; _writev: (...args: unknown[]) => void };
  const write = stream._write.bind(tcp);
  const writev = stream._writev.bind(tcp);
  stream._write = (...args) => {
    counter.count++;
    write(...args);
  };
  stream._writev = (...args) => {
    counter.count++;
    writev(...args);
  };
  return counter;
}
