import { createContext } from 'preact';
import { useContext } from 'preact/hooks';
import type { HttpClient } from './api/http.client';
import type { Session } from './auth/session';
import type { LiveClient } from './live/live.client';

export interface AppServices {
  session: Session;
  http: HttpClient;
  live: LiveClient;
  navigate: (path: string) => void;
}

export const AppContext = createContext<AppServices | null>(null);

export function useApp(): AppServices {
  const services = useContext(AppContext);
  if (!services) {
    throw new Error('useApp outside the signed-in shell');
  }
  return services;
}
