-- Leaner index writes and reads (issue 15). On PostgreSQL and SQLite this version makes the run
-- deadline index partial and adds a partial index of the tasks that have a label selector; MySQL
-- and MariaDB have no partial indexes (a full index on the selector, up to 4 KB in utf8mb4, is
-- over InnoDB's key size), so there is nothing to change here: the version exists so that every
-- backend has the same list.
SELECT 1;
