//! The body of a delivery and its signature: HMAC-SHA256 (ring) over `timestamp + "." + body` with
//! the webhook's secret, sent as `X-Ax-Signature: v1=<hex>` beside `X-Ax-Timestamp` (Unix seconds)
//! and `X-Ax-Delivery` (the delivery id, the same on every attempt).

use super::Delivery;

/// Header carrying the delivery id.
pub const DELIVERY_HEADER: &str = "x-ax-delivery";
/// Header carrying the Unix time (seconds) that the signature covers.
pub const TIMESTAMP_HEADER: &str = "x-ax-timestamp";
/// Header carrying `v1=` and the hex HMAC-SHA256.
pub const SIGNATURE_HEADER: &str = "x-ax-signature";
/// Header carrying the event name.
pub const EVENT_HEADER: &str = "x-ax-event";

/// The JSON body sent for a delivery: its payload with `delivery_id` added. The same bytes on
/// every attempt.
pub fn body(d: &Delivery) -> String {
    let mut v: serde_json::Value =
        serde_json::from_str(&d.payload).unwrap_or_else(|_| serde_json::Value::Object(Default::default()));
    if let Some(o) = v.as_object_mut() {
        o.insert("delivery_id".to_owned(), serde_json::Value::String(d.id.to_string()));
    }
    v.to_string()
}

/// `v1=` and the hex HMAC-SHA256 of `timestamp.body` under `secret`.
pub fn signature(secret: &[u8], timestamp: i64, body: &[u8]) -> String {
    let key = ring::hmac::Key::new(ring::hmac::HMAC_SHA256, secret);
    let mut ctx = ring::hmac::Context::with_key(&key);
    ctx.update(timestamp.to_string().as_bytes());
    ctx.update(b".");
    ctx.update(body);
    let tag = ctx.sign();
    let mut out = String::with_capacity(3 + 64);
    out.push_str("v1=");
    for b in tag.as_ref() {
        out.push_str(&format!("{b:02x}"));
    }
    out
}

/// Whether `header` (as sent in [`SIGNATURE_HEADER`]) is the signature of `timestamp.body` under
/// `secret`, compared in constant time (what a receiver does; used by the tests).
pub fn verify(secret: &[u8], timestamp: i64, body: &[u8], header: &str) -> bool {
    let Some(hex) = header.strip_prefix("v1=") else { return false };
    if hex.len() != 64 {
        return false;
    }
    let mut tag = Vec::with_capacity(32);
    for i in (0..64).step_by(2) {
        match u8::from_str_radix(&hex[i..i + 2], 16) {
            Ok(b) => tag.push(b),
            Err(_) => return false,
        }
    }
    let mut msg = timestamp.to_string().into_bytes();
    msg.push(b'.');
    msg.extend_from_slice(body);
    let key = ring::hmac::Key::new(ring::hmac::HMAC_SHA256, secret);
    ring::hmac::verify(&key, &msg, &tag).is_ok()
}
