import { useEffect, useState, type ReactNode, type MouseEvent } from 'react';

/** Client routes under /dashboard: the gateway serves index.html for each, so a reload lands on the same page. */
const BASE = '/dashboard';

function current(): string {
  const path = window.location.pathname.startsWith(BASE) ? window.location.pathname.slice(BASE.length) : '/';
  return path === '' ? '/' : path;
}

export function navigate(to: string): void {
  window.history.pushState(null, '', BASE + (to === '/' ? '' : to));
  window.dispatchEvent(new PopStateEvent('popstate'));
}

export function usePath(): string {
  const [path, setPath] = useState(current);
  useEffect(() => {
    const update = () => setPath(current());
    window.addEventListener('popstate', update);
    return () => window.removeEventListener('popstate', update);
  }, []);
  return path;
}

export function Link({ to, children, current: isCurrent }: { to: string; children: ReactNode; current?: boolean }) {
  const onClick = (event: MouseEvent<HTMLAnchorElement>) => {
    if (event.metaKey || event.ctrlKey || event.shiftKey || event.button !== 0) return;
    event.preventDefault();
    navigate(to);
  };
  return (
    <a href={BASE + (to === '/' ? '' : to)} onClick={onClick} aria-current={isCurrent ? 'page' : undefined}>
      {children}
    </a>
  );
}
