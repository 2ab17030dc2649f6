import type { Role } from '../api/types';

/**
 * The token lives in sessionStorage: it survives a reload of the tab but not the tab itself, and is
 * not shared with other tabs or written to disk for later sessions the way localStorage is. A
 * bearer token that outlives the browsing session is a token someone else may find.
 */
const STORAGE_KEY = 'parley.token';

export interface Identity {
  tenant: string;
  sub: string;
  role: Role;
  /** Seconds since the epoch, when the token says. */
  exp?: number;
}

export interface Session {
  token: string;
  identity: Identity;
}

/**
 * Reads the JWT payload for display only (who you are, what to show). The gateway verifies the
 * signature on every request; nothing here is trusted for access.
 */
export function decodeIdentity(token: string): Identity | undefined {
  const parts = token.split('.');
  if (parts.length !== 3) {
    return undefined;
  }
  try {
    const json = atob(parts[1].replace(/-/g, '+').replace(/_/g, '/').padEnd(Math.ceil(parts[1].length / 4) * 4, '='));
    const claims = JSON.parse(new TextDecoder().decode(Uint8Array.from(json, (c) => c.charCodeAt(0)))) as Record<string, unknown>;
    const { tenant, sub, role, exp } = claims;
    if (typeof tenant !== 'string' || typeof sub !== 'string' || typeof role !== 'string') {
      return undefined;
    }
    return { tenant, sub, role: role as Role, ...(typeof exp === 'number' ? { exp } : {}) };
  } catch {
    return undefined;
  }
}

/** Roles that see a tenant's runs; an operator token reaches only the operator routes. */
const CONSOLE_ROLES: readonly string[] = ['member', 'admin', 'service'];

export const NOT_A_TOKEN = 'That is not a Parley token: paste the whole JWT (three parts separated by dots, with tenant, sub and role claims).';

export function sessionFrom(rawToken: string): { session: Session } | { problem: string } {
  const token = rawToken.trim().replace(/^Bearer\s+/i, '');
  const identity = decodeIdentity(token);
  if (!identity) {
    return { problem: NOT_A_TOKEN };
  }
  if (!CONSOLE_ROLES.includes(identity.role)) {
    return { problem: `A token with role ${identity.role} cannot use the console: sign in as a member or an admin of a tenant.` };
  }
  return { session: { token, identity } };
}

/**
 * A `?token=` in the address (from `parley token --open`) signs in and is removed from the address
 * bar and history at once, so it is not left in the history, bookmarks or a shared screen.
 */
export function takeTokenFromUrl(): string | undefined {
  const url = new URL(window.location.href);
  const token = url.searchParams.get('token');
  if (token === null) {
    return undefined;
  }
  url.searchParams.delete('token');
  window.history.replaceState(window.history.state, '', `${url.pathname}${url.search}${url.hash}`);
  return token;
}

/**
 * The session to start with: a `?token=` link first, then the tab's stored token. A link that would
 * switch a signed-in tab to another identity (someone else's link, e.g. in a document an agent
 * wrote) must be confirmed: otherwise what this person types next could go to another tenant.
 */
export function loadSession(confirmSwitch: (from: Identity, to: Identity) => boolean = askToSwitch): { session?: Session; problem?: string } {
  const stored = window.sessionStorage.getItem(STORAGE_KEY);
  const current = stored === null ? undefined : sessionFrom(stored);
  const currentSession = current && 'session' in current ? current.session : undefined;
  const fromUrl = takeTokenFromUrl();
  if (fromUrl !== undefined) {
    const result = sessionFrom(fromUrl);
    if ('session' in result) {
      if (currentSession && !sameIdentity(currentSession.identity, result.session.identity) && !confirmSwitch(currentSession.identity, result.session.identity)) {
        return { session: currentSession };
      }
      saveSession(result.session);
    }
    return result;
  }
  return currentSession ? { session: currentSession } : {};
}

function sameIdentity(a: Identity, b: Identity): boolean {
  return a.tenant === b.tenant && a.sub === b.sub && a.role === b.role;
}

function askToSwitch(from: Identity, to: Identity): boolean {
  return window.confirm(
    `This link signs you in as ${to.sub} (${to.role}) of tenant ${to.tenant}, instead of ${from.sub} (${from.role}) of tenant ${from.tenant}. Switch?`,
  );
}

export function saveSession(session: Session): void {
  window.sessionStorage.setItem(STORAGE_KEY, session.token);
}

export function clearSession(): void {
  window.sessionStorage.removeItem(STORAGE_KEY);
}
