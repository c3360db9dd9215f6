//! Reading an executor's params, and the ways an attempt ends in failure.
//!
//! Params are read field by field, so that bad input is answered with the field and the reason
//! (`params.url: required`) as a non-retryable failure: running it again cannot help. Keys an
//! executor does not read are left for templates (`{{params.customer.id}}`).

use std::time::Duration;

use ax_worker::HandlerError;
use serde_json::{Map, Value};

use crate::config::Config;

/// How an attempt failed; [`HandlerError::from`] decides whether the task's retries apply.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Failure {
    /// Bad input or a refused destination or command: never retried.
    #[error("{field}: {reason}")]
    Input { field: String, reason: String },
    /// May pass when tried again (a connection refused, a 503, a command's non-zero exit).
    #[error("{0}")]
    Transient(String),
    /// Will fail the same way again (a 404): never retried.
    #[error("{0}")]
    Permanent(String),
    /// Stopped before it ended: canceled, fenced (lease lost), or past its timeout.
    #[error("{0}")]
    Stopped(String),
}

/// A [`Failure::Input`] of `field`.
pub fn input(field: impl Into<String>, reason: impl Into<String>) -> Failure {
    Failure::Input { field: field.into(), reason: reason.into() }
}

impl From<Failure> for HandlerError {
    fn from(f: Failure) -> HandlerError {
        let message = f.to_string();
        match f {
            Failure::Input { .. } | Failure::Permanent(_) => HandlerError::fatal(message),
            Failure::Transient(_) | Failure::Stopped(_) => HandlerError::retryable(message),
        }
    }
}

/// The params of one attempt: a JSON object.
#[derive(Debug, Clone)]
pub struct Params {
    /// The whole document (templates read any of it).
    pub value: Value,
}

impl Params {
    /// Parses the attempt's params; anything but a JSON object is refused.
    pub fn parse(raw: &str) -> Result<Params, Failure> {
        let value: Value = serde_json::from_str(raw).map_err(|e| input("params", format!("not JSON: {e}")))?;
        if !value.is_object() {
            return Err(input("params", "must be a JSON object"));
        }
        Ok(Params { value })
    }

    fn object(&self) -> &Map<String, Value> {
        static EMPTY: std::sync::OnceLock<Map<String, Value>> = std::sync::OnceLock::new();
        self.value.as_object().unwrap_or_else(|| EMPTY.get_or_init(Map::new))
    }

    /// A field's value, if given (a JSON `null` counts as not given).
    pub fn get(&self, key: &str) -> Option<&Value> {
        self.object().get(key).filter(|v| !v.is_null())
    }

    /// A string field, if given.
    pub fn str(&self, key: &str) -> Result<Option<&str>, Failure> {
        match self.get(key) {
            None => Ok(None),
            Some(Value::String(s)) => Ok(Some(s)),
            Some(_) => Err(input(format!("params.{key}"), "must be a string")),
        }
    }

    /// A string field that must be given and not empty.
    pub fn required_str(&self, key: &str) -> Result<&str, Failure> {
        match self.str(key)? {
            Some(s) if !s.is_empty() => Ok(s),
            _ => Err(input(format!("params.{key}"), "required")),
        }
    }

    /// An object of strings (`headers`, `env`), in the order written; empty if not given.
    pub fn string_map(&self, key: &str) -> Result<Vec<(&str, &str)>, Failure> {
        let Some(v) = self.get(key) else { return Ok(Vec::new()) };
        let m = v.as_object().ok_or_else(|| input(format!("params.{key}"), "must be an object of strings"))?;
        m.iter()
            .map(|(k, v)| {
                v.as_str()
                    .map(|v| (k.as_str(), v))
                    .ok_or_else(|| input(format!("params.{key}.{k}"), "must be a string"))
            })
            .collect()
    }

    /// `params.timeout` (`"30s"`, `"2m"`), at most `defaults.max_timeout`; the configured default
    /// if not given.
    pub fn timeout(&self, config: &Config) -> Result<Duration, Failure> {
        let Some(t) = self.str("timeout")? else { return Ok(config.timeout) };
        let d = humantime::parse_duration(t).map_err(|e| input("params.timeout", format!("{t:?}: {e}")))?;
        if d.is_zero() || d > config.max_timeout {
            return Err(input(
                "params.timeout",
                format!(
                    "must be more than 0 and at most {} (defaults.max_timeout)",
                    humantime::format_duration(config.max_timeout)
                ),
            ));
        }
        Ok(d)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_of_the_wrong_type_are_named() {
        let p = Params::parse(r#"{"url": 3, "headers": {"a": 1}, "timeout": "2 days"}"#).expect("object");
        assert_eq!(p.required_str("url").map_err(|e| e.to_string()), Err("params.url: must be a string".into()));
        assert_eq!(p.required_str("method").map_err(|e| e.to_string()), Err("params.method: required".into()));
        assert_eq!(
            p.string_map("headers").map_err(|e| e.to_string()),
            Err("params.headers.a: must be a string".into())
        );
        let config = Config::parse("", |_| None).expect("config");
        let e = p.timeout(&config).expect_err("too long").to_string();
        assert!(e.starts_with("params.timeout: must be more than 0 and at most 1h"), "{e}");
        assert_eq!(Params::parse("[1]").map_err(|e| e.to_string()).err(), Some("params: must be a JSON object".into()));
    }

    #[test]
    fn input_and_permanent_failures_are_not_retried_the_others_are() {
        assert!(!HandlerError::from(input("params.url", "required")).retryable);
        assert!(!HandlerError::from(Failure::Permanent("404".into())).retryable);
        assert!(HandlerError::from(Failure::Transient("503".into())).retryable);
        assert!(HandlerError::from(Failure::Stopped("canceled".into())).retryable);
        assert_eq!(HandlerError::from(input("params.url", "required")).message, "params.url: required");
    }
}
