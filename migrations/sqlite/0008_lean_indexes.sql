-- Leaner index writes on the hot table (issue 15): a RUNNING attempt without a timeout has no
-- deadline to sweep, so the deadline index leaves it out.
DROP INDEX ax_instance_deadline;
CREATE INDEX ax_instance_deadline ON ax_instance (deadline_at) WHERE status = 'RUNNING' AND deadline_at IS NOT NULL;

-- The label selectors tasks use, read by the dispatcher each time it refreshes its routing state:
-- without an index that read scanned every task. Partial: tasks without a selector are not in it.
CREATE INDEX ax_task_selector ON ax_task (app, selector) WHERE selector <> '';
