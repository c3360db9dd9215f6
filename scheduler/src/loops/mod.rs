//! The loops every axd runs, one file each: the trigger (schedules to instances), dispatch
//! (instances to worker streams) and the sweeper (leases, deadlines, retention).

pub mod dispatch;
pub mod sweeper;
pub mod trigger;
