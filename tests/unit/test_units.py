import pytest

from xlacli.units import format_bytes, format_seconds


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (None, "-"),
        (0, "0 B"),
        (1023, "1023 B"),
        (1024, "1.00 KiB"),
        (1_036_288, "1012 KiB"),
        (1_048_576, "1.00 MiB"),
        (3_500_000_000, "3.26 GiB"),
    ],
)
def test_bytes(value, text):
    assert format_bytes(value) == text


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (None, "-"),
        (0.0009996, "1000 µs"),
        (0.0123, "12.3 ms"),
        (0.9999, "1000 ms"),
        (1.5, "1.50 s"),
        (250.0, "250 s"),
        (2.5e-6, "2.50 µs"),
    ],
)
def test_seconds(value, text):
    assert format_seconds(value) == text
