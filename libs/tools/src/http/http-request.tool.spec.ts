import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { z } from 'zod';
import type { ToolResult } from '../tool-result';
import { executeHttpRequest, hostAllowed, HttpRequestInputSchema, requestHost, type HttpPolicy } from './http-request.tool';

interface Received {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}

const body = (result: ToolResult): any => JSON.parse(result.content);

describe('hostAllowed', () => {
  const allowed = (url: string, hosts: string[]): boolean => hostAllowed(new URL(url), hosts);

  it('matches a plain host on the default port only, ignoring case', () => {
    expect(allowed('https://api.example.com/v1', ['api.example.com'])).toBe(true);
    expect(allowed('https://API.Example.COM/v1', ['Api.Example.com'])).toBe(true);
    expect(allowed('http://api.example.com/', ['api.example.com'])).toBe(true);
    expect(allowed('https://api.example.com:443/', ['api.example.com'])).toBe(true);
    expect(allowed('https://api.example.com:8443/', ['api.example.com'])).toBe(false);
    expect(allowed('https://example.com/', ['api.example.com'])).toBe(false);
    expect(allowed('https://x.api.example.com/', ['api.example.com'])).toBe(false);
    expect(allowed('https://api.example.com.evil.net/', ['api.example.com'])).toBe(false);
    expect(allowed('https://api.example.com./', ['api.example.com'])).toBe(true);
  });

  it('matches any subdomain for "*.", but not the apex', () => {
    expect(allowed('https://a.example.org/', ['*.example.org'])).toBe(true);
    expect(allowed('https://a.b.example.org/', ['*.example.org'])).toBe(true);
    expect(allowed('https://example.org/', ['*.example.org'])).toBe(false);
    expect(allowed('https://badexample.org/', ['*.example.org'])).toBe(false);
    expect(allowed('https://a.example.org:8443/', ['*.example.org'])).toBe(false);
    expect(allowed('https://a.example.org:8443/', ['*.example.org:8443'])).toBe(true);
  });

  it('requires the port of a pattern that names one', () => {
    expect(allowed('http://127.0.0.1:8080/x', ['127.0.0.1:8080'])).toBe(true);
    expect(allowed('http://127.0.0.1:8081/x', ['127.0.0.1:8080'])).toBe(false);
    expect(allowed('http://127.0.0.1/x', ['127.0.0.1:8080'])).toBe(false);
    expect(allowed('http://127.0.0.1:8080/x', ['127.0.0.1'])).toBe(false);
    expect(allowed('https://example.com/', ['example.com:443'])).toBe(true);
    expect(allowed('http://example.com/', ['example.com:443'])).toBe(false);
  });

  it('compares addresses and names in their normalised form', () => {
    expect(allowed('http://[::1]:3000/', ['[::1]:3000'])).toBe(true);
    expect(allowed('http://[::1]/', ['::1'])).toBe(true);
    expect(allowed('http://[0:0:0:0:0:0:0:1]/', ['[::1]'])).toBe(true);
    expect(allowed('http://2130706433/', ['127.0.0.1'])).toBe(true);
    expect(allowed('https://xn--bcher-kva.de/', ['bücher.de'])).toBe(true);
  });

  it('matches nothing for an empty list or patterns that are no host', () => {
    expect(allowed('https://example.com/', [])).toBe(false);
    for (const pattern of ['', '*', '*.', 'https://example.com', 'example.com/path', 'user@example.com', 'example.com:99999']) {
      expect(allowed('https://example.com/', [pattern])).toBe(false);
    }
  });
});

describe('requestHost', () => {
  it('gives host[:port] as URL.host has it, lowercased', () => {
    expect(requestHost(new URL('https://API.Example.com:8443/x?y'))).toBe('api.example.com:8443');
    expect(requestHost(new URL('https://api.example.com:443/'))).toBe('api.example.com');
    expect(requestHost(new URL('http://[::1]:80/'))).toBe('[::1]');
  });
});

describe('executeHttpRequest', () => {
  let server: http.Server;
  let origin: string;
  let policy: HttpPolicy;
  const received: Received[] = [];
  /** Each request's handler, by path; a request to an unknown path gets 404. */
  const routes = new Map<string, (request: Received, response: http.ServerResponse) => void>();

  beforeAll(async () => {
    server = http.createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        const seen: Received = { method: request.method ?? '', url: request.url ?? '', headers: request.headers, body: Buffer.concat(chunks).toString('utf8') };
        received.push(seen);
        const route = routes.get(new URL(seen.url, 'http://x').pathname);
        if (route === undefined) {
          response.writeHead(404, { 'content-type': 'text/plain' }).end('no such page');
        } else {
          route(seen, response);
        }
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  beforeEach(() => {
    received.length = 0;
    routes.clear();
    policy = { allowedHosts: [`127.0.0.1:${new URL(origin).port}`], timeoutMs: 10_000, maxResponseBytes: 1000 };
  });

  const send = (input: unknown, effectId = 'effect-1'): Promise<ToolResult> => executeHttpRequest({ input, effectId, policy });

  it('sends a GET and returns status, content type and body', async () => {
    routes.set('/hello', (_request, response) => response.writeHead(200, { 'content-type': 'text/plain; charset=utf-8', 'x-other': '1' }).end('héllo'));
    const result = await send({ url: `${origin}/hello?q=1`, headers: { Accept: 'text/plain' } });
    expect(result).toEqual({
      content: JSON.stringify({ ok: true, status: 200, headers: { 'content-type': 'text/plain; charset=utf-8' }, body: 'héllo' }),
      isError: false,
    });
    expect(received).toHaveLength(1);
    expect(received[0]).toMatchObject({ method: 'GET', url: '/hello?q=1', body: '' });
    expect(received[0].headers).toMatchObject({ accept: 'text/plain', 'idempotency-key': 'effect-1' });
  });

  it('sends a POST body with the effect id as Idempotency-Key', async () => {
    routes.set('/echo', (request, response) =>
      response.writeHead(201, { 'content-type': 'application/json' }).end(JSON.stringify({ got: request.body, key: request.headers['idempotency-key'] })),
    );
    const result = await send({ method: 'POST', url: `${origin}/echo`, headers: { 'Content-Type': 'application/json' }, body: '{"a":1}' }, 'run-7:step-3:call-1');
    expect(result.isError).toBe(false);
    expect(body(result)).toEqual({
      ok: true,
      status: 201,
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ got: '{"a":1}', key: 'run-7:step-3:call-1' }),
    });
    expect(received[0]).toMatchObject({ method: 'POST', body: '{"a":1}' });
    expect(received[0].headers['content-type']).toBe('application/json');
  });

  it('reports an HTTP error status as information, not as an error', async () => {
    const result = await send({ url: `${origin}/missing` });
    expect(result).toEqual({
      content: JSON.stringify({ ok: false, status: 404, headers: { 'content-type': 'text/plain' }, body: 'no such page' }),
      isError: false,
    });
  });

  it('refuses a host that is not allowed without sending anything', async () => {
    policy.allowedHosts = ['api.example.com', '*.example.org'];
    const result = await send({ url: `${origin}/hello` });
    expect(result).toEqual({
      content: JSON.stringify({
        ok: false,
        error: `host 127.0.0.1:${new URL(origin).port} is not allowed; nothing was sent (allowed hosts: api.example.com, *.example.org)`,
      }),
      isError: true,
    });
    policy.allowedHosts = [];
    expect(body(await send({ url: `${origin}/hello` })).error).toMatch(/nothing was sent \(no hosts are allowed for this agent\)$/);
    policy.allowedHosts = ['127.0.0.1'];
    expect(body(await send({ url: `${origin}/hello` })).error).toMatch(/^host 127\.0\.0\.1:\d+ is not allowed/);
    expect(received).toEqual([]);
  });

  it('does not follow a redirect, says whether the location may be requested, and resolves any Location', async () => {
    routes.set('/moved', (_request, response) => response.writeHead(302, { location: '/hello' }).end());
    routes.set('/away', (_request, response) => response.writeHead(301, { location: 'https://elsewhere.example/x' }).end());
    routes.set('/hello', (_request, response) => response.end('should not be fetched'));
    expect(body(await send({ url: `${origin}/moved` }))).toEqual({
      ok: true,
      status: 302,
      headers: { location: `${origin}/hello` },
      body: '',
      redirect: 'not followed; call http_request again with the location if you need it',
    });
    expect(body(await send({ url: `${origin}/away` })).redirect).toBe(
      "not followed; the location's host elsewhere.example is not allowed, so it cannot be requested",
    );
    routes.set('/created', (_request, response) => response.writeHead(201, { location: '/items/1' }).end());
    expect(body(await send({ method: 'POST', url: `${origin}/created`, body: '{}' }))).toEqual({
      ok: true,
      status: 201,
      headers: { location: `${origin}/items/1` },
      body: '',
    });
    expect(received.map((request) => request.url)).toEqual(['/moved', '/away', '/created']);
  });

  it('cuts the body at maxResponseBytes, between characters', async () => {
    const closed = new Promise<boolean>((resolve) => {
      // An endless body: only the client cancelling it ends the response.
      routes.set('/endless', (_request, response) => {
        response.writeHead(200, { 'content-type': 'text/plain' });
        const pump = (): void => {
          while (!response.destroyed && response.write('é'.repeat(1000))) {
            // until the socket buffer is full; 'drain' calls again
          }
        };
        response.on('drain', pump);
        response.on('close', () => resolve(response.writableFinished));
        pump();
      });
    });
    policy.maxResponseBytes = 1001;
    const result = await send({ url: `${origin}/endless` });
    expect(body(result)).toEqual({ ok: true, status: 200, headers: { 'content-type': 'text/plain' }, body: 'é'.repeat(500), truncated: true });
    expect(await closed).toBe(false);

    routes.set('/exact', (_request, response) => response.end('a'.repeat(1001)));
    expect(body(await send({ url: `${origin}/exact` }))).toMatchObject({ body: 'a'.repeat(1001) });
    expect(body(await send({ url: `${origin}/exact` })).truncated).toBeUndefined();
  });

  it('decodes a body that is not UTF-8 lossily', async () => {
    routes.set('/bytes', (_request, response) => response.end(Buffer.from([0x6f, 0xff, 0x6b])));
    expect(body(await send({ url: `${origin}/bytes` })).body).toBe('o\uFFFDk');
  });

  it('gives up after the time limit, whether no response or a stalled body', async () => {
    routes.set('/hang', () => undefined);
    routes.set('/stall', (_request, response) => response.writeHead(200).write('partial'));
    policy.timeoutMs = 500;
    const started = Date.now();
    expect(await send({ url: `${origin}/hang` })).toEqual({
      content: JSON.stringify({ ok: false, error: 'request timed out after 500 ms; no response' }),
      isError: false,
    });
    expect(body(await send({ method: 'POST', url: `${origin}/hang`, body: 'x' })).error).toBe(
      'request timed out after 500 ms; the server may or may not have received the request (a retry carries the same Idempotency-Key)',
    );
    expect(await send({ url: `${origin}/stall` })).toEqual({
      content: JSON.stringify({ ok: false, error: 'request timed out after 500 ms while reading the response (status 200)' }),
      isError: false,
    });
    expect(Date.now() - started).toBeLessThan(30_000);
  });

  it('names the reason when the connection fails', async () => {
    const closed = http.createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    policy.allowedHosts = [`127.0.0.1:${port}`];
    const result = await send({ url: `http://127.0.0.1:${port}/` });
    expect(result.isError).toBe(false);
    expect(body(result).error).toMatch(/^request failed: ECONNREFUSED .*; no response$/);
  });

  it('refuses bad input without sending anything', async () => {
    const error = async (input: unknown): Promise<string> => {
      const result = await send(input);
      expect(result.isError).toBe(true);
      return body(result).error;
    };
    expect(await error({})).toBe('invalid http_request input: url: is required');
    expect(await error({ url: 'not a url' })).toBe('invalid http_request input: url: must be an absolute URL, e.g. https://api.example.com/v1/items');
    expect(await error({ url: 'ftp://127.0.0.1/x' })).toBe('invalid http_request input: url: must be an http:// or https:// URL, not ftp:');
    expect(await error({ url: 'file:///etc/passwd' })).toBe('invalid http_request input: url: must be an http:// or https:// URL, not file:');
    expect(await error({ url: `http://user:secret@${new URL(origin).host}/` })).toBe(
      'invalid http_request input: url: must not contain a user name or password; send credentials in a header',
    );
    expect(await error({ method: 'PUT', url: `${origin}/` })).toBe('invalid http_request input: method: must be "GET" or "POST"');
    expect(await error({ url: `${origin}/`, body: 'x' })).toBe('invalid http_request input: body: a GET request has no body; use POST to send one');
    expect(await error({ method: 'POST', url: `${origin}/`, body: 'x'.repeat(256 * 1024 + 1) })).toBe(
      `invalid http_request input: body: must be at most ${256 * 1024} bytes`,
    );
    for (const name of ['Host', 'content-length', 'Connection', 'Transfer-Encoding', 'Idempotency-Key']) {
      expect(await error({ url: `${origin}/`, headers: { [name]: 'x' } })).toBe(`invalid http_request input: headers.${name}: is set by Parley and may not be given`);
    }
    expect(await error({ url: `${origin}/`, headers: { 'Bad Name': 'x' } })).toBe('invalid http_request input: headers.Bad Name: is not a valid header name');
    expect(await error({ url: `${origin}/`, headers: { 'X-A': 'a\r\nX-B: b' } })).toBe(
      'invalid http_request input: headers.X-A: must not contain line breaks or NUL characters',
    );
    expect(await error({ url: `${origin}/`, headers: { 'X-A': 'a'.repeat(4097) } })).toBe('invalid http_request input: headers.X-A: must be at most 4096 bytes');
    const many = Object.fromEntries(Array.from({ length: 21 }, (_, i) => [`X-H${i}`, 'v']));
    expect(await error({ url: `${origin}/`, headers: many })).toBe('invalid http_request input: headers: at most 20 headers');
    expect(await error({ url: `${origin}/`, headers: { 'X-A': 1 } })).toBe('invalid http_request input: headers.X-A: must be a string');
    expect(received).toEqual([]);
  });

  it('refuses an unknown field, naming it, instead of sending the request without it', async () => {
    routes.set('/pay', (_request, response) => response.end('paid'));
    const result = await send({ method: 'POST', url: `${origin}/pay`, data: '{"amount":100}' });
    expect(result).toEqual({ content: JSON.stringify({ ok: false, error: 'invalid http_request input: data: unknown field' }), isError: true });
    expect(body(await send({ url: `${origin}/pay`, query: { a: 1 }, timeout: 5 })).error).toBe('invalid http_request input: query: unknown field; timeout: unknown field');
    expect(received).toEqual([]);
  });

  it('allows Authorization and Cookie headers to an allowed host', async () => {
    routes.set('/auth', (request, response) => response.end(`${request.headers.authorization} ${request.headers.cookie}`));
    expect(body(await send({ url: `${origin}/auth`, headers: { Authorization: 'Bearer t', Cookie: 'a=1' } })).body).toBe('Bearer t a=1');
  });

  it('gives the model a JSON schema in which only url is required', () => {
    const schema = z.toJSONSchema(HttpRequestInputSchema, { io: 'input' }) as unknown as { required: string[]; properties: Record<string, { description?: string }> };
    expect(schema.required).toEqual(['url']);
    expect(Object.keys(schema.properties)).toEqual(['method', 'url', 'headers', 'body']);
    expect(schema.properties.url.description).toMatch(/allow-list/);
    expect(schema).toMatchObject({ additionalProperties: false });
  });
});
