"""One registry type for every extension axis: task kinds, judge backends, run types, generation
steps, prompts, paper evaluations, report builders, item panels and filters, setup steps.

A registry maps a name to one object. It is filled either by ``register`` calls (an app's
``AppConfig.ready()``, a class decorator) or, lazily on first read, by a ``load`` function that
finds its entries where they live (settings, the kinds' folders). Reads never see a half-filled
registry: the load runs once, under a lock.

A registry loaded from a setting names it (``setting=``) and loads again when a test changes it
(pytest-django's ``settings`` fixture, ``override_settings``). A registry derived from another
(``follows=``: the prompts, steps and evaluations found in the kinds' folders follow the kinds)
loads again whenever that one changes.

Tests
-----
A test that adds an entry (a fixture kind, a fake backend, an extra panel) uses
``with registry.registered(name, obj):``, which puts the registry back as it was on leaving.
``registry.reset_for_tests()`` forgets every entry, so the next read loads afresh: for a test that
changed what ``load`` reads some other way. A registry filled only by ``register`` calls (run
types, panels) is empty after a reset until they run again, so tests of those use ``registered``.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from typing import Any, Generic, TypeVar

from django.core.signals import setting_changed

T = TypeVar("T")

__all__ = ("DUPLICATE_ENTRY", "UNKNOWN_ENTRY", "Registry")

UNKNOWN_ENTRY = "unknown {what} {name!r} (known: {known})"
DUPLICATE_ENTRY = "{what} {name!r} is registered twice"


class Registry(Generic[T]):
    """Objects of one sort by name, in registration order (loaded entries first).

    Parameters
    ----------
    what : str
        What an entry is, in words ("task kind"), for error messages.
    load : callable, optional
        ``load() -> iterable of (name, object)``, run on the first read (and after a change).
    replaces : bool
        Whether registering a name again replaces its entry (a reloaded app config stays one entry)
        instead of raising ValueError.
    setting : str, optional
        The Django setting ``load`` reads: changing it (in a test) makes the next read load again.
    follows : Registry, optional
        The registry ``load`` reads: any change to it makes the next read load again.
    """

    def __init__(
        self,
        what: str,
        *,
        load: Callable[[], Iterable[tuple[str, T]]] | None = None,
        replaces: bool = False,
        setting: str | None = None,
        follows: Registry[Any] | None = None,
    ) -> None:
        self.what = what
        self._load = load
        self._replaces = replaces
        self._follows = follows
        self._loaded: dict[str, T] | None = None if load else {}
        self._loaded_at: int | None = None  # the followed registry's version when loaded
        self._added: dict[str, T] = {}
        self._entries: dict[str, T] | None = None
        #: Bumped on every change, so registries that follow this one know to load again.
        self.version = 0
        self._lock = threading.RLock()
        if setting is not None:
            self._setting = setting
            setting_changed.connect(self._on_setting_changed, weak=False)

    def _on_setting_changed(self, *, setting: str, **_: Any) -> None:
        if setting == self._setting:
            self.reset_for_tests()

    def _changed(self) -> None:
        self._entries = None
        self.version += 1

    def _filled(self) -> dict[str, T]:
        followed = self._follows.version if self._follows is not None else None
        entries = self._entries
        if entries is not None and (self._load is None or self._loaded_at == followed):
            return entries
        with self._lock:
            if self._load is not None and (self._loaded is None or self._loaded_at != followed):
                found: dict[str, T] = {}
                for name, obj in self._load():
                    if name in found:
                        raise ValueError(DUPLICATE_ENTRY.format(what=self.what, name=name))
                    found[name] = obj
                # What the load read of the followed registry (loading it, if it had not been).
                self._loaded = found
                self._loaded_at = self._follows.version if self._follows is not None else None
            assert self._loaded is not None
            self._entries = entries = {**self._loaded, **self._added}
            return entries

    def register(self, name: str, obj: T) -> T:
        """Add ``obj`` as ``name``; returns it (so a decorator can return what it registers)."""
        with self._lock:
            if name in self._filled() and not self._replaces:
                raise ValueError(DUPLICATE_ENTRY.format(what=self.what, name=name))
            self._added[name] = obj
            self._changed()
        return obj

    def get(self, name: str) -> T:
        """The entry called ``name``; KeyError naming the known ones otherwise."""
        entries = self._filled()
        try:
            return entries[name]
        except KeyError:
            raise KeyError(UNKNOWN_ENTRY.format(what=self.what, name=name, known=", ".join(entries))) from None

    def __contains__(self, name: object) -> bool:
        return name in self._filled()

    def __len__(self) -> int:
        return len(self._filled())

    def names(self) -> list[str]:
        return list(self._filled())

    def all(self) -> list[T]:
        return list(self._filled().values())

    def items(self) -> list[tuple[str, T]]:
        return list(self._filled().items())

    def reset_for_tests(self) -> None:
        """Forget every entry; a registry with ``load`` fills again from it on the next read."""
        with self._lock:
            self._loaded = None if self._load else {}
            self._added = {}
            self._changed()

    @contextmanager
    def registered(self, name: str, obj: T) -> Iterator[T]:
        """Register ``obj`` as ``name`` for the ``with`` block (replacing any entry of that name),
        then put the registry back as it was before the block."""
        with self._lock:
            before = dict(self._added)
            self._added[name] = obj
            self._changed()
        try:
            yield obj
        finally:
            with self._lock:
                self._added = before
                self._changed()
