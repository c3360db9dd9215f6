-- Leaner index writes on the hot table (issue 15). Every status change of an instance is a new row
-- version that gets an entry in each index whose predicate it matches; a RUNNING attempt without a
-- timeout has no deadline to sweep, so the deadline index leaves it out (the sweeper's queries
-- compare deadline_at, which is never true of NULL).
DROP INDEX ax_instance_deadline;
CREATE INDEX ax_instance_deadline ON ax_instance (deadline_at) WHERE status = 'RUNNING' AND deadline_at IS NOT NULL;

-- The label selectors tasks use, read by every axd's dispatcher each time it refreshes its routing
-- state: without an index that read scanned every task (48 ms at 100,000 tasks). Partial: the
-- tasks without a selector, usually nearly all, are not in it. A selector is at most 1,024 bytes.
CREATE INDEX ax_task_selector ON ax_task (app, selector) WHERE selector <> '';
