-- PostgreSQL and SQLite index a task's PENDING instances apart from its held ones (their migration
-- 22); MySQL and MariaDB have no partial indexes, and `(task_id, status)` serves both. The
-- migration keeps the versions the same on every backend.
SELECT 1;
