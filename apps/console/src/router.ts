import { useEffect, useState } from 'preact/hooks';

export type Route = { page: 'runs' } | { page: 'run'; runId: string } | { page: 'approvals' } | { page: 'not_found'; path: string };

/** Client routes; the gateway answers each of these paths with index.html. */
export function parseRoute(pathname: string): Route {
  const path = pathname.replace(/\/+$/, '') || '/';
  if (path === '/' || path === '/runs') {
    return { page: 'runs' };
  }
  if (path === '/approvals') {
    return { page: 'approvals' };
  }
  const run = /^\/runs\/([A-Za-z0-9_-]{1,64})$/.exec(path);
  if (run) {
    return { page: 'run', runId: run[1] };
  }
  return { page: 'not_found', path };
}

export function navigate(path: string): void {
  if (path !== window.location.pathname) {
    window.history.pushState(null, '', path);
    window.dispatchEvent(new PopStateEvent('popstate'));
  }
}

export function useRoute(): Route {
  const [route, setRoute] = useState(() => parseRoute(window.location.pathname));
  useEffect(() => {
    const update = (): void => setRoute(parseRoute(window.location.pathname));
    window.addEventListener('popstate', update);
    return () => window.removeEventListener('popstate', update);
  }, []);
  return route;
}

/** Plain clicks on in-app links navigate without a reload; modified clicks keep the browser's behaviour. */
export function onLinkClick(event: MouseEvent, path: string): void {
  if (event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) {
    return;
  }
  event.preventDefault();
  navigate(path);
}
