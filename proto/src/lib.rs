//! The `ax.v1` wire contract: Rust types and tonic clients/servers generated from `proto/ax/v1`.
//!
//! The `.proto` files are the public API; this crate only makes them usable from Rust and exposes
//! the encoded file descriptor set so that axd can serve gRPC reflection. [`otlp`] is the
//! OpenTelemetry trace export that axd and the Rust SDK share (README "Tracing"); [`duration`] is
//! the duration syntax that axd and axctl share (README "Durations").

#![allow(missing_docs, clippy::all)]

/// Package `ax.v1`.
pub mod v1 {
    // Generated from proto/ax/v1 and committed; tests/generated.rs keeps it current.
    include!("gen/ax.v1.rs");
}

/// The encoded `FileDescriptorSet` of every ax.v1 file and its imports, for gRPC reflection.
pub const FILE_DESCRIPTOR_SET: &[u8] = include_bytes!("gen/ax_v1_descriptor.bin");

pub mod codec;
pub mod duration;
pub mod otlp;

/// Every `TaskSpec` field an `UpdateTaskRequest.update_mask` may name (the proto's documented list):
/// axd refuses any other path, and a client that replaces a whole task names all of them.
pub const TASK_SPEC_UPDATABLE_FIELDS: &[&str] = &[
    "app",
    "handler",
    "description",
    "schedule",
    "params",
    "enabled",
    "misfire_policy",
    "misfire_threshold",
    "max_catch_up",
    "concurrency_policy",
    "routing",
    "timeout",
    "retry_policy",
    "labels",
    "selector",
    "retry_on",
    "shards",
    "hash_key",
    "priority",
    "max_running",
    "max_pending",
    "cooldown_after",
    "cooldown",
    "start_time",
    "end_time",
    "exclude_dates",
    "calendar",
    "jitter",
    "on_success",
    "on_failure",
    "after_all",
    "concurrency_key",
    "concurrency_limit",
    "unique_key",
    "unique_for",
    "must_finish_within",
    "on_event",
    "event_filter",
    "search_params",
    "extra_schedules",
];
