//! The loops every axd runs, one file each: the trigger (schedules to instances, with its overlap
//! policies, pauses and the intake table), dispatch (instances to worker streams), the sweeper
//! (leases, deadlines, retention) and alerts (condition rules and outbox deliveries); and backfills.
//! Every instance they create is born through [`crate::birth`].

pub mod alerts;
pub mod backfill;
pub mod dispatch;
pub mod intake;
pub mod overlap;
pub mod pause;
pub mod sweeper;
pub mod trigger;
