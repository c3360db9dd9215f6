// Shared pieces of every page: links, the live status line, loading with polling, tables whose
// columns are a list (a page adds a column by adding an entry), labelled form fields.
import type { ComponentChildren, JSX } from "preact";
import { useCallback, useEffect, useRef, useState } from "preact/hooks";
import { errorText } from "./api";
import { onLinkClick } from "./router";
import { statusName } from "./format";
import type { InstanceStatus } from "./gen/ax/v1/types_pb";

export function Link(props: { href: string; children: ComponentChildren; class?: string; current?: boolean }) {
  return (
    <a
      href={props.href}
      class={props.class}
      aria-current={props.current ? "page" : undefined}
      onClick={(e) => onLinkClick(e, props.href)}
    >
      {props.children}
    </a>
  );
}

/** What a status line says: a success or an error, as text. */
export type Message = { kind: "ok" | "error"; text: string } | null;

/**
 * A status line that screen readers announce when it changes (the live region is always in the
 * page, so the change itself is announced).
 */
export function Status(props: { msg: Message; id?: string }) {
  const m = props.msg;
  return (
    <div class="status" role="status" aria-live="polite" id={props.id}>
      {m && <p class={m.kind === "error" ? "msg error" : "msg ok"}>{m.text}</p>}
    </div>
  );
}

export interface Loaded<T> {
  data: T | undefined;
  error: string | undefined;
  reload: () => void;
}

/**
 * Calls `load` now, whenever `deps` change, and every `pollMs` while the page shows it (the
 * console polls, as `axctl ... --follow` does; nothing is pushed).
 */
export function useLoad<T>(load: () => Promise<T>, deps: unknown[], pollMs?: number): Loaded<T> {
  const [data, setData] = useState<T | undefined>(undefined);
  const [error, setError] = useState<string | undefined>(undefined);
  const seq = useRef(0);
  const run = useCallback(() => {
    const mine = ++seq.current;
    load().then(
      (d) => {
        if (mine === seq.current) {
          setData(d);
          setError(undefined);
        }
      },
      (e) => {
        if (mine === seq.current) setError(errorText(e));
      },
    );
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, deps);
  useEffect(() => {
    setData(undefined);
    run();
    if (!pollMs) return;
    const t = window.setInterval(run, pollMs);
    return () => window.clearInterval(t);
  }, [run, pollMs]);
  return { data, error, reload: run };
}

/** One column of a [`Table`]: its header and how a row shows in it. */
export interface Column<R> {
  header: string;
  cell: (row: R) => ComponentChildren;
  /** A class for the cells (e.g. `num` for right-aligned numbers). */
  class?: string;
}

export function Table<R>(props: {
  caption: string;
  columns: Column<R>[];
  rows: R[] | undefined;
  rowKey: (row: R) => string;
  empty: string;
  error?: string;
}) {
  if (props.error) return <p class="msg error" role="alert">{props.error}</p>;
  if (!props.rows) return <p class="loading">Loading…</p>;
  return (
    <div class="table-wrap">
      <table>
        <caption class="visually-hidden">{props.caption}</caption>
        <thead>
          <tr>
            {props.columns.map((c) => (
              <th scope="col" class={c.class}>
                {c.header}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {props.rows.length === 0 ? (
            <tr>
              <td colSpan={props.columns.length} class="empty">
                {props.empty}
              </td>
            </tr>
          ) : (
            props.rows.map((r) => (
              <tr key={props.rowKey(r)}>
                {props.columns.map((c) => (
                  <td class={c.class} data-label={c.header}>
                    {c.cell(r)}
                  </td>
                ))}
              </tr>
            ))
          )}
        </tbody>
      </table>
    </div>
  );
}

export function StatusBadge(props: { status: InstanceStatus }) {
  const name = statusName(props.status);
  return <span class={`badge s-${name.toLowerCase()}`}>{name}</span>;
}

let fieldIds = 0;

/** A labelled input; `hint` is read with it (aria-describedby). */
export function Field(props: {
  label: string;
  hint?: string;
  children: (id: string, describedBy: string | undefined) => JSX.Element;
  class?: string;
}) {
  const id = useRef(`f${++fieldIds}`).current;
  const hintId = props.hint ? `${id}-hint` : undefined;
  return (
    <div class={`field ${props.class ?? ""}`}>
      <label for={id}>{props.label}</label>
      {props.children(id, hintId)}
      {props.hint && (
        <small id={hintId} class="hint">
          {props.hint}
        </small>
      )}
    </div>
  );
}

let firstPage = true;

/**
 * The page heading. After a navigation inside the console it takes the focus, so a screen reader
 * starts reading the new page there; the first page of a visit leaves the focus where the browser
 * puts it (so the first Tab reaches the skip link).
 */
export function PageTitle(props: { children: ComponentChildren; title: string }) {
  const ref = useRef<HTMLHeadingElement>(null);
  useEffect(() => {
    document.title = `${props.title} · ax console`;
    if (firstPage) firstPage = false;
    else ref.current?.focus();
  }, [props.title]);
  return (
    <h1 tabIndex={-1} ref={ref}>
      {props.children}
    </h1>
  );
}

/** Runs an action and reports it on a status line; returns whether it succeeded. */
export async function act(
  setMsg: (m: Message) => void,
  what: () => Promise<string>,
): Promise<boolean> {
  try {
    setMsg({ kind: "ok", text: await what() });
    return true;
  } catch (e) {
    setMsg({ kind: "error", text: errorText(e) });
    return false;
  }
}

let pending: string | undefined;

/** A success message for the next page (after a create or save navigates there). */
export function flash(text: string): void {
  pending = text;
}

/** The message [`flash`] left, once. */
export function takeFlash(): Message {
  const t = pending;
  pending = undefined;
  return t ? { kind: "ok", text: t } : null;
}
