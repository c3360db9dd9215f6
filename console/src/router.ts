// Page routes in the path (`/tasks/nightly.report`), with the History API. axd answers index.html
// for every path outside /assets/, so a reload or a pasted link opens the same page.
import { useEffect, useState } from "preact/hooks";

export interface Location {
  path: string;
  query: URLSearchParams;
}

const listeners = new Set<() => void>();

function current(): Location {
  // The root is the task list, and its address says so. (Redirecting from a page's render missed
  // the first load: no listener was registered yet, so the root rendered an empty page.)
  if (window.location.pathname === "/") window.history.replaceState(null, "", "/tasks" + window.location.search);
  return { path: window.location.pathname, query: new URLSearchParams(window.location.search) };
}

export function navigate(to: string, replace = false): void {
  if (replace) window.history.replaceState(null, "", to);
  else window.history.pushState(null, "", to);
  for (const l of listeners) l();
}

window.addEventListener("popstate", () => {
  for (const l of listeners) l();
});

export function useLocation(): Location {
  const [loc, setLoc] = useState(current);
  useEffect(() => {
    const l = () => setLoc(current());
    listeners.add(l);
    return () => listeners.delete(l);
  }, []);
  return loc;
}

/** A link for a route: `href` for the browser (new tab, copy), navigation in place on a plain click. */
export function onLinkClick(e: MouseEvent, href: string): void {
  if (e.defaultPrevented || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
  e.preventDefault();
  navigate(href);
}

export const taskHref = (name: string) => `/tasks/${encodeURIComponent(name)}`;
export const instanceHref = (id: bigint | number) => `/instances/${id}`;
