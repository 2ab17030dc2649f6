import { useState } from 'preact/hooks';
import { sessionFrom, type Session } from '../auth/session';
import { FormError } from '../components/FormError';

export function SignInPage({ problem, onSignIn }: { problem?: string; onSignIn: (session: Session) => void }) {
  const [token, setToken] = useState('');
  const [error, setError] = useState<string | undefined>(problem);
  return (
    <main class="sign-in">
      <h1>Parley console</h1>
      <form
        onSubmit={(event) => {
          event.preventDefault();
          const result = sessionFrom(token);
          if ('problem' in result) {
            setError(result.problem);
            return;
          }
          onSignIn(result.session);
        }}
      >
        <label for="token-input">Token</label>
        <textarea id="token-input" data-testid="token-input" rows={4} autoComplete="off" spellcheck={false} value={token} onInput={(event) => setToken(event.currentTarget.value)} />
        <p class="muted">
          Paste a token, or run <code>parley token --open</code> to open the console signed in. The token stays in this tab only.
        </p>
        <button type="submit" data-testid="sign-in">
          Sign in
        </button>
        <FormError message={error} testId="sign-in-error" />
      </form>
    </main>
  );
}
