//! The schema migrations, embedded in the binary. Every backend has the same versions and names
//! (`migrations/{sqlite,postgres,mysql}/NNNN_name.sql`); a test checks the folders against this list.

/// Embeds the migrations of one backend folder as `(version, name, sql)`.
macro_rules! embed_migrations {
    ($dir:literal) => {
        [
            (
                1_i64,
                "init",
                include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/../migrations/", $dir, "/0001_init.sql")),
            ),
            (
                2_i64,
                "audit",
                include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/../migrations/", $dir, "/0002_audit.sql")),
            ),
            (
                3_i64,
                "alerts",
                include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/../migrations/", $dir, "/0003_alerts.sql")),
            ),
            (
                4_i64,
                "session_log",
                include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/../migrations/", $dir, "/0004_session_log.sql")),
            ),
            (
                5_i64,
                "traces",
                include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/../migrations/", $dir, "/0005_traces.sql")),
            ),
            (
                6_i64,
                "routing",
                include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/../migrations/", $dir, "/0006_routing.sql")),
            ),
            (
                7_i64,
                "schedules",
                include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/../migrations/", $dir, "/0007_schedules.sql")),
            ),
            (
                8_i64,
                "lean_indexes",
                include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/../migrations/", $dir, "/0008_lean_indexes.sql")),
            ),
            (
                9_i64,
                "fire_spans",
                include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/../migrations/", $dir, "/0009_fire_spans.sql")),
            ),
            (
                10_i64,
                "trail_in_row",
                include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/../migrations/", $dir, "/0010_trail_in_row.sql")),
            ),
            (
                11_i64,
                "no_session_index",
                include_str!(concat!(
                    env!("CARGO_MANIFEST_DIR"),
                    "/../migrations/",
                    $dir,
                    "/0011_no_session_index.sql"
                )),
            ),
            (
                12_i64,
                "intake_app",
                include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/../migrations/", $dir, "/0012_intake_app.sql")),
            ),
            (
                13_i64,
                "keys",
                include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/../migrations/", $dir, "/0013_keys.sql")),
            ),
            (
                14_i64,
                "deadlines",
                include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/../migrations/", $dir, "/0014_deadlines.sql")),
            ),
            (
                15_i64,
                "events",
                include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/../migrations/", $dir, "/0015_events.sql")),
            ),
            (
                16_i64,
                "tags",
                include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/../migrations/", $dir, "/0016_tags.sql")),
            ),
            (
                17_i64,
                "extra_schedules",
                include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/../migrations/", $dir, "/0017_extra_schedules.sql")),
            ),
            (
                18_i64,
                "default_backoff",
                include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/../migrations/", $dir, "/0018_default_backoff.sql")),
            ),
            (
                19_i64,
                "instance_fillfactor",
                include_str!(concat!(
                    env!("CARGO_MANIFEST_DIR"),
                    "/../migrations/",
                    $dir,
                    "/0019_instance_fillfactor.sql"
                )),
            ),
            (
                20_i64,
                "task_fillfactor",
                include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/../migrations/", $dir, "/0020_task_fillfactor.sql")),
            ),
            (
                21_i64,
                "deadline_index",
                include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/../migrations/", $dir, "/0021_deadline_index.sql")),
            ),
            (
                22_i64,
                "task_pending_index",
                include_str!(concat!(
                    env!("CARGO_MANIFEST_DIR"),
                    "/../migrations/",
                    $dir,
                    "/0022_task_pending_index.sql"
                )),
            ),
            (
                23_i64,
                "one_ready_index",
                include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/../migrations/", $dir, "/0023_one_ready_index.sql")),
            ),
            (
                24_i64,
                "ready_flag",
                include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/../migrations/", $dir, "/0024_ready_flag.sql")),
            ),
        ]
    };
}
pub(crate) use embed_migrations;

/// Builds a sqlx migrator recording applied versions in `_sqlx_migrations`. `locking`: whether
/// the migrator takes its own database lock (the backends that need a lock of their own say no).
pub(crate) fn migrator(list: &[(i64, &'static str, &'static str)], locking: bool) -> sqlx::migrate::Migrator {
    let migrations: Vec<sqlx::migrate::Migration> = list
        .iter()
        .map(|(version, name, sql)| {
            sqlx::migrate::Migration::new(
                *version,
                (*name).into(),
                sqlx::migrate::MigrationType::Simple,
                (*sql).into(),
                false,
            )
        })
        .collect();
    sqlx::migrate::Migrator { migrations: migrations.into(), ignore_missing: false, locking, no_tx: false }
}

#[cfg(test)]
mod tests {
    #[test]
    fn every_backend_has_the_same_migration_files() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../migrations");
        let list = |d: &str| {
            let mut v: Vec<String> = std::fs::read_dir(root.join(d))
                .expect("migrations folder")
                .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
                .collect();
            v.sort();
            v
        };
        let sqlite = list("sqlite");
        assert_eq!(sqlite, list("postgres"));
        assert_eq!(sqlite, list("mysql"));
        let embedded: Vec<String> =
            embed_migrations!("sqlite").iter().map(|(v, name, _)| format!("{v:04}_{name}.sql")).collect();
        assert_eq!(sqlite, embedded, "embed_migrations! must list every migration file");
    }
}
