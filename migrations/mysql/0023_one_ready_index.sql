-- One index of ready instances instead of two: see the PostgreSQL migration of the same name.
-- MySQL and MariaDB have no partial indexes: `(status, app, available_at)` changed at every status
-- change of every instance (two secondary-index writes per transition: the old entry out, the new
-- one in); `(status, app, ready_at)` serves the claim, the next due time and the backlog count.
DROP INDEX ax_instance_ready ON ax_instance;
