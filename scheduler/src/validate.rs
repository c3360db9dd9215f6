//! Bounds and character sets of every name and value axd accepts, with errors that name the field.

use std::{collections::BTreeMap, time::Duration};

use crate::error::{Error, Result};
pub use crate::text::{MAX_QUOTE, is_display_safe, quote};

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
/// Deepest nesting of arrays and objects in a params document (a Python worker's `json.loads`
/// recurses once per level).
pub const MAX_JSON_DEPTH: usize = 64;
fn describe_char(c: char) -> String {
    let name = match c {
        '\0' => " (NUL)",
        '\u{1b}' => " (ESC)",
        '\u{7}' => " (BEL)",
        '\r' => " (carriage return)",
        '\n' => " (newline)",
        '\t' => " (tab)",
        '\u{8}' => " (backspace)",
        '\u{7f}' => " (DEL)",
        _ => "",
    };
    format!("U+{:04X}{name}", c as u32)
}

/// Refuses text for people that holds a character [`is_display_safe`] does not allow, naming the
/// character and its position.
fn display_safe(field: &str, v: &str, multiline: bool) -> Result<()> {
    if let Some((at, c)) = v.char_indices().find(|(_, c)| !is_display_safe(*c, multiline)) {
        let refused = match (c.is_control(), multiline) {
            (true, true) => "control characters other than tab and newline are not allowed",
            (true, false) => "control characters are not allowed (the text is one line)",
            (false, _) => "bidirectional and line-separator formatting characters are not allowed",
        };
        return Err(Error::invalid(field, format!("contains {} at byte {at}: {refused}", describe_char(c))));
    }
    Ok(())
}

/// Worker text (log lines, result and progress messages, reject reasons) made safe to store and
/// show: each character [`is_display_safe`] refuses (tab and newline are kept) is replaced by its
/// escape, e.g. ESC becomes the six characters `\u{1b}`. Workers' text is escaped rather than
/// refused: a handler printing a colour code must not end its session or lose its result.
pub fn escape_controls(s: String) -> String {
    if s.chars().all(|c| is_display_safe(c, true)) {
        return s;
    }
    let mut out = String::with_capacity(s.len() + 16);
    for c in s.chars() {
        if is_display_safe(c, true) {
            out.push(c);
        } else {
            out.push_str(&format!("\\u{{{:x}}}", c as u32));
        }
    }
    out
}

fn check_chars(field: &str, value: &str, max: usize, allowed: impl Fn(char) -> bool, allowed_desc: &str) -> Result<()> {
    if value.is_empty() {
        return Err(Error::invalid(field, "is required"));
    }
    if value.len() > max {
        return Err(Error::invalid(field, format!("is {} characters long, at most {max} allowed", value.len())));
    }
    if let Some(c) = value.chars().find(|c| !allowed(*c)) {
        return Err(Error::invalid(field, format!("{} contains {c:?}; allowed: {allowed_desc}", quote(value))));
    }
    if !value.starts_with(|c: char| c.is_ascii_alphanumeric()) {
        return Err(Error::invalid(field, format!("{} must start with a letter or digit", quote(value))));
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

/// An event name: 1-128 of `[A-Za-z0-9._:/-]`, starting with a letter or digit.
pub fn event_name(field: &str, v: &str) -> Result<()> {
    check_chars(
        field,
        v,
        MAX_EVENT_NAME,
        |c| c.is_ascii_alphanumeric() || "._:/-".contains(c),
        "letters, digits, . _ : / -",
    )
}

/// Longest event name.
pub const MAX_EVENT_NAME: usize = 128;

/// A params field name for routing HASH: 1-128 of `[A-Za-z0-9_.-]`.
pub fn hash_key(field: &str, v: &str) -> Result<()> {
    if v.is_empty() || v.len() > 128 || !v.chars().all(|c| c.is_ascii_alphanumeric() || "_.-".contains(c)) {
        return Err(Error::invalid(
            field,
            format!("{} must be 1-128 characters of letters, digits, _ . - (a top-level params field)", quote(v)),
        ));
    }
    Ok(())
}

/// A caller-chosen idempotency key.
/// Idempotency key prefixes axd derives keys with, each with what it keys; a caller's key may not
/// start with one.
pub const RESERVED_KEY_PREFIXES: &[(&str, &str)] = &[
    ("fire:", "scheduled fires"),
    ("child:", "the children of broadcast and sharded fires"),
    ("chain:", "instances created by a chain (--on-success, --on-failure)"),
    ("run:", "instances created by a DAG's join (--after-all)"),
    ("intake:", "rows of ax_intake without a key"),
    ("event:", "instances created by an event (PublishEvent)"),
];

pub fn idempotency_key(field: &str, v: &str) -> Result<()> {
    check_chars(
        field,
        v,
        MAX_IDEMPOTENCY_KEY,
        |c| c.is_ascii_alphanumeric() || "._:@/+=-".contains(c),
        "letters, digits, . _ : @ / + = -",
    )?;
    if let Some((prefix, what)) = RESERVED_KEY_PREFIXES.iter().find(|(p, _)| v.starts_with(p)) {
        return Err(Error::invalid(field, format!("keys starting with {prefix:?} are reserved for {what}")));
    }
    Ok(())
}

/// A JSON document of at most 64 KiB, nested at most [`MAX_JSON_DEPTH`] levels, whose string
/// escapes are valid Unicode (no lone UTF-16 surrogate such as `"\ud800"`); empty means `{}`.
/// Returns the canonical text to store (the input as given, so the caller's formatting survives).
/// Every client that can parse JSON can read it back.
pub fn params(field: &str, v: &str) -> Result<String> {
    if v.trim().is_empty() {
        return Ok("{}".to_owned());
    }
    if v.len() > MAX_PARAMS_BYTES {
        return Err(Error::invalid(field, format!("is {} bytes, at most {MAX_PARAMS_BYTES} allowed", v.len())));
    }
    // IgnoredAny checks the syntax without recursing (serde_json keeps its own stack for it).
    serde_json::from_str::<serde::de::IgnoredAny>(v)
        .map_err(|e| Error::invalid(field, format!("is not valid JSON: {e}")))?;
    json_depth_and_escapes(v).map_err(|reason| Error::invalid(field, reason))?;
    Ok(v.to_owned())
}

/// Scans syntactically valid JSON for nesting deeper than [`MAX_JSON_DEPTH`] and for `\u` escapes
/// that are lone surrogates.
fn json_depth_and_escapes(v: &str) -> std::result::Result<(), String> {
    let b = v.as_bytes();
    let hex = |at: usize| -> Option<u32> {
        let digits = v.get(at..at + 4)?;
        u32::from_str_radix(digits, 16).ok()
    };
    let (mut depth, mut i, mut in_string) = (0usize, 0usize, false);
    while i < b.len() {
        match (in_string, b[i]) {
            (_, b'"') => in_string = !in_string,
            (false, b'[' | b'{') => {
                depth += 1;
                if depth > MAX_JSON_DEPTH {
                    return Err(format!(
                        "nests arrays and objects more than {MAX_JSON_DEPTH} levels deep (at byte {i}); at most {MAX_JSON_DEPTH} allowed"
                    ));
                }
            }
            (false, b']' | b'}') => depth = depth.saturating_sub(1),
            (true, b'\\') => {
                if b.get(i + 1) == Some(&b'u') {
                    let unit = hex(i + 2).unwrap_or(0);
                    let lone = match unit {
                        0xD800..=0xDBFF => {
                            let pair = b.get(i + 6) == Some(&b'\\') && b.get(i + 7) == Some(&b'u');
                            if pair && matches!(hex(i + 8), Some(0xDC00..=0xDFFF)) {
                                i += 6;
                                false
                            } else {
                                true
                            }
                        }
                        0xDC00..=0xDFFF => true,
                        _ => false,
                    };
                    if lone {
                        return Err(format!(
                            "holds the escape \\u{unit:04x} at byte {i}, a lone UTF-16 surrogate: not valid Unicode \
                             (a high surrogate \\ud800-\\udbff must be followed by a low one \\udc00-\\udfff)"
                        ));
                    }
                    i += 5;
                } else {
                    i += 1;
                }
            }
            _ => {}
        }
        i += 1;
    }
    Ok(())
}

/// Free text for people, up to `max` bytes, on one or several lines: refuses control characters
/// other than tab and newline (see [`is_display_safe`]). For descriptions and reasons.
pub fn text(field: &str, v: &str, max: usize) -> Result<()> {
    if v.len() > max {
        return Err(Error::invalid(field, format!("is {} bytes, at most {max} allowed", v.len())));
    }
    display_safe(field, v, true)
}

/// Free text for people on one line, up to `max` bytes: refuses every control character. For
/// label values and client descriptions.
pub fn line(field: &str, v: &str, max: usize) -> Result<()> {
    if v.len() > max {
        return Err(Error::invalid(field, format!("is {} bytes, at most {max} allowed", v.len())));
    }
    display_safe(field, v, false)
}

/// Labels: at most 32; keys 1-63 of `[A-Za-z0-9._/-]`; values at most 255 bytes on one line, without
/// control characters.
pub fn labels(field: &str, labels: &BTreeMap<String, String>) -> Result<()> {
    if labels.len() > MAX_LABELS {
        return Err(Error::invalid(field, format!("has {} labels, at most {MAX_LABELS} allowed", labels.len())));
    }
    for (k, v) in labels {
        let kf = format!("{field}[{}]", quote(k));
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
        display_safe(&kf, v, false).map_err(|e| match e {
            Error::InvalidArgument { field, reason } => Error::invalid(field, format!("value {reason}")),
            other => other,
        })?;
    }
    Ok(())
}

/// The tags a ListInstances or bulk selector filters by: as [`instance_tags`], and also those axd
/// sets (`ax.schedule`).
pub fn tag_filters(field: &str, tags: &std::collections::HashMap<String, String>) -> Result<Vec<(String, String)>> {
    let sorted: BTreeMap<String, String> = tags.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
    labels(field, &sorted)?;
    if let Some(k) = sorted.keys().find(|k| k.starts_with("params.")) {
        return Err(Error::invalid(
            format!("{field}[{}]", quote(k)),
            "keys starting with \"params.\" are the tags of search_params: filter by them with params",
        ));
    }
    if let Some(k) = sorted.keys().find(|k| k.is_empty()) {
        return Err(Error::invalid(format!("{field}[{}]", quote(k)), "is empty"));
    }
    Ok(sorted.into_iter().collect())
}

/// A trigger's instance tags: label keys and values, none of the keys search params (`params.`)
/// or axd (`ax.`) set.
pub fn instance_tags(field: &str, tags: &std::collections::HashMap<String, String>) -> Result<Vec<(String, String)>> {
    let sorted = tag_filters(field, tags)?;
    if let Some((k, _)) = sorted.iter().find(|(k, _)| k.starts_with("ax.")) {
        return Err(Error::invalid(
            format!("{field}[{}]", quote(k)),
            "keys starting with \"ax.\" are set by axd (ax.schedule: which of a task's schedules fired)",
        ));
    }
    Ok(sorted)
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
    fn params_nest_at_most_64_levels() {
        let nested = |n: usize| format!("{}{}", "[".repeat(n), "]".repeat(n));
        assert!(params("p", &nested(MAX_JSON_DEPTH)).is_ok());
        let e = params("task.params", &nested(MAX_JSON_DEPTH + 1)).unwrap_err().to_string();
        assert!(e.starts_with("task.params: nests arrays and objects more than 64 levels deep"), "{e}");
        let e = params("p", &nested(30_000)).unwrap_err().to_string();
        assert!(e.contains("more than 64 levels"), "{e}");
        let objects = format!("{}1{}", "{\"a\":".repeat(65), "}".repeat(65));
        assert!(params("p", &objects).unwrap_err().to_string().contains("more than 64 levels"));
        // Brackets inside strings are text, not nesting.
        let text = format!("{{\"s\":\"{}\\\"[\"}}", "[".repeat(100));
        assert!(params("p", &text).is_ok(), "{text}");
    }

    #[test]
    fn params_refuse_lone_surrogates() {
        let e = params("params", r#"{"a":"\ud800"}"#).unwrap_err().to_string();
        assert!(e.starts_with("params: holds the escape \\ud800 at byte 6, a lone UTF-16 surrogate"), "{e}");
        assert!(params("p", r#"["\udc00"]"#).unwrap_err().to_string().contains("lone UTF-16 surrogate"));
        assert!(params("p", r#"["\ud800x"]"#).unwrap_err().to_string().contains("lone"));
        assert!(params("p", r#"["\ud800\u0041"]"#).unwrap_err().to_string().contains("lone"));
        // A pair is one character (U+1F600); an escaped backslash before `u` is no escape.
        assert!(params("p", r#"["\ud83d\ude00", "\\ud800", "\u00e9\u0000"]"#).is_ok());
    }

    #[test]
    fn text_for_people_refuses_control_characters_naming_them() {
        assert!(text("description", "two\nlines\twith a tab, ünïcödé", 1024).is_ok());
        let e = text("task.description", "title\u{1b}]0;pwned\u{7}", 1024).unwrap_err().to_string();
        assert_eq!(
            e,
            "task.description: contains U+001B (ESC) at byte 5: control characters other than tab and newline are not allowed"
        );
        assert!(text("d", "a\0b", 1024).unwrap_err().to_string().contains("U+0000 (NUL) at byte 1"));
        assert!(text("d", "a\rb", 1024).unwrap_err().to_string().contains("carriage return"));
        assert!(text("d", "\u{9b}31m", 1024).unwrap_err().to_string().contains("U+009B"), "C1 CSI");
        assert!(text("d", "abc\u{202e}cba", 1024).unwrap_err().to_string().contains("U+202E at byte 3: bidirectional"));
        assert!(line("hello.client", "sdk/1.0", 128).is_ok());
        assert!(line("hello.client", "a\nb", 128).unwrap_err().to_string().contains("(the text is one line)"));
        let mut l = BTreeMap::new();
        l.insert("zone".to_owned(), "eu\u{1b}[2K".to_owned());
        let e = labels("task.labels", &l).unwrap_err().to_string();
        assert_eq!(
            e,
            "task.labels[\"zone\"]: value contains U+001B (ESC) at byte 2: control characters are not allowed (the text is one line)"
        );
    }

    #[test]
    fn worker_text_is_escaped_not_refused() {
        assert_eq!(escape_controls("plain\n\ttext".to_owned()), "plain\n\ttext");
        assert_eq!(escape_controls("\u{1b}[31mred\u{1b}[0m\0".to_owned()), "\\u{1b}[31mred\\u{1b}[0m\\u{0}");
        assert_eq!(escape_controls("a\u{2028}b".to_owned()), "a\\u{2028}b");
    }

    #[test]
    fn quotes_are_capped_at_100_bytes_and_escaped() {
        assert_eq!(quote("Europe/London"), "\"Europe/London\"");
        assert_eq!(quote("a\u{1b}b"), "\"a\\u{1b}b\"");
        let huge = "x".repeat(100_000);
        assert_eq!(quote(&huge), format!("\"{}\"… (100000 bytes)", "x".repeat(100)));
        // Cut at a character boundary.
        let q = quote(&"é".repeat(80));
        assert!(q.ends_with("… (160 bytes)") && q.len() < 130, "{q}");
        let e = task_name("name", &"a\u{1b}".repeat(50)).unwrap_err().to_string();
        assert!(e.len() < 600 && !e.contains('\u{1b}'), "{e}");
        let mut l = BTreeMap::new();
        l.insert("k".repeat(100_000), String::new());
        let e = labels("labels", &l).unwrap_err().to_string();
        assert!(e.len() < 300 && e.contains("(100000 bytes)"), "{e}");
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
