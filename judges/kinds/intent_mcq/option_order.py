"""Option orders of imported multiple-choice runs: a model shown the options shuffled answers by
the positions it saw, and ``option_order`` (the item's option number at each shown position) maps
its answer back to the item's own numbering, so a shuffled run is scored against the right options.
"""

from __future__ import annotations

from annotation.errors import FieldError

#: The item payload's fields these functions read.
PAYLOAD_KEYS = ("options",)

NOT_A_PERMUTATION = "must list each of the item's option numbers 0-{last} once, in the order they were shown"


def order_problems(order: object, payload: dict) -> list[FieldError]:
    """Why ``order`` is not an order of this item's options (empty when it is one)."""
    count = len(payload["options"])
    valid = (
        isinstance(order, list)
        and all(isinstance(n, int) and not isinstance(n, bool) for n in order)
        and sorted(order) == list(range(count))
    )
    return [] if valid else [FieldError("option_order", NOT_A_PERMUTATION.format(last=count - 1))]


def to_item_order(value: dict, order: list[int]) -> dict:
    """An answer by shown positions, in the item's option numbers."""
    return {**value, "chosen": sorted(order[position] for position in value["chosen"])}


def to_shown_order(value: dict, order: list[int]) -> dict:
    """An answer in the item's option numbers, by the positions the options were shown at."""
    position = {number: shown for shown, number in enumerate(order)}
    return {**value, "chosen": sorted(position[number] for number in value["chosen"])}
