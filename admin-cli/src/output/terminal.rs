//! Terminal safety: text that came from the server (names, descriptions, messages, reasons, log
//! lines, labels) is shown with every control character escaped visibly, so a value can neither
//! move the cursor, rewrite earlier lines, set the window title nor fake a line of its own.
//! Only text for people goes through here; `-o json` stays exact (serde's escaping only).

use std::{borrow::Cow, fmt::Write as _};

/// `text` with every control character (C0 including newline and tab, DEL, C1) written as a
/// visible escape: `\n`, `\t`, `\r`, `\x1b`, `\x7f`, `\u{9b}`. Text without any is borrowed.
pub fn escape_controls(text: &str) -> Cow<'_, str> {
    escape(text, false)
}

/// [`escape_controls`] for a whole report whose lines axctl laid out itself: its newlines stay.
pub fn escape_controls_but_newlines(text: &str) -> Cow<'_, str> {
    escape(text, true)
}

fn escape(text: &str, keep_newlines: bool) -> Cow<'_, str> {
    let unsafe_char = |c: char| c.is_control() && !(keep_newlines && c == '\n');
    if !text.chars().any(unsafe_char) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        match c {
            c if !unsafe_char(c) => out.push(c),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            // C0 and DEL as the byte they are; C1 (U+0080..U+009F, two bytes in UTF-8) as the code point.
            c if c.is_ascii() => {
                let _ = write!(out, "\\x{:02x}", u32::from(c));
            }
            c => {
                let _ = write!(out, "\\u{{{:x}}}", u32::from(c));
            }
        }
    }
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_characters_become_visible_escapes() {
        assert_eq!(escape_controls("\x1b]0;title\x07"), "\\x1b]0;title\\x07");
        assert_eq!(escape_controls("\x1b[1A\x1b[2K"), "\\x1b[1A\\x1b[2K");
        assert_eq!(escape_controls("a\nb\r\tc\x7f\0"), "a\\nb\\r\\tc\\x7f\\x00");
        assert_eq!(escape_controls("\u{9b}31m \u{85}"), "\\u{9b}31m \\u{85}");
        assert_eq!(escape_controls_but_newlines("a\nb\x1bc\n"), "a\nb\\x1bc\n");
    }

    #[test]
    fn printable_text_is_borrowed_unchanged() {
        for text in ["", "plain", "Zürich → 東京 ✓", "back\\slash"] {
            assert!(matches!(escape_controls(text), Cow::Borrowed(t) if t == text), "{text:?}");
        }
    }
}
