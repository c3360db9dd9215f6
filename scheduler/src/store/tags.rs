//! Instance tags (`ax_instance_tag`): written with their instances, read for the calls that show
//! instances, and the filters that find instances by a tag, a task label or a search param.

use std::collections::HashMap;

use super::{
    BATCH, InstanceRow, Instances, Tasks,
    tables::decode_labels,
    value::{Stmt, Value},
};
use crate::error::StoreResult;

/// A filter by one tag: instances with the tag `name=value`, or of one of `tasks` (the tasks
/// labeled `name=value`; empty for a search param, which only instance tags hold).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TagFilter {
    /// Tag name (`params.PATH` for a search param).
    pub name: String,
    /// Tag value.
    pub value: String,
    /// Tasks whose instances match whatever their tags.
    pub tasks: Vec<i64>,
}

/// Appends ` AND …` for each filter to a query of `ax_instance` (its id column `id_col`): the tag
/// table's primary key (name, value, instance id) serves each, and the key table's (task id,
/// key) a task label's.
pub(super) fn push_tag_filters<'a>(s: &mut Stmt<'a>, id_col: &str, filters: &'a [TagFilter]) {
    for f in filters {
        s.push(&format!(" AND ({id_col} IN (SELECT instance_id FROM ax_instance_tag WHERE name = "));
        s.push_bind(f.name.as_str()).push(" AND value = ").push_bind(f.value.as_str()).push(")");
        if !f.tasks.is_empty() {
            // The labeled tasks' instances by the key table's primary key (task id first).
            s.push(&format!(" OR {id_col} IN (SELECT instance_id FROM ax_instance_key WHERE task_id IN "));
            s.push_list(f.tasks.iter().copied()).push(")");
        }
        s.push(")");
    }
}

impl Instances<'_> {
    /// The tag rows of the instances just created (none written when none has a tag).
    pub(super) async fn insert_tags(
        &mut self,
        fresh: &[InstanceRow<'_>],
        created: &[(i64, i64, String)],
    ) -> StoreResult<()> {
        if fresh.iter().all(|r| r.new.tags.is_empty()) {
            return Ok(());
        }
        let by_key: HashMap<(i64, &str), &[(String, String)]> =
            fresh.iter().map(|r| ((r.task.id, r.new.key.as_str()), r.new.tags.as_slice())).collect();
        let mut rows: Vec<(&str, &str, i64)> = Vec::new();
        for (id, task, key) in created {
            for (name, value) in by_key.get(&(*task, key.as_str())).copied().unwrap_or_default() {
                rows.push((name.as_str(), value.as_str(), *id));
            }
        }
        for chunk in rows.chunks(BATCH) {
            let mut s = Stmt::new("INSERT INTO ax_instance_tag (name, value, instance_id) VALUES ");
            s.push_rows(chunk.iter().map(|(n, v, id)| vec![Value::from(*n), Value::from(*v), Value::I64(*id)]));
            self.tx.execute(s).await?;
        }
        Ok(())
    }

    /// The tags of these instances, by instance, in name order.
    pub async fn tags_of(&mut self, ids: &[i64]) -> StoreResult<HashMap<i64, Vec<(String, String)>>> {
        let mut out: HashMap<i64, Vec<(String, String)>> = HashMap::new();
        for chunk in ids.chunks(BATCH) {
            let mut s = Stmt::new("SELECT instance_id, name, value FROM ax_instance_tag WHERE instance_id IN ");
            s.push_list(chunk.iter().copied()).push(" ORDER BY instance_id, name");
            let rows = self
                .tx
                .fetch(s, "ax_instance_tag", |r| Ok((r.take::<i64>()?, r.take::<String>()?, r.take::<String>()?)))
                .await?;
            for (id, name, value) in rows {
                out.entry(id).or_default().push((name, value));
            }
        }
        Ok(out)
    }
}

impl Tasks<'_> {
    /// The ids of the tasks labeled `name=value` (labels are a JSON object per task: read and
    /// matched here, a task table being small).
    pub async fn tasks_labeled(&mut self, name: &str, value: &str) -> StoreResult<Vec<i64>> {
        let s = Stmt::new("SELECT id, labels FROM ax_task ORDER BY id");
        let rows = self.tx.fetch(s, "ax_task", |r| Ok((r.take::<i64>()?, r.take::<String>()?))).await?;
        let mut out = Vec::new();
        for (id, labels) in rows {
            if decode_labels("ax_task", &labels)?.get(name).is_some_and(|v| v == value) {
                out.push(id);
            }
        }
        Ok(out)
    }
}
