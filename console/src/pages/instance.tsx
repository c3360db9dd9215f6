// One instance: its state, its trail as a timeline with the time between steps, its logs as they
// arrive (as `axctl instance logs --follow`), cancel and retry.
import { useEffect, useRef, useState } from "preact/hooks";
import { api } from "../api";
import { FINAL, browserZone, span, statusName, timeIn, toDate } from "../format";
import { InstanceSource, type InstanceEvent, type LogLine } from "../gen/ax/v1/admin_pb";
import { InstanceStatus, LogLevel } from "../gen/ax/v1/types_pb";
import { taskHref } from "../router";
import { Field, Link, type Message, PageTitle, Status, StatusBadge, act, useLoad } from "../ui";

export function InstancePage(props: { id: string }) {
  const id = BigInt(/^\d+$/.test(props.id) ? props.id : "0");
  const [msg, setMsg] = useState<Message>(null);
  const [reason, setReason] = useState("");
  const got = useLoad(() => api.getInstance({ id }), [props.id], 1000);
  const inst = got.data?.instance;
  const final = inst ? FINAL.has(inst.status) : false;

  if (!inst) {
    return (
      <section>
        <PageTitle title={`Instance ${props.id}`}>Instance {props.id}</PageTitle>
        {got.error ? <p class="msg error" role="alert">{got.error}</p> : <p class="loading">Loading…</p>}
      </section>
    );
  }
  const cancel = (e: Event) => {
    e.preventDefault();
    act(setMsg, async () => {
      const r = await api.cancelInstance({ id, reason: reason.trim() });
      return `Instance ${id} is ${statusName(r.instance?.status ?? 0)}.`;
    }).then(got.reload);
  };
  const retry = () =>
    act(setMsg, async () => {
      const r = await api.retryInstance({ id });
      return `Instance ${id} is ${statusName(r.instance?.status ?? 0)} again.`;
    }).then(got.reload);

  return (
    <section>
      <PageTitle title={`Instance ${id}`}>
        Instance {String(id)} <StatusBadge status={inst.status} />
      </PageTitle>
      <dl class="facts">
        <dt>Task</dt>
        <dd>
          <Link href={taskHref(inst.taskName)}>{inst.taskName}</Link> (app {inst.app}, handler {inst.handler})
        </dd>
        <dt>Source</dt>
        <dd>{InstanceSource[inst.source]}</dd>
        <dt>Trigger time</dt>
        <dd>{timeIn(inst.triggerTime)}</dd>
        <dt>Attempt</dt>
        <dd>
          {inst.attempt} ({inst.failures} failed; {inst.maxRetries} retries allowed)
        </dd>
        <dt>Worker</dt>
        <dd>{inst.workerId || "-"}</dd>
        <dt>Started</dt>
        <dd>{timeIn(inst.startTime)}</dd>
        <dt>Finished</dt>
        <dd>{timeIn(inst.finishTime)}</dd>
        {inst.progressMessage || inst.progressPercent ? (
          <>
            <dt>Progress</dt>
            <dd>
              {inst.progressPercent}% {inst.progressMessage}
            </dd>
          </>
        ) : null}
        <dt>Message</dt>
        <dd>{inst.message || "-"}</dd>
        <dt>Params</dt>
        <dd>
          <code>{inst.params}</code>
        </dd>
        {inst.output && (
          <>
            <dt>Output</dt>
            <dd>
              <code>{inst.output}</code>
            </dd>
          </>
        )}
        <dt>Idempotency key</dt>
        <dd>
          <code>{inst.idempotencyKey}</code>
        </dd>
        {Object.keys(inst.tags).length > 0 && (
          <>
            <dt>Tags</dt>
            <dd>
              {Object.entries(inst.tags)
                .sort()
                .map(([k, v]) => `${k}=${v}`)
                .join(", ")}
            </dd>
          </>
        )}
        {inst.runId !== 0n && (
          <>
            <dt>Run</dt>
            <dd>
              <Link href={`/runs/${inst.runId}`}>{String(inst.runId)}</Link>
            </dd>
          </>
        )}
        {inst.traceId && (
          <>
            <dt>Trace</dt>
            <dd>
              <code>{inst.traceId}</code>
            </dd>
          </>
        )}
      </dl>
      <div class="toolbar">
        {!final && (
          <form class="inline-form" onSubmit={cancel}>
            <Field label="Reason" class="inline">
              {(fid) => <input id={fid} value={reason} onInput={(e) => setReason(e.currentTarget.value)} />}
            </Field>
            <button type="submit" class="danger">
              Cancel instance
            </button>
          </form>
        )}
        {final && inst.status !== InstanceStatus.SUCCESS && (
          <button type="button" onClick={retry}>
            Retry instance
          </button>
        )}
      </div>
      <Status msg={msg} />
      <h2>Trail</h2>
      <Timeline events={got.data?.events ?? []} />
      <h2>Logs</h2>
      <Logs id={id} final={final} />
    </section>
  );
}

function Timeline(props: { events: InstanceEvent[] }) {
  const first = toDate(props.events[0]?.time)?.getTime();
  let prev: number | undefined;
  return (
    <ol class="timeline" aria-label="State changes, oldest first">
      {props.events.map((e) => {
        const t = toDate(e.time)?.getTime();
        const step = t !== undefined && prev !== undefined ? span(t - prev) : undefined;
        prev = t ?? prev;
        return (
          <li>
            {step && <span class="step">+{step}</span>}
            <span class="when">{timeIn(e.time, browserZone)}</span>
            <span class="change">
              {e.fromStatus === InstanceStatus.UNSPECIFIED ? "created" : statusName(e.fromStatus)} →{" "}
              <strong>{statusName(e.toStatus)}</strong>
            </span>
            <span class="meta">
              attempt {e.attempt}
              {e.workerId && <>, worker {e.workerId}</>}
              {t !== undefined && first !== undefined && t !== first && <>, {span(t - first)} since created</>}
            </span>
            {e.reason && <span class="reason">{e.reason}</span>}
          </li>
        );
      })}
    </ol>
  );
}

/** Follows the instance's log: asks for the lines after the last one every second until the
 * instance is final, then once more (axd stores a worker's lines before its result). */
function Logs(props: { id: bigint; final: boolean }) {
  const [lines, setLines] = useState<LogLine[]>([]);
  const [dropped, setDropped] = useState(0n);
  const [error, setError] = useState<string | undefined>();
  const after = useRef(0n);
  const finalRef = useRef(props.final);
  finalRef.current = props.final;
  useEffect(() => {
    after.current = 0n;
    setLines([]);
    let stopped = false;
    let timer = 0;
    const round = async () => {
      const wasFinal = finalRef.current;
      try {
        const r = await api.getInstanceLogs({ id: props.id, afterSeq: after.current });
        if (stopped) return;
        if (r.lines.length) {
          after.current = r.lines[r.lines.length - 1].seq;
          setLines((old) => [...old, ...r.lines]);
        }
        setDropped(r.dropped);
        setError(undefined);
      } catch (e) {
        setError(String(e));
      }
      if (!stopped && !wasFinal) timer = window.setTimeout(round, 1000);
    };
    round();
    return () => {
      stopped = true;
      window.clearTimeout(timer);
    };
  }, [props.id, props.final]);
  return (
    <div>
      <div class="logs" role="log" aria-label="Log lines" tabIndex={0}>
        {lines.length === 0 ? (
          <p class="empty">{props.final ? "No log lines." : "Waiting for log lines…"}</p>
        ) : (
          lines.map((l) => (
            <div class={`line l-${(LogLevel[l.level] ?? "INFO").toLowerCase()}`}>
              <span class="when">{timeIn(l.time)}</span> <span class="attempt">attempt {l.attempt}</span>{" "}
              <span class="level">{LogLevel[l.level] === "UNSPECIFIED" ? "INFO" : LogLevel[l.level]}</span> {l.message}
            </div>
          ))
        )}
      </div>
      {dropped > 0n && <p class="hint">{String(dropped)} line(s) dropped (axd keeps at most 1000 per instance).</p>}
      {error && <p class="msg error">{error}</p>}
    </div>
  );
}
