"""Options the agreement commands share."""

import argparse

FORMATS = ("json", "md", "latex", "csv")


def non_negative_int(text: str) -> int:
    try:
        number = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
    if number < 0:
        raise argparse.ArgumentTypeError(f"{number} is negative")
    return number
