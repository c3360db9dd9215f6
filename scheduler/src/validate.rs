//! Bounds and character sets of every name and value axd accepts, with errors that name the field.

use std::{collections::BTreeMap, time::Duration};

use crate::error::{Error, Result};

/// Longest task name.
pub const MAX_TASK_NAME: usize = 128;
/// Longest app name.
pub const MAX_APP: usize = 64;
/// Longest handler name.
pub const MAX_HANDLER: usize = 128;
/// Longest worker id.
pub const MAX_WORKER_ID: usize = 128;
/// Largest params / output document.
pub const MAX_PARAMS_BYTES: usize = 64 * 1024;
/// Longest description.
pub const MAX_DESCRIPTION: usize = 1024;
/// Most labels.
pub const MAX_LABELS: usize = 32;
/// Longest label key.
pub const MAX_LABEL_KEY: usize = 63;
/// Longest label value.
pub const MAX_LABEL_VALUE: usize = 255;
/// Longest idempotency key.
pub const MAX_IDEMPOTENCY_KEY: usize = 200;
/// Longest free-text reason.
pub const MAX_REASON: usize = 1024;

fn check_chars(field: &str, value: &str, max: usize, allowed: impl Fn(char) -> bool, allowed_desc: &str) -> Result<()> {
    if value.is_empty() {
        return Err(Error::invalid(field, "is required"));
    }
    if value.len() > max {
        return Err(Error::invalid(field, format!("is {} characters long, at most {max} allowed", value.len())));
    }
    if let Some(c) = value.chars().find(|c| !allowed(*c)) {
        return Err(Error::invalid(field, format!("{value:?} contains {c:?}; allowed: {allowed_desc}")));
    }
    if !value.starts_with(|c: char| c.is_ascii_alphanumeric()) {
        return Err(Error::invalid(field, format!("{value:?} must start with a letter or digit")));
    }
    Ok(())
}

/// A task name: 1-128 of `[A-Za-z0-9._:-]`, starting with a letter or digit.
pub fn task_name(field: &str, v: &str) -> Result<()> {
    check_chars(
        field,
        v,
        MAX_TASK_NAME,
        |c| c.is_ascii_alphanumeric() || "._:-".contains(c),
        "letters, digits, . _ : -",
    )
}

/// An app name: 1-64 of `[a-z0-9._-]`, starting with a letter or digit.
pub fn app(field: &str, v: &str) -> Result<()> {
    check_chars(
        field,
        v,
        MAX_APP,
        |c| c.is_ascii_lowercase() || c.is_ascii_digit() || "._-".contains(c),
        "lower-case letters, digits, . _ -",
    )
}

/// A handler name: 1-128 of `[A-Za-z0-9._:/-]`, starting with a letter or digit.
pub fn handler(field: &str, v: &str) -> Result<()> {
    check_chars(
        field,
        v,
        MAX_HANDLER,
        |c| c.is_ascii_alphanumeric() || "._:/-".contains(c),
        "letters, digits, . _ : / -",
    )
}

/// A worker id: 1-128 of `[A-Za-z0-9._:@/-]`, starting with a letter or digit.
pub fn worker_id(field: &str, v: &str) -> Result<()> {
    check_chars(
        field,
        v,
        MAX_WORKER_ID,
        |c| c.is_ascii_alphanumeric() || "._:@/-".contains(c),
        "letters, digits, . _ : @ / -",
    )
}

/// A caller-chosen idempotency key.
pub fn idempotency_key(field: &str, v: &str) -> Result<()> {
    check_chars(
        field,
        v,
        MAX_IDEMPOTENCY_KEY,
        |c| c.is_ascii_alphanumeric() || "._:@/+=-".contains(c),
        "letters, digits, . _ : @ / + = -",
    )?;
    if v.starts_with("fire:") {
        return Err(Error::invalid(field, "keys starting with \"fire:\" are reserved for scheduled fires"));
    }
    Ok(())
}

/// A JSON document of at most 64 KiB; empty means `{}`. Returns the canonical text to store (the
/// input as given, so the caller's formatting survives).
pub fn params(field: &str, v: &str) -> Result<String> {
    if v.trim().is_empty() {
        return Ok("{}".to_owned());
    }
    if v.len() > MAX_PARAMS_BYTES {
        return Err(Error::invalid(field, format!("is {} bytes, at most {MAX_PARAMS_BYTES} allowed", v.len())));
    }
    serde_json::from_str::<serde::de::IgnoredAny>(v)
        .map_err(|e| Error::invalid(field, format!("is not valid JSON: {e}")))?;
    Ok(v.to_owned())
}

/// Free text up to `max` bytes.
pub fn text(field: &str, v: &str, max: usize) -> Result<()> {
    if v.len() > max {
        return Err(Error::invalid(field, format!("is {} bytes, at most {max} allowed", v.len())));
    }
    Ok(())
}

/// Labels: at most 32; keys 1-63 of `[A-Za-z0-9._/-]`; values at most 255 bytes.
pub fn labels(field: &str, labels: &BTreeMap<String, String>) -> Result<()> {
    if labels.len() > MAX_LABELS {
        return Err(Error::invalid(field, format!("has {} labels, at most {MAX_LABELS} allowed", labels.len())));
    }
    for (k, v) in labels {
        let kf = format!("{field}[{k:?}]");
        check_chars(
            &kf,
            k,
            MAX_LABEL_KEY,
            |c| c.is_ascii_alphanumeric() || "._/-".contains(c),
            "letters, digits, . _ / -",
        )?;
        if v.len() > MAX_LABEL_VALUE {
            return Err(Error::invalid(kf, format!("value is {} bytes, at most {MAX_LABEL_VALUE} allowed", v.len())));
        }
    }
    Ok(())
}

/// A duration within `[min, max]`.
pub fn duration_between(field: &str, d: Duration, min: Duration, max: Duration) -> Result<()> {
    use crate::schedule::fmt_duration;
    if d < min || d > max {
        return Err(Error::invalid(
            field,
            format!("{} is out of range {}..{}", fmt_duration(d), fmt_duration(min), fmt_duration(max)),
        ));
    }
    Ok(())
}

/// Truncates `s` to at most `max` bytes at a character boundary, marking the cut.
pub fn truncate(mut s: String, max: usize) -> String {
    if s.len() <= max {
        return s;
    }
    let dropped = s.len();
    let mut cut = max.saturating_sub(40);
    while !s.is_char_boundary(cut) {
        cut -= 1;
    }
    s.truncate(cut);
    s.push_str(&format!("…[truncated, {dropped} bytes in all]"));
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_checked_for_length_and_charset() {
        assert!(task_name("name", "nightly-report.v2").is_ok());
        let e = task_name("name", "bad name").unwrap_err().to_string();
        assert!(e.starts_with("name: ") && e.contains("' '"), "{e}");
        assert!(task_name("name", "").unwrap_err().to_string().contains("required"));
        assert!(task_name("name", &"a".repeat(129)).unwrap_err().to_string().contains("at most 128"));
        assert!(app("app", "Billing").unwrap_err().to_string().contains("'B'"));
        assert!(task_name("name", "-x").unwrap_err().to_string().contains("must start"));
    }

    #[test]
    fn params_must_be_json_and_bounded() {
        assert_eq!(params("params", "").unwrap(), "{}");
        assert_eq!(params("params", "{\"a\":1}").unwrap(), "{\"a\":1}");
        assert!(params("params", "{a:1}").unwrap_err().to_string().contains("not valid JSON"));
        let big = format!("\"{}\"", "x".repeat(MAX_PARAMS_BYTES));
        assert!(params("params", &big).unwrap_err().to_string().contains("at most 65536"));
    }

    #[test]
    fn reserved_idempotency_keys_are_refused() {
        assert!(idempotency_key("k", "order-42").is_ok());
        assert!(idempotency_key("k", "fire:2026").unwrap_err().to_string().contains("reserved"));
    }

    #[test]
    fn truncation_keeps_char_boundaries() {
        let s = "é".repeat(100);
        let t = truncate(s, 60);
        assert!(t.len() < 100 && t.contains("truncated"));
    }
}
