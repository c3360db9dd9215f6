//! Params keys of concurrency keys and uniqueness windows: a path written `params.FIELD` or
//! `params.A.B` (a field inside objects), and the key an instance's params give it.

use super::hash;

/// Most names in a path after `params.`.
pub const MAX_DEPTH: usize = 8;
/// Longest name in a path.
const MAX_NAME: usize = 64;

/// The field names of a path `params.A.B…`, or why it is not one (for an error naming the field).
pub fn parse(path: &str) -> Result<Vec<&str>, String> {
    let rest = path
        .strip_prefix("params.")
        .ok_or_else(|| format!("{path:?} must start with \"params.\" (e.g. params.customer_id)"))?;
    let names: Vec<&str> = rest.split('.').collect();
    if names.len() > MAX_DEPTH {
        return Err(format!("{path:?} has {} field names, at most {MAX_DEPTH}", names.len()));
    }
    for n in &names {
        if n.is_empty() || n.len() > MAX_NAME || !n.chars().all(|c| c.is_ascii_alphanumeric() || "_-".contains(c)) {
            return Err(format!("{path:?}: field name {n:?} must be 1-{MAX_NAME} characters of letters, digits, _ -"));
        }
    }
    Ok(names)
}

/// The key `params` give for `path` (which [`parse`] accepted): the value found there, a string as
/// is and another JSON value as its JSON text, over 255 bytes replaced by `sha256:<hex>`. `Err`
/// says what is missing, naming the path.
pub fn key_of(params: &str, path: &str) -> Result<String, String> {
    let names = parse(path)?;
    let doc: serde_json::Value = serde_json::from_str(params).map_err(|e| format!("params are not JSON: {e}"))?;
    let mut at = &doc;
    for (depth, name) in names.iter().enumerate() {
        let here = if depth == 0 { "params".to_owned() } else { format!("params.{}", names[..depth].join(".")) };
        at = at
            .as_object()
            .ok_or_else(|| format!("{here} is not a JSON object, so it has no field {name:?} ({path} is the key)"))?
            .get(*name)
            .ok_or_else(|| format!("{here} has no field {name:?} ({path} is the key)"))?;
    }
    Ok(hash::key_text(at))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_are_checked_and_split() {
        assert_eq!(parse("params.customer_id").unwrap(), vec!["customer_id"]);
        assert_eq!(parse("params.a.b-c").unwrap(), vec!["a", "b-c"]);
        for bad in ["customer_id", "params.", "params.a..b", "params.a b", "params.x.y.z.a.b.c.d.e.f"] {
            assert!(parse(bad).is_err(), "{bad} accepted");
        }
    }

    #[test]
    fn keys_come_from_the_path() {
        let p = r#"{"customer_id": 42, "order": {"region": "eu", "n": [1, 2]}, "name": "x"}"#;
        assert_eq!(key_of(p, "params.customer_id").unwrap(), "42");
        assert_eq!(key_of(p, "params.name").unwrap(), "x");
        assert_eq!(key_of(p, "params.order.region").unwrap(), "eu");
        assert_eq!(key_of(p, "params.order.n").unwrap(), "[1,2]");
        let missing = key_of(p, "params.order.city").unwrap_err();
        assert!(missing.contains("params.order has no field \"city\""), "{missing}");
        let not_object = key_of(p, "params.name.first").unwrap_err();
        assert!(not_object.contains("params.name is not a JSON object"), "{not_object}");
        let long = format!(r#"{{"k": "{}"}}"#, "a".repeat(300));
        assert!(key_of(&long, "params.k").unwrap().starts_with("sha256:"));
    }
}
