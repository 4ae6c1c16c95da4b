import { useEffect, useState } from 'preact/hooks';
import { onSessionExpired } from './api/client.js';
import { dashboardApi, type SessionUser } from './api/dashboard-routes.js';
import { AdminPage } from './pages/admin.js';
import { AssistantPage } from './pages/assistant.js';
import { AssistantsPage } from './pages/assistants.js';
import { BillingPage } from './pages/billing.js';
import { CallLogPage } from './pages/call-log.js';
import { KeysPage } from './pages/keys.js';
import { OverviewPage } from './pages/overview.js';
import { PhoneNumbersPage } from './pages/phone-numbers.js';
import { SignInPage } from './pages/sign-in.js';
import { UsagePage } from './pages/usage.js';
import { WebhooksPage } from './pages/webhooks.js';
import { ErrorBox, Loading } from './ui/components.js';
import { currentPath, href, navigate, onLinkClick, useRoute } from './router.js';

type Auth =
  | { state: 'checking' }
  | { state: 'signed-out'; reason?: 'expired' }
  | { state: 'signed-in'; session: SessionUser }
  | { state: 'error'; error: unknown };

const PUBLIC = new Set(['/sign-in', '/sign-up']);
/** Where a signed-in owner lands: the day across every assistant. */
const HOME = '/overview';

function signInPath(reason?: 'expired'): string {
  const here = currentPath() + location.search;
  const next = PUBLIC.has(currentPath()) || here === '/' ? '' : `next=${encodeURIComponent(here)}`;
  const params = [next, reason ? 'expired=1' : ''].filter(Boolean).join('&');
  return `/sign-in${params ? `?${params}` : ''}`;
}

export function App() {
  const route = useRoute();
  const [auth, setAuth] = useState<Auth>({ state: 'checking' });
  const [signupEnabled, setSignupEnabled] = useState(false);
  const [createOwner, setCreateOwner] = useState<string | null>(null);

  useEffect(() => {
    dashboardApi.config().then(
      (c) => {
        setSignupEnabled(c.signupEnabled);
        setCreateOwner(c.createOwner);
      },
      () => undefined,
    );
    dashboardApi.me().then(
      (session) => setAuth({ state: 'signed-in', session }),
      (error: { status?: number }) => {
        if (error.status === 401) {
          setAuth({ state: 'signed-out' });
          if (!PUBLIC.has(currentPath())) navigate(signInPath(), { replace: true });
        } else setAuth({ state: 'error', error });
      },
    );
    // Any call answered 401 (the session expired or was revoked): sign in again, then come back here.
    return onSessionExpired(() => {
      setAuth((a) => (a.state === 'signed-in' ? { state: 'signed-out', reason: 'expired' } : a));
      if (!PUBLIC.has(currentPath())) navigate(signInPath('expired'), { replace: true });
    });
  }, []);

  useEffect(() => {
    if (auth.state === 'signed-in' && (PUBLIC.has(route.path) || route.path === '/')) navigate(HOME, { replace: true });
  }, [auth.state, route.path]);

  if (auth.state === 'checking')
    return (
      <main class="boot">
        <Loading label="Loading the Parley dashboard…" />
      </main>
    );
  if (auth.state === 'error')
    return (
      <main class="boot">
        <ErrorBox error={auth.error} title="The dashboard could not reach the server" />
      </main>
    );
  if (auth.state === 'signed-out' || PUBLIC.has(route.path)) {
    return (
      <SignInPage
        mode={route.path === '/sign-up' && signupEnabled ? 'sign-up' : 'sign-in'}
        signupEnabled={signupEnabled}
        createOwner={createOwner}
        expired={route.search.get('expired') === '1'}
        onSignedIn={(session) => {
          setAuth({ state: 'signed-in', session });
          const next = route.search.get('next');
          navigate(next && next.startsWith('/') && !next.startsWith('//') ? next : HOME, { replace: true });
        }}
      />
    );
  }
  return <Shell session={auth.session} path={route.path} onSignedOut={() => setAuth({ state: 'signed-out' })} />;
}

function Shell({ session, path, onSignedOut }: { session: SessionUser; path: string; onSignedOut: () => void }) {
  const [menuOpen, setMenuOpen] = useState(false);
  const [signOutError, setSignOutError] = useState<unknown>(undefined);
  const signOut = async () => {
    try {
      await dashboardApi.logout();
      onSignedOut();
      navigate('/sign-in', { replace: true });
    } catch (err) {
      setSignOutError(err);
    }
  };
  const links: Array<[string, string]> = [
    ['/overview', 'Overview'],
    ['/call-log', 'Call log'],
    ['/assistants', 'Assistants'],
    ['/phone-numbers', 'Phone numbers'],
    ['/usage', 'Usage'],
    ['/keys', 'API keys'],
    ['/webhooks', 'Webhooks'],
    ['/billing', 'Billing'],
  ];
  if (session.user.isAdmin) links.push(['/admin', 'Admin']);
  return (
    <div class="shell" onClick={(e) => onLinkClick(e as unknown as MouseEvent)}>
      <a class="skip" href="#content">
        Skip to content
      </a>
      <header class="top">
        <a class="brand" href={href(HOME)}>
          Parley
        </a>
        <button
          type="button"
          class="menu-toggle"
          aria-expanded={menuOpen}
          aria-controls="main-nav"
          onClick={() => setMenuOpen(!menuOpen)}
        >
          Menu
        </button>
        <nav id="main-nav" aria-label="Main" class={menuOpen ? 'open' : ''} onClick={() => setMenuOpen(false)}>
          {links.map(([to, label]) => (
            <a href={href(to)} aria-current={path.startsWith(to) ? 'page' : undefined}>
              {label}
            </a>
          ))}
        </nav>
        <div class="who">
          <span class="email" title={session.user.email}>
            {session.user.email}
          </span>
          <button type="button" onClick={() => void signOut()}>
            Sign out
          </button>
        </div>
      </header>
      {session.account.status !== 'active' && (
        <p class="banner" role="status">
          This account is {session.account.status}: the service refuses its API calls until an operator reactivates it.
        </p>
      )}
      <ErrorBox error={signOutError} title="Sign-out failed" />
      <main id="content">
        <Page session={session} path={path} />
      </main>
    </div>
  );
}

function Page({ session, path }: { session: SessionUser; path: string }) {
  const parts = path.split('/').filter(Boolean).map(decodeURIComponent);
  switch (parts[0]) {
    case 'overview':
      return <OverviewPage />;
    case 'call-log':
      return <CallLogPage key={location.search} />;
    case 'assistants':
      if (parts.length === 1) return <AssistantsPage />;
      return <AssistantPage key={parts[1]} assistantId={parts[1]!} tab={parts[2] ?? 'settings'} sub={parts[3]} />;
    case 'phone-numbers':
      return <PhoneNumbersPage />;
    case 'usage':
      return <UsagePage />;
    case 'keys':
      return <KeysPage />;
    case 'billing':
      return <BillingPage />;
    case 'webhooks':
      return <WebhooksPage />;
    case 'admin':
      return <AdminPage self={session} />;
    default:
      return (
        <section>
          <h1 tabIndex={-1}>Page not found</h1>
          <p>
            There is nothing at this address. <a href={href('/assistants')}>Go to your assistants</a>.
          </p>
        </section>
      );
  }
}
