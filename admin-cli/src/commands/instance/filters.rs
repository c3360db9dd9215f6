//! The instance filters `instance list` and the bulk actions share.

use ax_proto::v1::InstanceStatus;
use clap::Args;

use crate::args::{parse_label, parse_param, parse_status, parse_timestamp};

/// Which instances: every filter given must hold.
#[derive(Args, Debug, Default)]
pub struct Filters {
    /// Only instances of this task.
    #[arg(long, value_name = "NAME")]
    pub task: Option<String>,
    /// Only instances in this status: PENDING, DISPATCHED, RUNNING, SUCCESS, FAILED, TIMEOUT,
    /// CANCELED, SKIPPED or WAITING (parents of broadcast or sharded fires), any case.
    #[arg(long, value_name = "S", value_parser = parse_status)]
    pub status: Option<InstanceStatus>,
    /// Only instances triggered at or after this instant (RFC 3339, e.g. 2026-03-08T07:30:00Z).
    #[arg(long, value_name = "RFC3339", value_parser = parse_timestamp)]
    pub since: Option<prost_types::Timestamp>,
    /// Only instances triggered before this instant (RFC 3339).
    #[arg(long, value_name = "RFC3339", value_parser = parse_timestamp)]
    pub until: Option<prost_types::Timestamp>,
    /// Only instances with this tag, or of a task with this label (repeatable: all must hold).
    #[arg(long = "tag", value_name = "KEY=VALUE", value_parser = parse_label)]
    pub tags: Vec<(String, String)>,
    /// Only instances whose params field holds this value, e.g. customer_id=42 (repeatable; the
    /// task must list the field in --search-params).
    #[arg(long = "param", value_name = "FIELD=VALUE", value_parser = parse_param)]
    pub params: Vec<(String, String)>,
}

impl Filters {
    /// Whether any filter is given.
    pub fn any(&self) -> bool {
        self.task.is_some()
            || self.status.is_some()
            || self.since.is_some()
            || self.until.is_some()
            || !self.tags.is_empty()
            || !self.params.is_empty()
    }

    /// The status filter as the wire has it (unspecified: any).
    pub fn status(&self) -> i32 {
        self.status.unwrap_or(InstanceStatus::Unspecified) as i32
    }

    /// The tags filter as the wire has it.
    pub fn tags(&self) -> std::collections::HashMap<String, String> {
        self.tags.iter().cloned().collect()
    }

    /// The params filter as the wire has it.
    pub fn params(&self) -> std::collections::HashMap<String, String> {
        self.params.iter().cloned().collect()
    }
}
