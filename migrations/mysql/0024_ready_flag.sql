-- The claim's index without the status (issue 31). MySQL and MariaDB have no partial indexes, so
-- `(status, app, ready_at)` took a change (the old entry out, the new one in) at every status change
-- of every instance: at its claim, and again when it ran and when it ended, though only the claim
-- concerns the ready set. `ready_flag` is 1 while the instance is PENDING and NULL otherwise,
-- computed by the database (a virtual column: nothing is stored in the row), and leads the index
-- instead of the status: a status change that leaves the flag NULL leaves the index alone. The
-- queries of the ready set ask `ready_flag = 1` on MySQL (store::dialect, `pending`).
ALTER TABLE ax_instance ADD COLUMN ready_flag TINYINT AS (CASE WHEN status = 'PENDING' THEN 1 END) VIRTUAL;
CREATE INDEX ax_instance_ready_flag ON ax_instance (ready_flag, app, ready_at);
DROP INDEX ax_instance_ready_order ON ax_instance;
