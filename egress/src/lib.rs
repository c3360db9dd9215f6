//! Where ax may send a request on someone's behalf: axd's alert webhooks and ax-runner's `http`
//! executor both take a URL from a user and must not let it reach the host's own network.
//!
//! [`Target::parse`] cuts a URL into scheme, host, port and path (no user information, no
//! whitespace, at most [`MAX_URL`] bytes); [`refused_range`] says whether an address — checked
//! after resolution, at every send — is loopback, private, link-local or another range a request
//! must not reach, seeing through IPv4 addresses embedded in IPv6. What a caller may allow beyond
//! that is its own configuration.
//!
//! ```
//! use ax_egress::{Target, refused_range};
//! let t = Target::parse("http://[::ffff:127.0.0.1]:8080/x").unwrap();
//! assert_eq!(refused_range(t.literal_ip().unwrap()), Some("loopback"));
//! ```

mod ranges;
#[cfg(test)]
mod tests;
mod url;

pub use ranges::refused_range;
pub use url::{MAX_URL, Target, redact_url};
