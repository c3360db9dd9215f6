// What axd keeps of each text field, in UTF-8 bytes (proto/ax/v1/worker.proto). Longer text is cut
// here, the way axd would cut it, before it is sent: a message over Welcome.max_message_size
// (4 MiB) ends the stream with RESOURCE_EXHAUSTED, and a Result that can never arrive loses its
// attempt.

/** Longest Result.output axd keeps. */
export const MAX_OUTPUT = 65536;
/** Longest Result.message axd keeps. */
export const MAX_RESULT_MESSAGE = 4096;
/** Longest Log.message axd keeps. */
export const MAX_LOG_LINE = 4096;
/** Longest Progress.message axd keeps. */
export const MAX_PROGRESS_MESSAGE = 1024;
/** Longest Reject.reason axd accepts (a longer one ends the stream with INVALID_ARGUMENT). */
export const MAX_REJECT_REASON = 1024;

/**
 * `s` cut to at most `maxBytes` UTF-8 bytes, on a character boundary, and marked the way axd marks
 * what it cuts ("…[truncated, N bytes in all]", N the full length in bytes). Text that fits is
 * returned unchanged.
 */
export function truncate(s: string, maxBytes: number): string {
  const data = Buffer.from(s, "utf8");
  if (data.length <= maxBytes) return s;
  const marker = `…[truncated, ${data.length} bytes in all]`;
  let cut = Math.max(0, maxBytes - Buffer.byteLength(marker, "utf8"));
  // Back up over continuation bytes (0b10xxxxxx) so that no character is split in two.
  while (cut > 0 && (data[cut]! & 0xc0) === 0x80) cut--;
  return data.subarray(0, cut).toString("utf8") + marker;
}
