-- Several schedules per task (issue 34; README "Several schedules"): the cron and fixed-rate
-- schedules a task has beside its own, as a JSON list ([{"kind": "CRON", "expression": ...,
-- "time_zone": ..., "dialect": ...}, {"kind": "FIXED_RATE", "interval_us": ..., "start_us": ...}]);
-- NULL when it has none. Read with the task row; no index reads it.
ALTER TABLE ax_task ADD COLUMN extra_schedules TEXT NULL;
