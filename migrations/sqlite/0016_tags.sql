-- Tags and search (issue 34; README "Tags and search").
--
-- ax_task.search_params: the params paths (comma-separated, "params.customer_id,params.region")
-- whose values each instance of the task is found by. ax_instance_tag: an instance's tags — those
-- its trigger gave, and "params.PATH" = value for each of its task's search_params — written with
-- the instance, deleted with it. The primary key serves every lookup by tag (name, value, then
-- the newest ids); the second index, deleting an instance's tags.
ALTER TABLE ax_task ADD COLUMN search_params VARCHAR(600) NULL;

CREATE TABLE ax_instance_tag (
    name VARCHAR(200) NOT NULL,
    value VARCHAR(255) NOT NULL,
    instance_id BIGINT NOT NULL,
    PRIMARY KEY (name, value, instance_id)
);
CREATE INDEX ax_instance_tag_instance ON ax_instance_tag (instance_id);
