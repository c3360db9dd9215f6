//! How text from callers is shown back: quoted and capped in errors, and which characters are safe
//! for people's screens. Depends on nothing else in the crate, so every module can use it.

/// Most bytes of a caller's input that an error message quotes (see [`quote`]).
pub const MAX_QUOTE: usize = 100;

/// `s` as an error message quotes it: escaped like a Rust string literal (so control characters
/// show as `\u{1b}` and cannot reach a terminal), and at most [`MAX_QUOTE`] bytes of it, with its
/// full length when cut: `"abc"… (102400 bytes)`. Every error that repeats a caller's input goes
/// through here, so an error stays small whatever was sent (a 100 KB time zone once made the error
/// itself too large for gRPC metadata).
pub fn quote(s: &str) -> String {
    if s.len() <= MAX_QUOTE {
        return format!("{s:?}");
    }
    let mut cut = MAX_QUOTE;
    while !s.is_char_boundary(cut) {
        cut -= 1;
    }
    format!("{:?}… ({} bytes)", &s[..cut], s.len())
}

/// Whether `c` may appear in text meant for people. Refused: control characters (C0, DEL, C1),
/// except tab and newline where `multiline`, and the invisible characters that reorder or break
/// lines on a display (bidirectional overrides and isolates, U+2028/U+2029).
pub fn is_display_safe(c: char, multiline: bool) -> bool {
    if c.is_control() {
        return multiline && (c == '\n' || c == '\t');
    }
    !matches!(c, '\u{061c}' | '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' | '\u{2028}' | '\u{2029}')
}
