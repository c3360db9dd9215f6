//! Retry policies and backoffs from and to the wire.

use super::*;

fn backoff_from_pb(field: &str, b: &pb::Backoff) -> Result<Backoff> {
    use pb::backoff::Kind;
    Ok(match &b.kind {
        None => Backoff::default(),
        Some(Kind::List(l)) => {
            let f = format!("{field}.list.delays");
            if l.delays.is_empty() || l.delays.len() > 32 {
                return Err(Error::invalid(&f, format!("has {} delays; 1 to 32 allowed", l.delays.len())));
            }
            let mut delays_us = Vec::with_capacity(l.delays.len());
            for (i, d) in l.delays.iter().enumerate() {
                let fi = format!("{f}[{i}]");
                let d = duration_from_pb(&fi, d)?;
                validate::duration_between(&fi, d, Duration::ZERO, DAY)?;
                delays_us.push(duration_micros(d));
            }
            Backoff::List { delays_us }
        }
        Some(Kind::Exponential(e)) => {
            let f = format!("{field}.exponential");
            let initial = match &e.initial {
                Some(d) => duration_from_pb(&format!("{f}.initial"), d)?,
                None => Duration::from_secs(10),
            };
            validate::duration_between(&format!("{f}.initial"), initial, Duration::ZERO, DAY)?;
            let max = match &e.max {
                Some(d) => duration_from_pb(&format!("{f}.max"), d)?,
                None => Duration::from_secs(300).max(initial),
            };
            validate::duration_between(&format!("{f}.max"), max, initial, DAY)?;
            let multiplier = if e.multiplier == 0.0 { 2.0 } else { e.multiplier };
            if !(1.0..=10.0).contains(&multiplier) {
                return Err(Error::invalid(
                    format!("{f}.multiplier"),
                    format!("{multiplier} is out of range 1.0..10.0"),
                ));
            }
            if !(0.0..=1.0).contains(&e.jitter) {
                return Err(Error::invalid(format!("{f}.jitter"), format!("{} is out of range 0.0..1.0", e.jitter)));
            }
            Backoff::Exponential {
                initial_us: duration_micros(initial),
                multiplier,
                max_us: duration_micros(max),
                jitter: e.jitter,
            }
        }
    })
}

pub(super) fn backoff_to_pb(b: &Backoff) -> pb::Backoff {
    use pb::backoff::Kind;
    pb::Backoff {
        kind: Some(match b {
            Backoff::List { delays_us } => {
                Kind::List(pb::ListBackoff { delays: delays_us.iter().map(|us| micros_to_pb(*us)).collect() })
            }
            Backoff::Exponential { initial_us, multiplier, max_us, jitter } => {
                Kind::Exponential(pb::ExponentialBackoff {
                    initial: Some(micros_to_pb(*initial_us)),
                    multiplier: *multiplier,
                    max: Some(micros_to_pb(*max_us)),
                    jitter: *jitter,
                })
            }
        }),
    }
}

pub(super) fn retry_from_pb(field: &str, r: &pb::RetryPolicy) -> Result<RetryPolicy> {
    if r.max_retries > 100 {
        return Err(Error::invalid(format!("{field}.max_retries"), format!("{} is out of range 0-100", r.max_retries)));
    }
    let backoff = match &r.backoff {
        Some(b) => backoff_from_pb(&format!("{field}.backoff"), b)?,
        None => Backoff::default(),
    };
    Ok(RetryPolicy { max_retries: r.max_retries, backoff })
}
