-- One index of ready instances instead of two: see the PostgreSQL migration of the same name. The
-- queries that named `ax_instance_ready` (INDEXED BY) name `ax_instance_ready_order` now.
DROP INDEX IF EXISTS ax_instance_ready;
