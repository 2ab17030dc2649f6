import { CreateWebhookBodySchema } from './webhook.schema';

const issuesOf = (body: unknown) => {
  const parsed = CreateWebhookBodySchema.safeParse(body);
  return parsed.success ? [] : parsed.error.issues.map((issue) => ({ field: issue.path.join('.'), reason: issue.message }));
};

describe('CreateWebhookBodySchema', () => {
  it('keeps a URL as it will be called', () => {
    expect(CreateWebhookBodySchema.parse({ url: 'https:example.com', events: ['run.finished'] }).url).toBe('https://example.com/');
    expect(CreateWebhookBodySchema.parse({ url: ' HTTPS://Example.COM/Hook?a=1 ', events: ['run.finished'] }).url).toBe('https://example.com/Hook?a=1');
  });

  it('refuses a URL with spaces or control characters, which the URL parser would drop or escape', () => {
    for (const url of ['https://exa\nmple.com/x', 'https://example.com/x\ty', 'https://example.com/a b', 'https://example.com/\u0000']) {
      expect(issuesOf({ url, events: ['run.finished'] })).toEqual([{ field: 'url', reason: 'must not contain spaces or control characters' }]);
    }
  });

  it('says once that events must be a list', () => {
    expect(issuesOf({ url: 'https://example.com/', events: 'run.finished' })).toEqual([{ field: 'events', reason: expect.stringContaining('array') }]);
  });
});
