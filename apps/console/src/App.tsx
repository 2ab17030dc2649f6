import { useEffect, useMemo, useState } from 'preact/hooks';
import { HttpClient } from './api/http.client';
import { AppContext, type AppServices } from './app.context';
import { clearSession, loadSession, saveSession, type Session } from './auth/session';
import { Header } from './components/Header';
import { LiveClient } from './live/live.client';
import { ApprovalsPage } from './pages/ApprovalsPage';
import { RunPage } from './pages/RunPage';
import { RunsPage } from './pages/RunsPage';
import { SignInPage } from './pages/SignInPage';
import { navigate, onLinkClick, useRoute } from './router';

export function App() {
  const [start] = useState(loadSession);
  const [session, setSession] = useState<Session | undefined>(start.session);
  const [problem, setProblem] = useState<string | undefined>(start.problem);

  const signOut = (why?: string): void => {
    clearSession();
    setSession(undefined);
    setProblem(why);
  };

  if (!session) {
    return (
      <SignInPage
        problem={problem}
        onSignIn={(next) => {
          saveSession(next);
          setProblem(undefined);
          setSession(next);
        }}
      />
    );
  }
  return <Shell key={session.token} session={session} onSignOut={signOut} />;
}

function Shell({ session, onSignOut }: { session: Session; onSignOut: (why?: string) => void }) {
  const route = useRoute();
  const services = useMemo<AppServices>(
    () => ({
      session,
      http: new HttpClient(session.token, (message) => onSignOut(`Signed out: ${message}`)),
      live: new LiveClient(session.token),
      navigate,
    }),
    [session.token],
  );
  useEffect(() => () => services.live.close(), [services]);
  return (
    <AppContext.Provider value={services}>
      <Header identity={session.identity} route={route} onSignOut={() => onSignOut()} onRetry={() => services.live.retry()} />
      <main>
        {route.page === 'runs' ? (
          <RunsPage />
        ) : route.page === 'run' ? (
          <RunPage key={route.runId} runId={route.runId} />
        ) : route.page === 'approvals' ? (
          session.identity.role === 'admin' ? (
            <ApprovalsPage />
          ) : (
            <p class="page" data-testid="approvals-forbidden">
              The approval queue is for admins.
            </p>
          )
        ) : (
          <p class="page">
            Nothing at {route.path}.{' '}
            <a href="/runs" onClick={(event) => onLinkClick(event, '/runs')}>
              Go to the runs
            </a>
          </p>
        )}
      </main>
    </AppContext.Provider>
  );
}
