-- A task's unfinished instances are found through two indexes instead of one (issue 31). The
-- index of a task's PENDING, DISPATCHED and RUNNING instances took a second entry for every
-- instance at its claim (its DISPATCHED version still matched): one of the claim's three index
-- entries. The held instances (DISPATCHED, RUNNING) are all in the lease index already, which holds
-- no more rows than the workers' capacity; the task's queries read its PENDING instances through
-- this index and its held ones through the lease index. A claim now writes its new version into
-- the primary key and the lease index only.
CREATE INDEX ax_instance_task_pending ON ax_instance (task_id) WHERE status = 'PENDING';
DROP INDEX ax_instance_task_active;
