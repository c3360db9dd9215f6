-- MySQL and MariaDB index the run deadline without the status here (they have no partial
-- indexes); this backend's index is partial already (RUNNING rows with a deadline, migration 8).
-- The migration keeps the versions the same on every backend.
SELECT 1;
