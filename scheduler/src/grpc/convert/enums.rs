//! The enums of the wire and their domain counterparts.

use super::*;

/// A proto status filter: `None` for UNSPECIFIED.
pub fn status_from_pb(field: &str, v: i32) -> Result<Option<InstanceStatus>> {
    use pb::InstanceStatus as P;
    Ok(Some(match P::try_from(v).map_err(|_| Error::invalid(field, format!("unknown status {v}")))? {
        P::Unspecified => return Ok(None),
        P::Pending => InstanceStatus::Pending,
        P::Dispatched => InstanceStatus::Dispatched,
        P::Running => InstanceStatus::Running,
        P::Success => InstanceStatus::Success,
        P::Failed => InstanceStatus::Failed,
        P::Timeout => InstanceStatus::Timeout,
        P::Canceled => InstanceStatus::Canceled,
        P::Skipped => InstanceStatus::Skipped,
        P::Waiting => InstanceStatus::Waiting,
    }))
}

/// A domain status as its proto value.
pub fn status_to_pb(s: InstanceStatus) -> pb::InstanceStatus {
    match s {
        InstanceStatus::Pending => pb::InstanceStatus::Pending,
        InstanceStatus::Dispatched => pb::InstanceStatus::Dispatched,
        InstanceStatus::Running => pb::InstanceStatus::Running,
        InstanceStatus::Success => pb::InstanceStatus::Success,
        InstanceStatus::Failed => pb::InstanceStatus::Failed,
        InstanceStatus::Timeout => pb::InstanceStatus::Timeout,
        InstanceStatus::Canceled => pb::InstanceStatus::Canceled,
        InstanceStatus::Skipped => pb::InstanceStatus::Skipped,
        InstanceStatus::Waiting => pb::InstanceStatus::Waiting,
    }
}

pub(super) fn misfire_from_pb(field: &str, v: i32) -> Result<MisfirePolicy> {
    use pb::MisfirePolicy as P;
    Ok(match P::try_from(v).map_err(|_| Error::invalid(field, format!("unknown misfire policy {v}")))? {
        P::Unspecified | P::FireOnce => MisfirePolicy::FireOnce,
        P::FireAll => MisfirePolicy::FireAll,
        P::Skip => MisfirePolicy::Skip,
    })
}

pub(super) fn misfire_to_pb(m: MisfirePolicy) -> pb::MisfirePolicy {
    match m {
        MisfirePolicy::FireOnce => pb::MisfirePolicy::FireOnce,
        MisfirePolicy::FireAll => pb::MisfirePolicy::FireAll,
        MisfirePolicy::Skip => pb::MisfirePolicy::Skip,
    }
}

pub(super) fn concurrency_from_pb(field: &str, v: i32) -> Result<ConcurrencyPolicy> {
    use pb::ConcurrencyPolicy as P;
    Ok(match P::try_from(v).map_err(|_| Error::invalid(field, format!("unknown concurrency policy {v}")))? {
        P::Unspecified | P::Allow => ConcurrencyPolicy::Allow,
        P::Forbid => ConcurrencyPolicy::Forbid,
        P::BufferOne => ConcurrencyPolicy::BufferOne,
        P::BufferAll => ConcurrencyPolicy::BufferAll,
        P::CancelOther => ConcurrencyPolicy::CancelOther,
    })
}

pub(super) fn concurrency_to_pb(c: ConcurrencyPolicy) -> pb::ConcurrencyPolicy {
    match c {
        ConcurrencyPolicy::Allow => pb::ConcurrencyPolicy::Allow,
        ConcurrencyPolicy::Forbid => pb::ConcurrencyPolicy::Forbid,
        ConcurrencyPolicy::BufferOne => pb::ConcurrencyPolicy::BufferOne,
        ConcurrencyPolicy::BufferAll => pb::ConcurrencyPolicy::BufferAll,
        ConcurrencyPolicy::CancelOther => pb::ConcurrencyPolicy::CancelOther,
    }
}

pub(super) fn routing_from_pb(field: &str, v: i32) -> Result<Routing> {
    use pb::RoutingStrategy as P;
    Ok(match P::try_from(v).map_err(|_| Error::invalid(field, format!("unknown routing strategy {v}")))? {
        P::Unspecified | P::LeastLoaded => Routing::LeastLoaded,
        P::RoundRobin => Routing::RoundRobin,
        P::Random => Routing::Random,
        P::Broadcast => Routing::Broadcast,
        P::Hash => Routing::Hash,
    })
}

pub(super) fn routing_to_pb(r: Routing) -> pb::RoutingStrategy {
    match r {
        Routing::LeastLoaded => pb::RoutingStrategy::LeastLoaded,
        Routing::RoundRobin => pb::RoutingStrategy::RoundRobin,
        Routing::Random => pb::RoutingStrategy::Random,
        Routing::Broadcast => pb::RoutingStrategy::Broadcast,
        Routing::Hash => pb::RoutingStrategy::Hash,
    }
}

pub(super) fn retry_on_from_pb(field: &str, v: i32) -> Result<RetryOn> {
    use pb::RetryTarget as P;
    Ok(match P::try_from(v).map_err(|_| Error::invalid(field, format!("unknown retry target {v}")))? {
        P::Unspecified | P::Other => RetryOn::Other,
        P::Same => RetryOn::Same,
        P::Any => RetryOn::Any,
    })
}

pub(super) fn retry_on_to_pb(r: RetryOn) -> pb::RetryTarget {
    match r {
        RetryOn::Other => pb::RetryTarget::Other,
        RetryOn::Same => pb::RetryTarget::Same,
        RetryOn::Any => pb::RetryTarget::Any,
    }
}

pub(super) fn dialect_from_pb(field: &str, v: i32) -> Result<Option<CronDialect>> {
    use pb::CronDialect as P;
    Ok(match P::try_from(v).map_err(|_| Error::invalid(field, format!("unknown dialect {v}")))? {
        P::Unspecified => None,
        P::Unix => Some(CronDialect::Unix),
        P::Quartz => Some(CronDialect::Quartz),
    })
}

pub(super) fn dialect_to_pb(d: CronDialect) -> pb::CronDialect {
    match d {
        CronDialect::Unix => pb::CronDialect::Unix,
        CronDialect::Quartz => pb::CronDialect::Quartz,
    }
}

pub(super) fn source_to_pb(s: InstanceSource) -> pb::InstanceSource {
    match s {
        InstanceSource::Schedule => pb::InstanceSource::Schedule,
        InstanceSource::CatchUp => pb::InstanceSource::CatchUp,
        InstanceSource::Manual => pb::InstanceSource::Manual,
        InstanceSource::Backfill => pb::InstanceSource::Backfill,
        InstanceSource::Chain => pb::InstanceSource::Chain,
        InstanceSource::Dag => pb::InstanceSource::Dag,
        InstanceSource::Intake => pb::InstanceSource::Intake,
    }
}

/// The proto form of an edge kind.
pub fn link_kind_to_pb(k: crate::model::EdgeKind) -> pb::LinkKind {
    match k {
        crate::model::EdgeKind::Success => pb::LinkKind::OnSuccess,
        crate::model::EdgeKind::Failure => pb::LinkKind::OnFailure,
        crate::model::EdgeKind::After => pb::LinkKind::AfterAll,
    }
}
