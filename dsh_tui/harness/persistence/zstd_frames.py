"""Reading upstream's `session.jsonl.zstd`: concatenated, checksummed Zstandard frames.

Upstream writes the header line as frame 1 and every durable append batch as one
more independent frame, so a crash can only ever tear the *last* frame. To find
where the complete frames end without decompressing everything (and to notice a
torn final frame), the frame headers and 3-byte block headers are walked here
directly; the `zstandard` package then decodes and checksums each complete
frame, and decodes whatever it can of a torn one.
"""

from __future__ import annotations

from dataclasses import dataclass

import zstandard

ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"  # 0xFD2FB528, little-endian


class ZstdStructureError(ValueError):
    """Bytes that cannot be a (possibly torn) sequence of standard Zstandard frames."""


@dataclass(frozen=True, slots=True)
class FrameScan:
    """Byte ranges `[start, end)` of complete frames, and where a torn final frame begins."""

    frames: list[tuple[int, int]]
    torn_start: int | None = None
    error: str | None = None  # only when scanning leniently: why scanning stopped early


def scan_frames(buf: bytes, max_frames: int | None = None, *, strict: bool = True) -> FrameScan:
    """Locate complete frames; EOF inside the last frame is reported, not raised.

    Skippable frames, reserved header bits and reserved block types are
    structural corruption (upstream never writes them): they raise, or with
    `strict=False` end the scan and are reported in `error` so a viewer can
    still show every frame before them.
    """
    try:
        return _scan(buf, max_frames)
    except _Stop as stop:
        if strict:
            raise ZstdStructureError(str(stop)) from None
        return FrameScan(stop.frames, None, str(stop))


class _Stop(Exception):
    def __init__(self, message: str, frames: list[tuple[int, int]]) -> None:
        super().__init__(message)
        self.frames = frames


def _scan(buf: bytes, max_frames: int | None) -> FrameScan:
    frames: list[tuple[int, int]] = []
    size = len(buf)
    offset = 0
    while offset < size:
        start = offset
        if size - offset < 4:
            return FrameScan(frames, start)
        if buf[offset:offset + 4] != ZSTD_MAGIC:
            raise _Stop(f"invalid Zstandard frame magic at byte {offset}", frames)
        offset += 4
        if offset == size:
            return FrameScan(frames, start)
        descriptor = buf[offset]
        offset += 1
        if descriptor & 0x18:
            raise _Stop(f"reserved Zstandard frame-header bit at byte {offset - 1}", frames)
        content_size_flag = descriptor >> 6
        single_segment = bool(descriptor & 0x20)
        has_checksum = bool(descriptor & 0x04)
        dictionary_flag = descriptor & 0x03
        dictionary_bytes = 4 if dictionary_flag == 3 else dictionary_flag
        if content_size_flag == 0:
            content_size_bytes = 1 if single_segment else 0
        else:
            content_size_bytes = 1 << content_size_flag
        header_rest = (0 if single_segment else 1) + dictionary_bytes + content_size_bytes
        if size - offset < header_rest:
            return FrameScan(frames, start)
        offset += header_rest
        while True:
            if size - offset < 3:
                return FrameScan(frames, start)
            block_header = buf[offset] | (buf[offset + 1] << 8) | (buf[offset + 2] << 16)
            offset += 3
            last_block = block_header & 1
            block_type = (block_header >> 1) & 0x03
            if block_type == 3:
                raise _Stop(f"reserved Zstandard block type at byte {offset - 3}", frames)
            payload = 1 if block_type == 1 else block_header >> 3  # RLE blocks carry one byte
            if size - offset < payload:
                return FrameScan(frames, start)
            offset += payload
            if last_block:
                break
        if has_checksum:
            if size - offset < 4:
                return FrameScan(frames, start)
            offset += 4
        frames.append((start, offset))
        if max_frames is not None and len(frames) >= max_frames:
            break
    return FrameScan(frames)


def decode_frame(frame: bytes) -> bytes:
    """Decompress one complete frame, verifying its content checksum (raises ZstdError)."""
    decoder = zstandard.ZstdDecompressor().decompressobj()
    out = decoder.decompress(frame)
    if not decoder.eof:
        raise zstandard.ZstdError("Zstandard frame ended early")
    return out


def decode_torn_prefix(partial: bytes) -> bytes:
    """As much plaintext as a structurally incomplete final frame yields (b"" if none)."""
    try:
        return zstandard.ZstdDecompressor().decompressobj().decompress(partial)
    except zstandard.ZstdError:
        return b""


def encode_frame(plaintext: bytes) -> bytes:
    """One independent, checksummed frame, as upstream appends per durable batch."""
    return zstandard.ZstdCompressor(write_checksum=True).compress(plaintext)
