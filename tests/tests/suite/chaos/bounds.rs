//! Checks 8–10 of the chaos test (see the module's documentation): every fault kind hit running
//! work; the handlers running when the database froze past the lease stopped by the lease's end;
//! a handler fenced while its worker was frozen past the lease ended soon after it resumed.

use std::collections::BTreeMap;

use ax_tests::procs::Execution;
use chrono::{DateTime, TimeDelta, Utc};

use super::{Fault, LEASE, Span};

/// How much later than the bound a handler may end: the SDK's grace for a fenced handler to
/// return, the worker's clock estimate, and a loaded machine's scheduling.
const SLACK: TimeDelta = TimeDelta::milliseconds(2000);

/// A fault as it began: its kind, when, and the workers whose running work it could hit (`None`:
/// every worker, as for the database's faults).
#[derive(Debug, Clone)]
pub(super) struct Hit {
    pub fault: Fault,
    pub at: DateTime<Utc>,
    pub workers: Option<Vec<String>>,
}

/// When a run ended: its logged end, or the kill of its worker after its start (a run with
/// neither never ended).
fn end_of(r: &Execution, kills: &BTreeMap<String, Vec<DateTime<Utc>>>) -> Option<DateTime<Utc>> {
    r.end.or_else(|| kills.get(&r.worker).and_then(|k| k.iter().find(|t| **t >= r.start).copied()))
}

fn running_at(r: &Execution, at: DateTime<Utc>, kills: &BTreeMap<String, Vec<DateTime<Utc>>>) -> bool {
    r.start <= at && end_of(r, kills).is_none_or(|e| e > at)
}

/// Check 8: every fault kind that happened hit running work at least once — a handler was running
/// on a worker it could reach when it began — else the run proved nothing about it. Returns, per
/// kind, (occurrences that hit running work, occurrences).
pub(super) fn every_fault_hit_running_work(
    hits: &[Hit],
    runs: &[Execution],
    kills: &BTreeMap<String, Vec<DateTime<Utc>>>,
) -> BTreeMap<String, (usize, usize)> {
    let mut tally: BTreeMap<String, (usize, usize)> = BTreeMap::new();
    for h in hits {
        let hit = runs
            .iter()
            .any(|r| h.workers.as_ref().is_none_or(|ws| ws.contains(&r.worker)) && running_at(r, h.at, kills));
        let t = tally.entry(format!("{:?}", h.fault)).or_default();
        t.0 += usize::from(hit);
        t.1 += 1;
    }
    for (kind, (hit, all)) in &tally {
        assert!(*hit > 0, "fault {kind} hit no running work in any of its {all} occurrence(s): {hits:?}");
    }
    tally
}

/// Check 9: a database freeze longer than the lease stops the handlers running when it began (no
/// axd can renew their leases, and each worker fences its attempts at the lease's end: README
/// "Failure modes"), by the freeze's start + the lease + [`SLACK`]. A worker frozen or killed
/// meanwhile is left to checks 3 and 10. Returns how many runs it held to the bound.
pub(super) fn a_database_freeze_past_the_lease_stops_running_handlers(
    freezes: &[Span],
    runs: &[Execution],
    kills: &BTreeMap<String, Vec<DateTime<Utc>>>,
    worker_freezes: &BTreeMap<String, Vec<Span>>,
) -> usize {
    let lease = TimeDelta::from_std(LEASE).expect("lease");
    let mut held = 0;
    for (from, to) in freezes.iter().filter(|(a, b)| *b - *a > lease + TimeDelta::milliseconds(500)) {
        let bound = *from + lease + SLACK;
        for r in runs.iter().filter(|r| r.start < *from && running_at(r, *from, kills)) {
            let stopped_otherwise =
                worker_freezes.get(&r.worker).into_iter().flatten().any(|(s, c)| *s < bound && *c > *from)
                    || kills.get(&r.worker).into_iter().flatten().any(|k| *k > *from && *k < bound);
            if stopped_otherwise {
                continue;
            }
            let end = end_of(r, kills);
            assert!(
                end.is_some_and(|e| e <= bound),
                "a handler kept running through a database freeze past the lease ({from} .. {to}): it should have \
                 ended by {bound}: {r:?}"
            );
            held += 1;
        }
    }
    held
}

/// Check 10: a worker frozen past the lease finds on resuming that its attempts' leases ran out;
/// it fences them, and their handlers end within [`SLACK`] of the resume — a fenced handler that
/// kept working fails the run. Returns how many runs it held to the bound.
pub(super) fn fenced_handlers_end_soon_after_their_worker_resumes(
    worker_freezes: &BTreeMap<String, Vec<Span>>,
    runs: &[Execution],
    kills: &BTreeMap<String, Vec<DateTime<Utc>>>,
) -> usize {
    let lease = TimeDelta::from_std(LEASE).expect("lease");
    let mut held = 0;
    for (worker, spans) in worker_freezes {
        for (stop, cont) in spans.iter().filter(|(s, c)| *c - *s > lease + TimeDelta::milliseconds(500)) {
            let bound = *cont + SLACK;
            for r in runs.iter().filter(|r| &r.worker == worker && r.start < *stop && running_at(r, *stop, kills)) {
                if kills.get(worker).into_iter().flatten().any(|k| *k > *stop && *k < bound) {
                    continue;
                }
                let end = end_of(r, kills);
                // Ended after the resume: fenced. (One that ended as the signal landed logged its
                // end before the resume, unfenced.)
                assert!(
                    end.is_some_and(|e| e <= bound && (r.fenced || e < *cont)),
                    "worker {worker} was frozen past the lease ({stop} .. {cont}): its handler should have been \
                     fenced and ended by {bound}: {r:?}"
                );
                held += 1;
            }
        }
    }
    held
}

#[cfg(test)]
mod tests {
    use std::panic::catch_unwind;

    use super::*;

    fn t(s: i64) -> DateTime<Utc> {
        DateTime::from_timestamp(1_800_000_000 + s, 0).expect("time")
    }

    fn run(worker: &str, start: i64, end: Option<i64>, fenced: bool) -> Execution {
        Execution {
            instance: 1,
            attempt: 1,
            worker: worker.into(),
            handler: "sleep".into(),
            task: "cron-long".into(),
            trigger_time: t(start),
            start: t(start),
            end: end.map(t),
            outcome: end.map(|_| "FAILED".into()),
            fenced,
        }
    }

    #[test]
    fn a_handler_running_through_a_database_freeze_past_the_lease_fails_check_9() {
        let freeze = [(t(10), t(17))];
        let none: BTreeMap<String, Vec<DateTime<Utc>>> = BTreeMap::new();
        let unfrozen: BTreeMap<String, Vec<Span>> = BTreeMap::new();
        let check = |r: Execution, frozen: &BTreeMap<String, Vec<Span>>| {
            a_database_freeze_past_the_lease_stops_running_handlers(&freeze, &[r], &none, frozen)
        };
        assert_eq!(check(run("w0", 8, Some(16), true), &unfrozen), 1, "stopped by the lease's end + slack");
        let frozen = BTreeMap::from([("w0".to_owned(), vec![(t(11), t(20))])]);
        assert_eq!(check(run("w0", 8, Some(21), false), &frozen), 0, "a frozen worker is check 10's");
        assert!(catch_unwind(|| check(run("w0", 8, Some(17), false), &unfrozen)).is_err(), "still working at 17");
        assert!(catch_unwind(|| check(run("w0", 8, None, false), &unfrozen)).is_err(), "never ended");
        let short = [(t(10), t(14))];
        let r = [run("w0", 8, Some(30), false)];
        assert_eq!(
            a_database_freeze_past_the_lease_stops_running_handlers(&short, &r, &none, &unfrozen),
            0,
            "a freeze within the lease stops nothing"
        );
    }

    #[test]
    fn a_fenced_handler_that_keeps_working_after_its_worker_resumes_fails_check_10() {
        let none: BTreeMap<String, Vec<DateTime<Utc>>> = BTreeMap::new();
        let frozen = BTreeMap::from([("w1".to_owned(), vec![(t(10), t(20))])]);
        let check = |r: Execution| fenced_handlers_end_soon_after_their_worker_resumes(&frozen, &[r], &none);
        assert_eq!(check(run("w1", 8, Some(21), true)), 1, "fenced, ended a second after the resume");
        assert_eq!(check(run("w0", 8, Some(40), false)), 0, "another worker's run");
        assert!(catch_unwind(|| check(run("w1", 8, Some(25), true))).is_err(), "kept working 5 s after the resume");
        assert!(catch_unwind(|| check(run("w1", 8, Some(21), false))).is_err(), "ended after the resume, not fenced");
        let killed = BTreeMap::from([("w1".to_owned(), vec![t(21)])]);
        assert_eq!(
            fenced_handlers_end_soon_after_their_worker_resumes(&frozen, &[run("w1", 8, None, false)], &killed),
            0
        );
    }

    #[test]
    fn a_fault_kind_that_hit_no_running_work_fails_check_8() {
        let none: BTreeMap<String, Vec<DateTime<Utc>>> = BTreeMap::new();
        let runs = [run("w0", 8, Some(12), false)];
        let hit = |fault, at, workers: Option<Vec<String>>| Hit { fault, at: t(at), workers };
        let hits = [
            hit(Fault::KillWorker, 9, Some(vec!["w0".into()])),
            hit(Fault::KillWorker, 20, Some(vec!["w0".into()])),
            hit(Fault::FreezeDb, 10, None),
        ];
        let tally = every_fault_hit_running_work(&hits, &runs, &none);
        assert_eq!(tally["KillWorker"], (1, 2));
        let missed = [hit(Fault::KillAxd, 10, Some(vec!["w1".into()]))];
        assert!(catch_unwind(|| every_fault_hit_running_work(&missed, &runs, &none)).is_err(), "w1 ran nothing");
        let after = [hit(Fault::CutDb, 13, None)];
        assert!(catch_unwind(|| every_fault_hit_running_work(&after, &runs, &none)).is_err(), "nothing ran at 13");
    }
}
