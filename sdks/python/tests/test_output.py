"""Outputs: cut to what axd keeps (65536 bytes) at a UTF-8 boundary, and how return values become
Result.output."""

import unittest

import _path  # noqa: F401  (puts sdks/python on sys.path)
from ax_worker import HandlerError, MAX_OUTPUT, output_of, truncate


class TruncateTest(unittest.TestCase):
    def test_text_that_fits_is_left_alone(self) -> None:
        self.assertEqual(truncate("short", 10), "short")
        exact = "x" * MAX_OUTPUT
        self.assertIs(truncate(exact, MAX_OUTPUT), exact)

    def test_a_long_output_is_cut_to_the_limit_and_marked(self) -> None:
        out = truncate("x" * (1 << 20), MAX_OUTPUT)
        data = out.encode("utf-8")
        self.assertLessEqual(len(data), MAX_OUTPUT)
        self.assertGreater(len(data), MAX_OUTPUT - 64, "not cut more than needed")
        self.assertTrue(out.endswith("…[truncated, 1048576 bytes in all]"), out[-60:])
        self.assertTrue(out.startswith("x" * 1000))

    def test_the_cut_falls_on_a_character_boundary(self) -> None:
        # 2-, 3- and 4-byte characters: wherever the byte limit falls, no character is split.
        for ch in ("é", "€", "😀"):
            for extra in range(5):
                text = "a" * extra + ch * 40000
                out = truncate(text, MAX_OUTPUT)
                data = out.encode("utf-8")  # raises if a character was split
                self.assertLessEqual(len(data), MAX_OUTPUT, (ch, extra))
                self.assertGreater(len(data), MAX_OUTPUT - 64 - 4, (ch, extra))
                body = out[: out.index("…[truncated")]
                self.assertEqual(body, text[: len(body)], "the kept part is the text's beginning")
                self.assertIn(f"[truncated, {len(text.encode('utf-8'))} bytes in all]", out)

    def test_the_limit_counts_bytes_not_characters(self) -> None:
        text = "é" * 40000  # 40000 characters, 80000 bytes
        self.assertNotEqual(truncate(text, MAX_OUTPUT), text)
        self.assertEqual(truncate("é" * 100, 200), "é" * 100)
        self.assertNotEqual(truncate("é" * 101, 200), "é" * 101)

    def test_lone_surrogates_are_replaced_so_the_text_encodes(self) -> None:
        out = truncate("ok\ud800", 100)
        self.assertEqual(out, "ok?")
        out.encode("utf-8")


class OutputOfTest(unittest.TestCase):
    def test_return_values(self) -> None:
        self.assertEqual(output_of("as is"), "as is")
        self.assertEqual(output_of(None), "")
        self.assertEqual(output_of(b"caf\xc3\xa9"), "café")
        self.assertEqual(output_of({"sum": 6}), '{"sum": 6}')
        self.assertEqual(output_of([1, 2]), "[1, 2]")

    def test_a_value_json_cannot_encode_is_a_failure(self) -> None:
        with self.assertRaises(HandlerError) as e:
            output_of(object())
        self.assertFalse(e.exception.retryable)


if __name__ == "__main__":
    unittest.main()
