-- The run-deadline index without the status (issue 31). MySQL and MariaDB have no partial indexes,
-- so `(status, deadline_at)` changed with every status change of every instance - at its claim and
-- at its result - although only attempts with a timeout have a deadline. `deadline_at` is set when
-- an attempt starts running with a timeout and cleared whenever the attempt is released (result,
-- retry, cancel, timeout, lost worker), so an index on it alone holds exactly the running timed
-- attempts, and an instance without a timeout never changes it: 2 of the 10 secondary-index
-- changes of such an instance's claim and result fewer. Deadlines left on rows that are not
-- RUNNING (none are expected) are cleared first, so the sweeper's scan stays that small.
UPDATE ax_instance SET deadline_at = NULL WHERE status <> 'RUNNING' AND deadline_at IS NOT NULL;
DROP INDEX ax_instance_deadline ON ax_instance;
CREATE INDEX ax_instance_deadline ON ax_instance (deadline_at);
