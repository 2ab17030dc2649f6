import DOMPurify from 'dompurify';
import { marked } from 'marked';
import { useMemo } from 'preact/hooks';

/**
 * Markdown from the model, rendered and then sanitised: DOMPurify strips scripts, event handlers
 * and javascript: links, so a document cannot run code in the console (the CSP is a second wall).
 */
export function Markdown({ source, testId }: { source: string; testId?: string }) {
  const html = useMemo(() => DOMPurify.sanitize(marked.parse(source, { async: false, gfm: true })), [source]);
  return <div class="markdown" data-testid={testId} dangerouslySetInnerHTML={{ __html: html }} />;
}
