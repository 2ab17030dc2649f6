import type { Identity } from '../auth/session';
import { useLastSeq, useLiveStatus } from '../live/live.hooks';
import { onLinkClick, type Route } from '../router';

const STATE_LABELS = { connecting: 'connecting…', live: 'live', reconnecting: 'reconnecting…', refused: 'refused' } as const;

export function Header({ identity, route, onSignOut, onRetry }: { identity: Identity; route: Route; onSignOut: () => void; onRetry: () => void }) {
  const status = useLiveStatus();
  const seq = useLastSeq();
  const link = (path: string, label: string, active: boolean, testId: string) => (
    <a href={path} data-testid={testId} aria-current={active ? 'page' : undefined} onClick={(event) => onLinkClick(event, path)}>
      {label}
    </a>
  );
  return (
    <header class="top">
      <span class="brand">Parley</span>
      <nav aria-label="Main">
        {link('/runs', 'Runs', route.page === 'runs' || route.page === 'run', 'nav-runs')}
        {identity.role === 'admin' ? link('/approvals', 'Approvals', route.page === 'approvals', 'nav-approvals') : null}
      </nav>
      <span class={`connection ${status.state}`} data-testid="connection" data-state={status.state} data-seq={seq} role="status" title={status.problem}>
        {STATE_LABELS[status.state]}
        {status.state === 'refused' ? (
          <button type="button" class="link" onClick={onRetry}>
            retry
          </button>
        ) : null}
      </span>
      <span class="who" data-testid="whoami">
        <span title="tenant">{identity.tenant}</span> · <span title="subject">{identity.sub}</span> · <span title="role">{identity.role}</span>
      </span>
      <button type="button" class="secondary" data-testid="sign-out" onClick={onSignOut}>
        Sign out
      </button>
    </header>
  );
}
