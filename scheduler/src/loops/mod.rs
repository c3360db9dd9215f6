//! The loops every axd runs, one file each: the trigger (schedules to instances), dispatch
//! (instances to worker streams), the sweeper (leases, deadlines, retention) and alerts (condition
//! rules and outbox deliveries).

pub mod alerts;
pub mod create;
pub mod dispatch;
pub mod sweeper;
pub mod trigger;
