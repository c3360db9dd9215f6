// Schedules as text, and the zone a task's times are read in.
import { timestampDate } from "@bufbuild/protobuf/wkt";
import { CronDialect, type Schedule, type Task } from "./gen/ax/v1/admin_pb";
import { durationMs, setting, timeIn } from "./format";

/** The zone of a task's wall clock: its cron zone, else UTC (intervals ignore wall clocks). */
export function taskZone(task: Task | undefined): string {
  const k = task?.spec?.schedule?.kind;
  return k?.case === "cron" && k.value.timeZone ? k.value.timeZone : "UTC";
}

export function describeSchedule(s: Schedule | undefined): string {
  const k = s?.kind;
  switch (k?.case) {
    case "cron": {
      const dialect = k.value.dialect === CronDialect.QUARTZ ? " (quartz)" : k.value.dialect === CronDialect.UNIX ? " (unix)" : "";
      return `cron ${k.value.expression}${dialect} in ${k.value.timeZone || "UTC"}`;
    }
    case "fixedRate":
      return `every ${setting(durationMs(k.value.interval) ?? 0)}`;
    case "fixedDelay":
      return `${setting(durationMs(k.value.interval) ?? 0)} after each finishes`;
    case "oneTime":
      return k.value.when.case === "at"
        ? `once at ${timeIn(timestampDate(k.value.when.value), "UTC")}`
        : k.value.when.case === "after"
          ? `once, ${setting(durationMs(k.value.when.value) ?? 0)} after creation`
          : "once";
    case "manual":
      return "manual (only when triggered)";
    default:
      return "-";
  }
}
