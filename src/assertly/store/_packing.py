"""How the SQLite run store writes its trial records compressed, and reads them back.

Mixed into `RunStore` (the format is `_codec`'s). A writer starts with the store's latest
dictionary; once it has saved `DICTIONARY_AFTER` records it trains one on them, stores it,
and compresses the rest of its run with it.
"""

from __future__ import annotations

import sqlite3
from typing import TYPE_CHECKING

from ._codec import DICTIONARY_AFTER, SAMPLE_RECORDS, Compressor, Decompressors, train_dictionary

__all__ = ["PackedRecords"]


class PackedRecords:
    """Compressed trial records in a SQLite store (mixed into `RunStore`)."""

    _db: sqlite3.Connection

    if TYPE_CHECKING:  # given by RunStore

        def flush(self) -> None: ...

        def _read_failed(self, error: sqlite3.Error) -> Exception: ...

        def _write_failed(self, error: sqlite3.Error) -> Exception: ...

    def _start_packing(self) -> None:
        self._compressor: Compressor | None = None  # made on the first trial saved
        self._samples: list[bytes] | None = []  # the first records saved, for a dictionary
        self._saved = 0
        self._decompressors = Decompressors(self._dictionary)

    def _compress(self, text: bytes) -> bytes:
        """A trial's compact text as stored: compressed with this writer's dictionary.

        A writer starts with the store's latest dictionary (none in a new store). Once it has
        saved `DICTIONARY_AFTER` records it adds one trained on its first records, which then
        compresses the rest of its run: a short run adds no dictionary of its own.
        """
        compressor = self._compressor
        if compressor is None:
            try:
                found = self._db.execute(
                    "SELECT id, data FROM dictionaries ORDER BY id DESC LIMIT 1"
                ).fetchone()
            except sqlite3.Error as error:
                raise self._read_failed(error) from None
            compressor = self._compressor = Compressor(*found) if found else Compressor()
        samples = self._samples
        if samples is not None:
            if len(samples) < SAMPLE_RECORDS:
                samples.append(text)
            self._saved += 1
            if self._saved >= DICTIONARY_AFTER:
                self._samples = None
                compressor = self._compressor = self._add_dictionary(train_dictionary(samples))
        return compressor.compress(text)

    def _add_dictionary(self, data: bytes) -> Compressor:
        """Store a new dictionary (committed at once, before any record that uses it)."""
        self.flush()
        try:
            cursor = self._db.execute("INSERT INTO dictionaries (data) VALUES (?)", (data,))
        except sqlite3.Error as error:
            raise self._write_failed(error) from None
        number = int(cursor.lastrowid or 0)
        self._decompressors.add(number, data)
        return Compressor(number, data)

    def _dictionary(self, number: int) -> bytes:
        row = self._db.execute("SELECT data FROM dictionaries WHERE id = ?", (number,)).fetchone()
        if row is None:
            raise ValueError(f"its dictionary {number} is missing")
        return bytes(row[0])

    def _decompress(self, blob: bytes) -> bytes:
        return self._decompressors.decompress(blob)

    def record_text(self, value: str | bytes | None) -> str | None:
        """A stored record's JSON text (compressed or not): what SQL searches read.

        Registered as the SQL function ``assertly_text`` by the viewer.
        """
        if not isinstance(value, bytes):
            return value
        try:
            return self._decompress(value).decode("utf-8", "replace")
        except ValueError:
            return ""

    def _text_bytes(self, run_id: str) -> int:
        """The size of a run's trial records as JSON text (what reading them all parses).

        Compressed records count at the ratio of a sample of them (decompressing all would
        cost what this spares its callers).
        """
        total, packed = self._db.execute(
            "SELECT TOTAL(LENGTH(CAST(record AS BLOB))), "
            "TOTAL(CASE WHEN typeof(record) = 'blob' THEN LENGTH(record) END) "
            "FROM trials WHERE run_id = ?",
            (run_id,),
        ).fetchone()
        if not packed:
            return int(total)
        sample = [
            bytes(blob)
            for (blob,) in self._db.execute(
                "SELECT record FROM trials WHERE run_id = ? AND typeof(record) = 'blob' LIMIT 64",
                (run_id,),
            )
        ]
        ratio = sum(len(self.record_text(blob) or "") for blob in sample) / sum(map(len, sample))
        return int(total - packed + packed * ratio)
