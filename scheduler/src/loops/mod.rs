//! The loops every axd runs, one file each: the trigger (schedules to instances, with its overlap
//! policies, pauses and the intake table), dispatch (instances to worker streams), the sweeper
//! (leases, deadlines, retention) and alerts (condition rules and outbox deliveries); and the other
//! ways instances are created (manual triggers, backfills: `instantiate`, `backfill`).

pub mod alerts;
pub mod backfill;
pub mod create;
pub mod dispatch;
pub mod instantiate;
pub mod intake;
pub mod overlap;
pub mod pause;
pub mod sweeper;
pub mod trigger;
