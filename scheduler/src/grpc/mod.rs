//! The gRPC side: the AdminService and the conversions between `ax.v1` messages and the domain.
//! (WorkerService.Connect lives with the worker sessions, in [`crate::worker::stream`].)

pub mod admin;
pub mod convert;
