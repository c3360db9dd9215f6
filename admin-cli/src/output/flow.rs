//! Chains, DAG runs, calendars and backfills as axctl shows them: the instances an instance's end
//! created and those that created it (`instance get`), a workflow run as a tree (`run get`), named
//! calendars (`calendar ...`) and the fires of a backfill (`task backfill`).

use std::collections::{BTreeMap, BTreeSet};

use ax_proto::v1::{BackfilledFire, Calendar, GetRunResponse, InstanceLink, LinkKind};
use serde::Serialize;

use super::{
    instances::InstanceView,
    layout::{Fields, Table, indent},
    scalars::{enum_name, or_dash},
    terminal::escape_controls,
    time::time_text,
};

impl super::scalars::ProtoEnum for LinkKind {
    const PREFIX: &'static str = "LINK_KIND_";
    fn full_name(&self) -> &'static str {
        self.as_str_name()
    }
}

/// JSON view of an InstanceLink: the linked instance and the edge (`ON_SUCCESS`, `ON_FAILURE`,
/// `AFTER_ALL`).
#[derive(Debug, Serialize)]
pub struct LinkView {
    pub kind: String,
    pub instance: InstanceView,
}

impl From<&InstanceLink> for LinkView {
    fn from(l: &InstanceLink) -> Self {
        LinkView {
            kind: enum_name::<LinkKind>(l.kind),
            instance: InstanceView::from(&l.instance.clone().unwrap_or_default()),
        }
    }
}

/// The edge for people: the flag that made it.
fn kind_text(kind: &str) -> String {
    match kind {
        "ON_SUCCESS" => "on-success",
        "ON_FAILURE" => "on-failure",
        "AFTER_ALL" => "after-all",
        other => other,
    }
    .to_owned()
}

fn links_table(links: &[LinkView]) -> Table<5> {
    let mut table = Table::new(["ID", "TASK", "STATUS", "LINK", "RUN"]);
    for l in links {
        table.row([
            l.instance.id.to_string(),
            l.instance.task_name.clone(),
            l.instance.status.clone(),
            kind_text(&l.kind),
            l.instance.run_id.to_string(),
        ]);
    }
    table
}

/// The chain and DAG links of an instance under `instance get`: what created it, what it created.
/// Empty when it has none.
pub fn links_report(upstream: &[LinkView], downstream: &[LinkView]) -> String {
    let mut text = String::new();
    if !upstream.is_empty() {
        text.push_str("created by (upstream):\n");
        text.push_str(&indent(&links_table(upstream).render()));
    }
    if !downstream.is_empty() {
        text.push_str("created (downstream):\n");
        text.push_str(&indent(&links_table(downstream).render()));
    }
    text
}

/// JSON view of a RunEdge.
#[derive(Debug, Serialize, PartialEq)]
pub struct RunEdgeView {
    pub from_instance_id: i64,
    pub to_instance_id: i64,
    pub kind: String,
}

/// JSON view of a GetRunResponse.
#[derive(Debug, Serialize)]
pub struct RunView {
    pub run_id: i64,
    pub instances: Vec<InstanceView>,
    pub edges: Vec<RunEdgeView>,
}

impl From<&GetRunResponse> for RunView {
    fn from(r: &GetRunResponse) -> Self {
        RunView {
            run_id: r.run_id,
            instances: r.instances.iter().map(InstanceView::from).collect(),
            edges: r
                .edges
                .iter()
                .map(|e| RunEdgeView {
                    from_instance_id: e.from_instance_id,
                    to_instance_id: e.to_instance_id,
                    kind: enum_name::<LinkKind>(e.kind),
                })
                .collect(),
        }
    }
}

/// A run as a tree from its first instance: each instance under the one whose end created it, with
/// its task, status and the edge; an instance with several upstreams (a DAG join) sits under the
/// last of them and names the others.
pub fn run_tree(run: &RunView) -> String {
    let by_id: BTreeMap<i64, &InstanceView> = run.instances.iter().map(|i| (i.id, i)).collect();
    let mut under: BTreeMap<i64, Vec<(i64, &str)>> = BTreeMap::new();
    let mut also: BTreeMap<i64, Vec<i64>> = BTreeMap::new();
    let mut placed = BTreeSet::new();
    for i in &run.instances {
        let ups: Vec<&RunEdgeView> = run.edges.iter().filter(|e| e.to_instance_id == i.id).collect();
        // Under the instance whose end created it (chained_from), else the first upstream shown.
        let parent = ups
            .iter()
            .find(|e| e.from_instance_id == i.chained_from)
            .or(ups.first())
            .filter(|e| by_id.contains_key(&e.from_instance_id));
        if let Some(e) = parent {
            under.entry(e.from_instance_id).or_default().push((i.id, e.kind.as_str()));
            placed.insert(i.id);
            let others: Vec<i64> =
                ups.iter().map(|u| u.from_instance_id).filter(|f| *f != e.from_instance_id).collect();
            if !others.is_empty() {
                also.insert(i.id, others);
            }
        }
    }
    let mut text = format!("run {}: {} instance(s)\n", run.run_id, run.instances.len());
    fn line(i: &InstanceView, kind: Option<&str>, also: Option<&Vec<i64>>) -> String {
        let edge = kind.map(|k| format!(" [{}]", kind_text(k))).unwrap_or_default();
        let others = also
            .map(|o| format!(" (also after {})", o.iter().map(i64::to_string).collect::<Vec<_>>().join(", ")))
            .unwrap_or_default();
        let msg = if i.message.is_empty() { String::new() } else { format!(": {}", i.message) };
        // The task name, status and message are server text: the whole line is escaped.
        escape_controls(&format!("{} {} {}{edge}{others}{msg}", i.id, i.task_name, i.status)).into_owned()
    }
    fn walk(
        id: i64,
        prefix: &str,
        by_id: &BTreeMap<i64, &InstanceView>,
        under: &BTreeMap<i64, Vec<(i64, &str)>>,
        also: &BTreeMap<i64, Vec<i64>>,
        out: &mut String,
    ) {
        let kids = under.get(&id).map(Vec::as_slice).unwrap_or_default();
        for (n, (kid, kind)) in kids.iter().enumerate() {
            let last = n + 1 == kids.len();
            let Some(i) = by_id.get(kid) else { continue };
            out.push_str(&format!(
                "{prefix}{}{}\n",
                if last { "└─ " } else { "├─ " },
                line(i, Some(kind), also.get(kid))
            ));
            let deeper = format!("{prefix}{}", if last { "   " } else { "│  " });
            walk(*kid, &deeper, by_id, under, also, out);
        }
    }
    for root in run.instances.iter().filter(|i| !placed.contains(&i.id)) {
        text.push_str(&line(root, None, None));
        text.push('\n');
        walk(root.id, "", &by_id, &under, &also, &mut text);
    }
    text
}

/// JSON view of a Calendar.
#[derive(Debug, Serialize)]
pub struct CalendarView {
    pub name: String,
    pub description: String,
    pub dates: Vec<String>,
    pub created_by: String,
    pub create_time: Option<String>,
    pub updated_by: String,
    pub update_time: Option<String>,
}

impl From<&Calendar> for CalendarView {
    fn from(c: &Calendar) -> Self {
        CalendarView {
            name: c.name.clone(),
            description: c.description.clone(),
            dates: c.dates.clone(),
            created_by: c.created_by.clone(),
            create_time: time_text(c.create_time.as_ref()),
            updated_by: c.updated_by.clone(),
            update_time: time_text(c.update_time.as_ref()),
        }
    }
}

/// The fields of a calendar, and the tasks that use it (`calendar get`; `None`: not asked).
pub fn calendar_details(c: &CalendarView, tasks: Option<&[String]>) -> String {
    let mut fields = Fields::new();
    fields
        .add("name", &c.name)
        .add("description", or_dash(Some(c.description.as_str())))
        .add("dates", format!("{} ({})", c.dates.len(), or_dash(Some(c.dates.join(", ")))))
        .add("created", format!("{} by {}", or_dash(c.create_time.clone()), or_dash(Some(c.created_by.as_str()))))
        .add("updated", format!("{} by {}", or_dash(c.update_time.clone()), or_dash(Some(c.updated_by.as_str()))));
    if let Some(tasks) = tasks {
        fields.add("used by", if tasks.is_empty() { "no task".to_owned() } else { tasks.join(", ") });
    }
    fields.render()
}

/// The table of `calendar list`: the first and last dates, and how many.
pub fn calendar_table(calendars: &[CalendarView]) -> Table<5> {
    let mut table = Table::new(["NAME", "DATES", "FIRST", "LAST", "DESCRIPTION"]);
    for c in calendars {
        table.row([
            c.name.clone(),
            c.dates.len().to_string(),
            or_dash(c.dates.first().cloned()),
            or_dash(c.dates.last().cloned()),
            c.description.clone(),
        ]);
    }
    table
}

/// JSON view of a BackfilledFire; `instance_id` null when a dry run found none.
#[derive(Debug, Serialize, PartialEq)]
pub struct BackfilledFireView {
    pub time: Option<String>,
    pub instance_id: Option<i64>,
    pub created: bool,
}

impl From<&BackfilledFire> for BackfilledFireView {
    fn from(f: &BackfilledFire) -> Self {
        BackfilledFireView {
            time: time_text(f.time.as_ref()),
            instance_id: (f.instance_id != 0).then_some(f.instance_id),
            created: f.created,
        }
    }
}

/// What `task backfill` prints: a headline and one row per fire.
pub fn backfill_report(task: &str, dry_run: bool, fires: &[BackfilledFireView]) -> String {
    let created = fires.iter().filter(|f| f.created).count();
    let headline = match (dry_run, fires.len()) {
        (_, 0) => format!("no fire of task {} in the range", escape_controls(task)),
        (true, n) => format!(
            "dry run: would create {created} of {n} fire(s) of task {} ({} have an instance); nothing was created",
            escape_controls(task),
            n - created
        ),
        (false, n) => format!(
            "created {created} of {n} fire(s) of task {} ({} had an instance already)",
            escape_controls(task),
            n - created
        ),
    };
    if fires.is_empty() {
        return format!("{headline}\n");
    }
    let mut table = Table::new(["FIRE TIME", "INSTANCE", ""]);
    for f in fires {
        let what = match (f.created, dry_run) {
            (true, true) => "would create",
            (true, false) => "created",
            (false, _) => "existed",
        };
        table.row([
            or_dash(f.time.clone()),
            f.instance_id.map_or_else(|| "-".to_owned(), |i| i.to_string()),
            what.into(),
        ]);
    }
    format!("{headline}\n{}", table.render())
}

#[cfg(test)]
pub(super) mod tests {
    use ax_proto::v1::{Instance, InstanceStatus, RunEdge};

    use super::*;

    fn instance(id: i64, task: &str, status: InstanceStatus, chained_from: i64) -> Instance {
        Instance { id, task_name: task.into(), status: status as i32, run_id: 1, chained_from, ..Instance::default() }
    }

    /// A run with every kind of edge: 1 extract fans out to 2 load and 3 audit, which join into 4
    /// report; 2's failure chain is not in it.
    pub(in crate::output) fn run() -> GetRunResponse {
        let edge = |from, to, kind: LinkKind| RunEdge { from_instance_id: from, to_instance_id: to, kind: kind as i32 };
        GetRunResponse {
            run_id: 1,
            instances: vec![
                instance(1, "extract", InstanceStatus::Success, 0),
                instance(2, "load", InstanceStatus::Success, 1),
                instance(3, "audit", InstanceStatus::Success, 1),
                instance(4, "report", InstanceStatus::Running, 3),
            ],
            edges: vec![
                edge(1, 2, LinkKind::OnSuccess),
                edge(1, 3, LinkKind::AfterAll),
                edge(2, 4, LinkKind::AfterAll),
                edge(3, 4, LinkKind::AfterAll),
            ],
        }
    }

    /// A calendar with every field set; shared with the terminal safety tests.
    pub(in crate::output) fn holidays() -> Calendar {
        Calendar {
            name: "holidays".into(),
            description: "public holidays".into(),
            dates: vec!["2026-12-25".into(), "2027-01-01".into()],
            created_by: "spiffe://ax/admin/alice".into(),
            create_time: Some(prost_types::Timestamp { seconds: 1_767_225_600, nanos: 0 }),
            updated_by: "spiffe://ax/admin/bob".into(),
            update_time: Some(prost_types::Timestamp { seconds: 1_767_229_200, nanos: 0 }),
        }
    }

    #[test]
    fn a_run_reads_as_a_tree_with_its_joins() {
        assert_eq!(
            run_tree(&RunView::from(&run())),
            [
                "run 1: 4 instance(s)",
                "1 extract SUCCESS",
                "├─ 2 load SUCCESS [on-success]",
                "└─ 3 audit SUCCESS [after-all]",
                "   └─ 4 report RUNNING [after-all] (also after 2)",
                "",
            ]
            .join("\n")
        );
        let json = serde_json::to_value(RunView::from(&run())).expect("json");
        assert_eq!(
            json["edges"][0],
            serde_json::json!({"from_instance_id": 1, "to_instance_id": 2, "kind": "ON_SUCCESS"})
        );
        assert_eq!(json["instances"].as_array().map(Vec::len), Some(4));
    }

    #[test]
    fn links_show_both_directions() {
        let link = |id, kind: LinkKind| InstanceLink {
            instance: Some(instance(id, "next", InstanceStatus::Pending, 9)),
            kind: kind as i32,
        };
        let down = [LinkView::from(&link(10, LinkKind::OnFailure))];
        let up = [LinkView::from(&link(8, LinkKind::OnSuccess))];
        let text = links_report(&up, &down);
        assert!(
            text.starts_with(
                "created by (upstream):\n  ID  TASK  STATUS   LINK        RUN\n  8   next  PENDING  on-success  1\n"
            ),
            "{text}"
        );
        assert!(
            text.contains(
                "created (downstream):\n  ID  TASK  STATUS   LINK        RUN\n  10  next  PENDING  on-failure  1\n"
            ),
            "{text}"
        );
        assert_eq!(links_report(&[], &[]), "");
        assert_eq!(serde_json::to_value(&down[0]).expect("json")["kind"], "ON_FAILURE");
    }

    #[test]
    fn calendars_and_backfills_read_plainly() {
        let c = CalendarView::from(&holidays());
        let text = calendar_details(&c, Some(&["report".to_owned()]));
        assert!(text.contains("dates:        2 (2026-12-25, 2027-01-01)\n"), "{text}");
        assert!(text.ends_with("used by:      report\n"), "{text}");
        assert_eq!(
            calendar_table(&[c]).render(),
            "NAME      DATES  FIRST       LAST        DESCRIPTION\nholidays  2      2026-12-25  2027-01-01  public holidays\n"
        );
        let fire = |s, id, created| {
            BackfilledFireView::from(&BackfilledFire {
                time: Some(prost_types::Timestamp { seconds: s, nanos: 0 }),
                instance_id: id,
                created,
            })
        };
        let fires = [fire(1_767_225_600, 0, true), fire(1_767_229_200, 5, false)];
        assert_eq!(fires[0].instance_id, None);
        assert_eq!(
            backfill_report("nightly", true, &fires),
            "dry run: would create 1 of 2 fire(s) of task nightly (1 have an instance); nothing was created\n\
             FIRE TIME             INSTANCE\n\
             2026-01-01T00:00:00Z  -         would create\n\
             2026-01-01T01:00:00Z  5         existed\n"
        );
        assert_eq!(backfill_report("t", false, &[]), "no fire of task t in the range\n");
    }
}
