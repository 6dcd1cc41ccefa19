import { useEffect, useState } from './html.js';

/**
 * Hash routes (`#/stacks/<id>`): the server serves one page for /ui and never needs to know the
 * console's paths. Returns the path segments, e.g. ['stacks', '<id>'].
 */
export function useRoute() {
  const read = () => (location.hash.replace(/^#\/?/, '') || 'fleet').split('?')[0].split('/').filter(Boolean);
  const [route, setRoute] = useState(read);
  useEffect(() => {
    const onChange = () => setRoute(read());
    addEventListener('hashchange', onChange);
    return () => removeEventListener('hashchange', onChange);
  }, []);
  return route;
}

export const link = (...parts) => `#/${parts.map(encodeURIComponent).join('/')}`;
