//! Single values as axctl shows them: proto enums by their value names without the type prefix
//! (`PENDING`, `FIRE_ONCE`), embedded JSON (params, output) as JSON when it parses, labels in key
//! order, and `-` for an unset or empty field in text.

use std::collections::{BTreeMap, HashMap};

use ax_proto::v1::{
    ConcurrencyPolicy, CronDialect, ExplainFindingKind, InstanceSource, InstanceStatus, LogLevel, MisfirePolicy,
    RetryTarget, RoutingStrategy,
};
use serde_json::Value;

/// A proto enum whose value names all start with the same type prefix.
pub trait ProtoEnum: TryFrom<i32> {
    /// The prefix every value name starts with, e.g. `INSTANCE_STATUS_`.
    const PREFIX: &'static str;
    /// The full value name, e.g. `INSTANCE_STATUS_PENDING`.
    fn full_name(&self) -> &'static str;
}

macro_rules! proto_enum {
    ($($ty:ty => $prefix:literal),* $(,)?) => {
        $(impl ProtoEnum for $ty {
            const PREFIX: &'static str = $prefix;
            fn full_name(&self) -> &'static str {
                self.as_str_name()
            }
        })*
    };
}

proto_enum! {
    ExplainFindingKind => "EXPLAIN_FINDING_KIND_",
    InstanceStatus => "INSTANCE_STATUS_",
    InstanceSource => "INSTANCE_SOURCE_",
    MisfirePolicy => "MISFIRE_POLICY_",
    ConcurrencyPolicy => "CONCURRENCY_POLICY_",
    RoutingStrategy => "ROUTING_STRATEGY_",
    RetryTarget => "RETRY_TARGET_",
    CronDialect => "CRON_DIALECT_",
    LogLevel => "LOG_LEVEL_",
}

/// The value name without its prefix (`PENDING`); a number this axctl does not know (from a newer
/// server) is printed as its decimal value.
pub fn enum_name<E: ProtoEnum>(value: i32) -> String {
    match E::try_from(value) {
        Ok(known) => {
            let full = known.full_name();
            full.strip_prefix(E::PREFIX).unwrap_or(full).to_owned()
        }
        Err(_) => value.to_string(),
    }
}

/// A JSON text embedded as JSON when it parses, else kept as a string (so nothing is lost).
pub fn embedded_json(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or_else(|_| Value::String(text.to_owned()))
}

/// An embedded JSON value for people: JSON as it came, a string without quotes, `-` when empty.
pub fn json_text(value: &Value) -> String {
    match value {
        Value::String(s) => or_dash(Some(s.as_str())),
        other => other.to_string(),
    }
}

/// Labels sorted by key, so output is stable.
pub fn sorted(labels: &HashMap<String, String>) -> BTreeMap<String, String> {
    labels.iter().map(|(k, v)| (k.clone(), v.clone())).collect()
}

/// For text: the value, or `-` when unset or empty.
pub fn or_dash(value: Option<impl Into<String>>) -> String {
    value.map(Into::into).filter(|s: &String| !s.is_empty()).unwrap_or_else(|| "-".to_owned())
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn enum_names_lose_their_type_prefix() {
        assert_eq!(enum_name::<InstanceStatus>(InstanceStatus::Pending as i32), "PENDING");
        assert_eq!(enum_name::<InstanceStatus>(0), "UNSPECIFIED");
        assert_eq!(enum_name::<MisfirePolicy>(MisfirePolicy::FireOnce as i32), "FIRE_ONCE");
        assert_eq!(enum_name::<RoutingStrategy>(RoutingStrategy::LeastLoaded as i32), "LEAST_LOADED");
        assert_eq!(enum_name::<ConcurrencyPolicy>(ConcurrencyPolicy::Forbid as i32), "FORBID");
        assert_eq!(enum_name::<CronDialect>(CronDialect::Unix as i32), "UNIX");
        assert_eq!(enum_name::<InstanceSource>(InstanceSource::Schedule as i32), "SCHEDULE");
        assert_eq!(enum_name::<LogLevel>(LogLevel::Warn as i32), "WARN");
        assert_eq!(enum_name::<RoutingStrategy>(RoutingStrategy::Broadcast as i32), "BROADCAST");
        assert_eq!(enum_name::<RetryTarget>(RetryTarget::Same as i32), "SAME");
        assert_eq!(enum_name::<InstanceStatus>(InstanceStatus::Waiting as i32), "WAITING");
        assert_eq!(enum_name::<InstanceStatus>(99), "99", "unknown values stay visible");
    }

    #[test]
    fn every_enum_prefix_matches_the_generated_names() {
        fn check<E: ProtoEnum>() {
            let unspecified = E::try_from(0).ok().expect("every ax enum has a 0 value");
            assert_eq!(unspecified.full_name(), format!("{}UNSPECIFIED", E::PREFIX));
        }
        check::<InstanceStatus>();
        check::<InstanceSource>();
        check::<MisfirePolicy>();
        check::<ConcurrencyPolicy>();
        check::<RoutingStrategy>();
        check::<RetryTarget>();
        check::<CronDialect>();
        check::<LogLevel>();
        check::<ExplainFindingKind>();
    }

    #[test]
    fn params_are_embedded_as_json_when_they_parse() {
        assert_eq!(embedded_json(r#"{"a":1}"#), json!({"a": 1}));
        assert_eq!(embedded_json("[1,2]"), json!([1, 2]));
        assert_eq!(embedded_json("not json"), json!("not json"));
        assert_eq!(embedded_json(""), json!(""));
    }
}
