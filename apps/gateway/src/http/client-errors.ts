import type { Server } from 'node:http';
import type { Duplex } from 'node:stream';
import type { ErrorBody, ErrorCode } from '@parley/contracts';

/**
 * Requests Node's HTTP parser refuses before Express sees them (headers over 16 KiB, a request
 * line that is not HTTP, a request that timed out) get the same `{ error }` JSON body as every
 * other error instead of Node's empty reply. The status stays the one Node would send.
 */
export function answerClientErrors(server: Server): void {
  server.on('clientError', (error: NodeJS.ErrnoException, socket: Duplex) => {
    // Like Node's own handler: reply only when no response on this connection has started yet.
    const inFlight = (socket as Duplex & { _httpMessage?: { headersSent?: boolean } | null })._httpMessage;
    if (error.code === 'ECONNRESET' || !socket.writable || inFlight?.headersSent) {
      socket.destroy();
      return;
    }
    const { status, reason, code, message } = describe(error.code);
    const body = JSON.stringify({ error: { code, message } } satisfies ErrorBody);
    socket.write(
      `HTTP/1.1 ${status} ${reason}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
      () => socket.destroy(),
    );
  });
}

function describe(nodeCode: string | undefined): { status: number; reason: string; code: ErrorCode; message: string } {
  switch (nodeCode ?? '') {
    case 'HPE_HEADER_OVERFLOW':
      return { status: 431, reason: 'Request Header Fields Too Large', code: 'payload_too_large', message: 'request line and headers are too large' };
    case 'HPE_CHUNK_EXTENSIONS_OVERFLOW':
      return { status: 413, reason: 'Payload Too Large', code: 'payload_too_large', message: 'chunk extensions are too large' };
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return { status: 408, reason: 'Request Timeout', code: 'bad_request', message: 'request timed out' };
    default:
      return { status: 400, reason: 'Bad Request', code: 'bad_request', message: 'malformed HTTP request' };
  }
}
