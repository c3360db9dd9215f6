"""Text limits of the worker protocol and the cut that keeps a message inside them.

axd keeps at most so many UTF-8 bytes of each free-text field (proto/ax/v1/worker.proto). The SDK
cuts longer text itself, the way axd would, before sending: a WorkerMessage over
Welcome.max_message_size (4 MiB) ends the stream with RESOURCE_EXHAUSTED, and a Result that can
never arrive costs its attempt. A Reject.reason over its limit even ends the stream with
INVALID_ARGUMENT.
"""

from __future__ import annotations

#: Result.output: axd keeps at most this many bytes.
MAX_OUTPUT = 65536
#: Result.message.
MAX_RESULT_MESSAGE = 4096
#: Log.message.
MAX_LOG_LINE = 4096
#: Progress.message.
MAX_PROGRESS_MESSAGE = 1024
#: Reject.reason (a longer one ends the stream).
MAX_REJECT_REASON = 1024


def truncate(text: str, max_bytes: int) -> str:
    """Returns `text` cut to at most `max_bytes` UTF-8 bytes, on a character boundary.

    Text that fits is returned unchanged. Longer text keeps as much of its beginning as fits
    together with the marker axd itself uses, ``…[truncated, N bytes in all]`` (N: the UTF-8 length
    of the whole text), so the result is never longer than `max_bytes` and never ends in the middle
    of a multi-byte character. Lone surrogates, which UTF-8 (and so protobuf) cannot carry, are
    replaced by ``?``.
    """
    try:
        data = text.encode("utf-8")
    except UnicodeEncodeError:
        data = text.encode("utf-8", "replace")
        text = data.decode("utf-8")
    if len(data) <= max_bytes:
        return text
    marker = f"…[truncated, {len(data)} bytes in all]"
    keep = max(max_bytes - len(marker.encode("utf-8")), 0)
    # Decoding with "ignore" drops the partial character a byte cut may leave at the end.
    return data[:keep].decode("utf-8", "ignore") + marker


def utf8_len(text: str) -> int:
    """The length of `text` in UTF-8 bytes (what axd's limits count)."""
    return len(text.encode("utf-8", "replace"))
