import { useEffect, useRef, useState } from 'preact/hooks';
import { dashboardApi, type SessionUser } from '../api/dashboard-routes.js';
import { ErrorBox } from '../ui/components.js';
import { href, onLinkClick } from '../router.js';

/** Sign in (or sign up, when the server has SIGNUP_ENABLED). Errors are the server's, in a role="alert". */
export function SignInPage(props: {
  mode: 'sign-in' | 'sign-up';
  signupEnabled: boolean;
  /** While the server has no user: the command that creates the first owner (as the start-up line says it). */
  createOwner?: string | null;
  expired: boolean;
  onSignedIn: (s: SessionUser) => void;
}) {
  const { mode } = props;
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [name, setName] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(undefined);
  const heading = useRef<HTMLHeadingElement>(null);
  useEffect(() => heading.current?.focus(), [mode]);

  const submit = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    setError(undefined);
    try {
      const session =
        mode === 'sign-up'
          ? await dashboardApi.signup({ email, password, ...(name.trim() ? { name: name.trim() } : {}) })
          : await dashboardApi.login(email, password);
      props.onSignedIn(session);
    } catch (err) {
      setError(err);
      setBusy(false);
    }
  };

  return (
    <main class="auth" onClick={(e) => onLinkClick(e as unknown as MouseEvent)}>
      <form class="card auth-card" onSubmit={(e) => void submit(e)} noValidate>
        <p class="brand">Parley</p>
        <h1 ref={heading} tabIndex={-1}>
          {mode === 'sign-up' ? 'Create your account' : 'Sign in'}
        </h1>
        {props.expired && mode === 'sign-in' && (
          <p class="notice" role="status">
            Your session ended. Sign in again to continue where you were.
          </p>
        )}
        {mode === 'sign-in' && props.createOwner && (
          <p class="notice" role="note" aria-label="First owner">
            No owner yet. Create the first one on the server with <code>{props.createOwner}</code> (it reads the
            password from standard input), then sign in here.
          </p>
        )}
        {mode === 'sign-up' && (
          <label>
            Name
            <input name="name" autocomplete="name" value={name} onInput={(e) => setName(e.currentTarget.value)} />
          </label>
        )}
        <label>
          Email
          <input
            name="email"
            type="email"
            autocomplete="email"
            required
            value={email}
            onInput={(e) => setEmail(e.currentTarget.value)}
          />
        </label>
        <label>
          Password
          <input
            name="password"
            type="password"
            autocomplete={mode === 'sign-up' ? 'new-password' : 'current-password'}
            required
            value={password}
            onInput={(e) => setPassword(e.currentTarget.value)}
          />
        </label>
        <ErrorBox error={error} title={mode === 'sign-up' ? 'Could not create the account' : 'Could not sign in'} />
        <button type="submit" class="primary" disabled={busy}>
          {busy ? 'Please wait…' : mode === 'sign-up' ? 'Create account' : 'Sign in'}
        </button>
        {props.signupEnabled &&
          (mode === 'sign-up' ? (
            <p>
              Already have an account? <a href={href('/sign-in')}>Sign in</a>
            </p>
          ) : (
            <p>
              New here? <a href={href('/sign-up')}>Create an account</a>
            </p>
          ))}
      </form>
    </main>
  );
}
