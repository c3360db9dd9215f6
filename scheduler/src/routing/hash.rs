//! Consistent hashing for routing HASH: rendezvous (highest random weight) hashing of a key over
//! worker ids. Every axd computes the same owner from the same set of workers, and a worker that
//! joins or leaves changes the owner only of the keys it wins or held.

/// FNV-1a over bytes, then a 64-bit finalizer (splitmix64) so that similar inputs spread.
fn weight(key: &str, worker_id: &str) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in key.bytes().chain(std::iter::once(0xff)).chain(worker_id.bytes()) {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h = (h ^ (h >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    h = (h ^ (h >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    h ^ (h >> 31)
}

/// The worker that owns `key` among `workers` (ties, which need equal 64-bit weights, go to the
/// smaller id); `None` when there are none.
pub fn owner<'a>(key: &str, workers: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    workers
        .into_iter()
        .map(|w| (weight(key, w), w))
        .max_by(|a, b| a.0.cmp(&b.0).then_with(|| b.1.cmp(a.1)))
        .map(|(_, w)| w)
}

/// The routing key of an instance of a HASH task: the value of its params' top-level field `field`
/// (a string as is, another JSON value as its JSON text), or `default` (the task name) without a
/// field. Keys longer than 255 bytes are replaced by `sha256:<hex>` of them, which hashes the same
/// way on every axd. `Err` names what is missing.
pub fn key_of(params: &str, field: Option<&str>, default: &str) -> Result<String, String> {
    let Some(field) = field else { return Ok(default.to_owned()) };
    let doc: serde_json::Value = serde_json::from_str(params).map_err(|e| format!("params are not JSON: {e}"))?;
    let value = doc
        .as_object()
        .ok_or_else(|| "params are not a JSON object, so they have no field to hash".to_owned())?
        .get(field)
        .ok_or_else(|| format!("params have no field {field:?}, which the task's hash_key names"))?;
    Ok(key_text(value))
}

/// A JSON value as a key: a string as is, another value as its JSON text; over 255 bytes,
/// `sha256:<hex>` of that text (the same on every axd).
pub fn key_text(value: &serde_json::Value) -> String {
    let key = match value {
        serde_json::Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    if key.len() <= 255 {
        return key;
    }
    let digest = ring::digest::digest(&ring::digest::SHA256, key.as_bytes());
    format!("sha256:{}", digest.as_ref().iter().map(|b| format!("{b:02x}")).collect::<String>())
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use super::*;

    fn workers(n: usize) -> Vec<String> {
        (0..n).map(|i| format!("w{i}")).collect()
    }

    fn owners(keys: &[String], ws: &[String]) -> HashMap<String, String> {
        keys.iter().map(|k| (k.clone(), owner(k, ws.iter().map(String::as_str)).expect("owner").to_owned())).collect()
    }

    #[test]
    fn same_key_same_worker_whatever_the_order() {
        let mut ws = workers(5);
        let a = owner("user-42", ws.iter().map(String::as_str)).map(str::to_owned);
        ws.reverse();
        let b = owner("user-42", ws.iter().map(String::as_str)).map(str::to_owned);
        assert_eq!(a, b);
        assert_eq!(owner("k", std::iter::empty()), None);
    }

    #[test]
    fn a_joining_worker_takes_only_keys_it_wins_and_a_leaving_one_moves_only_its_own() {
        let keys: Vec<String> = (0..10_000).map(|i| format!("key-{i}")).collect();
        let four = workers(4);
        let before = owners(&keys, &four);
        let five = workers(5);
        let after = owners(&keys, &five);
        let moved: Vec<&String> = keys.iter().filter(|k| before[*k] != after[*k]).collect();
        assert!(moved.iter().all(|k| after[*k] == "w4"), "a moved key went to the new worker");
        // About a fifth of the keys move to it (spread check, generous bounds).
        assert!((1500..2500).contains(&moved.len()), "{} of 10000 moved", moved.len());
        // w2 leaves: only its keys move.
        let without: Vec<String> = five.iter().filter(|w| *w != "w2").cloned().collect();
        let later = owners(&keys, &without);
        for k in &keys {
            if after[k] != "w2" {
                assert_eq!(after[k], later[k], "key {k} of a staying worker moved");
            }
        }
        // Spread: each of five workers owns 15-25 % of the keys.
        let mut count: HashMap<&str, usize> = HashMap::new();
        for w in after.values() {
            *count.entry(w.as_str()).or_default() += 1;
        }
        for (w, n) in count {
            assert!((1500..2500).contains(&n), "{w} owns {n}");
        }
    }

    #[test]
    fn keys_come_from_a_params_field_or_the_task() {
        assert_eq!(key_of("{}", None, "task").expect("task"), "task");
        assert_eq!(key_of(r#"{"user":"u1"}"#, Some("user"), "t").expect("string"), "u1");
        assert_eq!(key_of(r#"{"user":42}"#, Some("user"), "t").expect("number"), "42");
        assert!(key_of(r#"{"other":1}"#, Some("user"), "t").expect_err("missing").contains("no field \"user\""));
        assert!(key_of("[1]", Some("user"), "t").expect_err("array").contains("not a JSON object"));
        let long = format!(r#"{{"k":"{}"}}"#, "x".repeat(300));
        let k = key_of(&long, Some("k"), "t").expect("long");
        assert!(k.starts_with("sha256:") && k.len() == 71, "{k}");
    }
}
