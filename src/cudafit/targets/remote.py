"""Wheels on an index, read by HTTP range requests: the central directory, then only device code.

A torch wheel is 900 MB; what decides whether it runs on a GPU is a few fatbin headers in a few of
its members.  :class:`RemoteWheel` reads the zip's end record and central directory with one suffix
request, picks the members that may carry device code (by name, then by their first bytes), reads
them smallest first, each with one ranged request, stream-inflating into the fatbin reader, and can
stop inside a member as soon as the caller has its answer (:func:`cudafit.binary.inspect_stream`'s
``stop``).  Every byte received is counted (:class:`FetchStats`).

A server that ignores ``Range`` (answers 200 to the first ranged request) gets a full streamed
download instead, into a temporary file checked against the index's sha256 and removed afterwards.
Network failures, time-outs, truncated transfers and digest mismatches become :class:`RemoteError`
(a :class:`~cudafit.errors.TargetError`) with a one-line message; nothing here imports or runs what
it reads.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import os
import tempfile
import zipfile
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import IO, TYPE_CHECKING, Any, cast

from cudafit.errors import TargetError
from cudafit.model import JsonDict
from cudafit.targets.wheel_members import PrefixedStream

if TYPE_CHECKING:
    from cudafit.binary.facts import BinaryFacts
    from cudafit.binary.stream import StopWhen

__all__ = [
    "DEFAULT_TIMEOUT",
    "FetchStats",
    "MemberRead",
    "RemoteError",
    "RemoteFile",
    "RemoteWheel",
    "make_session",
]

#: Seconds to wait for a connection or for the next bytes of a response.
DEFAULT_TIMEOUT = 20.0
_TAIL = 256 * 1024  # the first request: end record + central directory of almost every wheel
_SKIP_FORWARD = 256 * 1024  # a forward seek shorter than this reads through the open response
_CHUNK = 1024 * 1024


class RemoteError(TargetError):
    """An index or a file on it could not be read: connection, time-out, HTTP status, truncation, digest."""

    code = "remote-failed"


class _RangesIgnored(Exception):
    """The server answered a ranged request with the whole file (internal: triggers the full download)."""


@dataclass
class FetchStats:
    """Bytes received from the network and requests made (mutable: one per candidate or per run)."""

    bytes_fetched: int = 0
    requests: int = 0
    full_download: bool = False
    #: Called with the running total about every 4 MB received (a progress line on a terminal).
    listener: Callable[[int], None] | None = None
    _reported: int = 0

    def received(self, n: int) -> None:
        """Count ``n`` bytes received."""
        self.bytes_fetched += n
        if self.listener is not None and self.bytes_fetched - self._reported >= 4 << 20:
            self._reported = self.bytes_fetched
            self.listener(self.bytes_fetched)


def make_session() -> Any:
    """A ``requests`` session that asks for identity encoding (range offsets are byte offsets)."""
    import requests

    from cudafit import __version__

    session = requests.Session()
    session.headers.update({"User-Agent": f"cudafit/{__version__}", "Accept-Encoding": "identity"})
    return session


def _network_errors() -> tuple[type[BaseException], ...]:
    import requests
    import urllib3

    return (requests.RequestException, urllib3.exceptions.HTTPError, OSError)


def describe_network_error(url: str, err: BaseException, timeout: float) -> str:
    """One line for a failed transfer, naming the URL and what went wrong (never a traceback)."""
    import requests
    import urllib3

    if isinstance(err, (requests.Timeout, urllib3.exceptions.TimeoutError, TimeoutError)):
        return f"timed out after {timeout:g} s reading {url}"
    if isinstance(err, (requests.ConnectionError, urllib3.exceptions.ProtocolError)):
        text = str(err)
        if "IncompleteRead" in text or "incomplete" in text.lower():
            return f"transfer truncated reading {url} ({_root_cause(err)})"
        return f"cannot connect to {url} ({_root_cause(err)})"
    return f"network error reading {url}: {type(err).__name__}: {str(err)[:160]}"


def _root_cause(err: BaseException) -> str:
    """The innermost cause of a wrapped network error, short: ``NameResolutionError``, ``connection refused``."""
    seen = err
    for _ in range(8):
        inner = getattr(seen, "reason", None) or seen.__cause__ or seen.__context__
        if inner is None or inner is seen:
            break
        seen = inner
    if isinstance(seen, OSError) and seen.strerror:
        return seen.strerror
    return type(seen).__name__


class RemoteFile(io.RawIOBase):
    """A read-only, seekable view of a file on an HTTP server, fetched by ``Range`` requests.

    Reads are served from the tail block fetched first, or from one open streaming response; a read
    elsewhere closes it and opens another at the new offset, up to :meth:`plan`'s end when the caller
    announced the span it is about to read (one request per zip member).
    """

    def __init__(self, url: str, session: Any, *, timeout: float = DEFAULT_TIMEOUT, stats: FetchStats) -> None:
        super().__init__()
        self.url = url
        self.session = session
        self.timeout = timeout
        self.stats = stats
        self.size = 0
        self.pos = 0
        self.tail_start = 0
        self.tail = b""
        self.failure: RemoteError | None = None
        self._resp: Any = None
        self._resp_pos = 0
        self._resp_end = 0
        self._plan_end: int | None = None
        self._open_tail()

    # -- requests
    def _get(self, start: int | None, end: int | None, *, suffix: int | None = None) -> Any:
        header = f"bytes=-{suffix}" if suffix is not None else f"bytes={start}-{end}"
        self.stats.requests += 1
        try:
            resp = self.session.get(self.url, headers={"Range": header}, stream=True, timeout=self.timeout)
        except _network_errors() as err:
            raise self._fail(describe_network_error(self.url, err, self.timeout)) from err
        if resp.status_code == 200:
            raise _RangesIgnored(resp)
        if resp.status_code != 206:
            resp.close()
            raise self._fail(f"HTTP {resp.status_code} for {self.url}")
        return resp

    def _fail(self, message: str) -> RemoteError:
        self.failure = RemoteError(message)
        return self.failure

    def _open_tail(self) -> None:
        resp = self._get(None, None, suffix=_TAIL)
        with resp:
            span = resp.headers.get("Content-Range", "")
            try:
                rng, total = span.split(" ", 1)[1].split("/")
                start = int(rng.split("-")[0])
                self.size = int(total)
            except (IndexError, ValueError) as err:
                raise self._fail(f"bad Content-Range {span!r} from {self.url}") from err
            self.tail = self._read_all(resp, self.size - start)
            self.tail_start = start
        cd_start = _central_directory_start(self.tail, self.tail_start)
        if cd_start is not None and 0 <= cd_start < self.tail_start:  # a large central directory: one more request
            with self._get(cd_start, self.tail_start - 1) as more:
                self.tail = self._read_all(more, self.tail_start - cd_start) + self.tail
            self.tail_start = cd_start

    def _read_all(self, resp: Any, expected: int) -> bytes:
        chunks: list[bytes] = []
        got = 0
        try:
            while got < expected:
                chunk = resp.raw.read(min(_CHUNK, expected - got))
                if not chunk:
                    break
                chunks.append(chunk)
                got += len(chunk)
        except _network_errors() as err:
            raise self._fail(describe_network_error(self.url, err, self.timeout)) from err
        finally:
            self.stats.received(got)
        if got < expected:
            raise self._fail(f"transfer truncated reading {self.url}: {got} of {expected} bytes")
        return b"".join(chunks)

    # -- io.RawIOBase
    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def tell(self) -> int:
        return self.pos

    def seek(self, offset: int, whence: int = 0) -> int:
        base = {0: 0, 1: self.pos, 2: self.size}[whence]
        self.pos = max(0, base + offset)
        return self.pos

    def plan(self, start: int, end: int) -> None:
        """The caller is about to read ``[start, end)``: fetch it with one request when it gets there."""
        self._plan_end = min(end, self.size)

    def readinto(self, b: Any) -> int:
        data = self.read(len(b))
        n = len(data)
        b[:n] = data
        return n

    def read(self, size: int = -1) -> bytes:
        if size is None or size < 0:
            size = self.size - self.pos
        size = min(size, self.size - self.pos)
        out = bytearray()
        while len(out) < size:
            if self.pos >= self.tail_start:
                off = self.pos - self.tail_start
                data = self.tail[off : off + size - len(out)]
                if not data:
                    break
            else:
                if self._resp is None or not self._resp_pos <= self.pos <= self._resp_pos + _SKIP_FORWARD:
                    self._open_at(self.pos)
                while self._resp_pos < self.pos:  # a short skip forward: read through the open response
                    self._stream_read(self.pos - self._resp_pos)
                want = min(size - len(out), self.tail_start - self.pos)
                data = self._stream_read(min(want, max(self._resp_end - self._resp_pos, 0)) or want)
            out += data
            self.pos += len(data)
        return bytes(out)

    def _open_at(self, pos: int) -> None:
        self._close_stream()
        end = self._plan_end if self._plan_end is not None and self._plan_end > pos else pos + _CHUNK
        end = min(end, self.tail_start if pos < self.tail_start else self.size)
        self._resp = self._get(pos, end - 1)
        self._resp_pos = pos
        self._resp_end = end

    def _stream_read(self, n: int) -> bytes:
        if n <= 0:
            return b""
        if self._resp_pos >= self._resp_end:
            self._open_at(self._resp_pos)
        try:
            data = self._resp.raw.read(min(n, self._resp_end - self._resp_pos))
        except _network_errors() as err:
            raise self._fail(describe_network_error(self.url, err, self.timeout)) from err
        if not data:
            raise self._fail(
                f"transfer truncated reading {self.url}: the response ended at byte {self._resp_pos} "
                f"of {self._resp_end}"
            )
        self.stats.received(len(data))
        self._resp_pos += len(data)
        return bytes(data)

    def _close_stream(self) -> None:
        if self._resp is not None:
            with contextlib.suppress(Exception):
                self._resp.close()
        self._resp = None

    def close(self) -> None:
        self._close_stream()
        super().close()


def _central_directory_start(tail: bytes, tail_start: int) -> int | None:
    """Where the zip's central directory starts, from the end records in ``tail`` (zip64 included)."""
    import struct

    eocd = tail.rfind(b"PK\x05\x06")
    if eocd < 0 or eocd + 22 > len(tail):
        return None
    (cd_offset,) = struct.unpack_from("<I", tail, eocd + 16)
    if cd_offset != 0xFFFFFFFF:
        return int(cd_offset)
    loc = eocd - 20
    if loc < 0 or tail[loc : loc + 4] != b"PK\x06\x07":
        return None
    (z64_abs,) = struct.unpack_from("<Q", tail, loc + 8)
    rec = z64_abs - tail_start
    if rec < 0 or rec + 56 > len(tail) or tail[rec : rec + 4] != b"PK\x06\x06":
        return None
    (cd64,) = struct.unpack_from("<Q", tail, rec + 48)
    return int(cd64)


def download_verified(
    url: str,
    session: Any,
    dest_dir: str,
    *,
    sha256: str | None,
    timeout: float,
    stats: FetchStats,
    response: Any = None,
) -> str:
    """Stream the whole file into a temporary file in ``dest_dir``, checking its length and sha256.

    Used where a server ignores ``Range``; the caller removes the file.  Memory stays at one chunk.
    """
    stats.full_download = True
    if response is None:
        stats.requests += 1
        try:
            response = session.get(url, stream=True, timeout=timeout)
        except _network_errors() as err:
            raise RemoteError(describe_network_error(url, err, timeout)) from err
    os.makedirs(dest_dir, exist_ok=True)
    fd, path = tempfile.mkstemp(dir=dest_dir, prefix=".download-", suffix=".whl")
    digest = hashlib.sha256()
    got = 0
    try:
        with response, os.fdopen(fd, "wb") as out:
            if response.status_code != 200:
                raise RemoteError(f"HTTP {response.status_code} for {url}")
            expected = response.headers.get("Content-Length")
            try:
                for chunk in response.iter_content(_CHUNK):
                    out.write(chunk)
                    digest.update(chunk)
                    got += len(chunk)
                    stats.received(len(chunk))
            except _network_errors() as err:
                raise RemoteError(describe_network_error(url, err, timeout)) from err
            if expected is not None and expected.isdigit() and got != int(expected):
                raise RemoteError(f"transfer truncated reading {url}: {got} of {expected} bytes")
        if sha256 and digest.hexdigest() != sha256.lower():
            raise RemoteError(
                f"sha256 mismatch for {url}: the index says {sha256[:16]}…, the file is {digest.hexdigest()[:16]}…"
            )
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(path)
        raise
    return path


@dataclass(frozen=True)
class MemberRead:
    """What reading one member cost and gave: its facts, whether it was read to the end, bytes fetched."""

    name: str
    file_size: int
    compress_size: int
    crc: int
    facts: BinaryFacts
    complete: bool
    bytes_fetched: int
    cached: bool = False
    #: A copy of the member on disk for the rest of the run (members read whole, up to the in-memory
    #: limit): the engine reads kernel names and embedded fatbins from it, as for an installed file.
    local: str | None = None

    @property
    def module_count(self) -> int:
        """Fatbins read (a slim read kept by a cached verdict has only their count, in its notes)."""
        return len(self.facts.modules) if self.facts.modules or not self.facts.notes else _count(self.facts)

    def to_dict(self) -> JsonDict:
        """JSON form (``cudafit.find/1`` ``members``): the sizes, the bytes it cost, how far it was read."""
        return {
            "name": self.name,
            "size": self.file_size,
            "compressed_size": self.compress_size,
            "bytes_fetched": self.bytes_fetched,
            "complete": self.complete,
            "cached": self.cached,
            "modules": self.module_count,
            "error": self.facts.error,
        }

    def slim(self) -> MemberRead:
        """The same read without its modules (a module count in the notes): what a cached verdict keeps."""
        from dataclasses import replace

        from cudafit.binary.facts import BinaryFacts

        facts = BinaryFacts(
            path=self.facts.path,
            format=self.facts.format,
            size=self.facts.size,
            error=self.facts.error,
            error_code=self.facts.error_code,
            notes=(f"{_SLIM}{len(self.facts.modules)}",),
        )
        return replace(self, facts=facts, local=None)


_SLIM = "modules read: "


def _count(facts: BinaryFacts) -> int:
    note = next((n for n in facts.notes if n.startswith(_SLIM)), None)
    return int(note[len(_SLIM) :]) if note else 0


@dataclass
class RemoteWheel:
    """A wheel on an index: its central directory, then its device-code members on demand.

    ``open()`` costs one request (the tail); :meth:`device_members` lists the members to read, smallest
    first; :meth:`read_member` inflates one into the fatbin reader.  Where the server ignores ranges,
    the whole wheel is downloaded once (sha256-checked) and read locally.
    """

    url: str
    session: Any
    sha256: str | None = None
    timeout: float = DEFAULT_TIMEOUT
    scratch_dir: str = field(default_factory=tempfile.gettempdir)
    stats: FetchStats = field(default_factory=FetchStats)
    _zip: zipfile.ZipFile | None = None
    _remote: RemoteFile | None = None
    _local: str | None = None

    def open(self) -> RemoteWheel:
        """Read the central directory (ranged), or download the wheel where ranges are ignored."""
        try:
            self._remote = RemoteFile(self.url, self.session, timeout=self.timeout, stats=self.stats)
            source: Any = self._remote
        except _RangesIgnored as ignored:
            self._local = download_verified(
                self.url,
                self.session,
                self.scratch_dir,
                sha256=self.sha256,
                timeout=self.timeout,
                stats=self.stats,
                response=ignored.args[0],
            )
            source = self._local
        try:
            self._zip = zipfile.ZipFile(source)
        except (zipfile.BadZipFile, OSError, ValueError, EOFError) as err:
            if self._remote is not None and self._remote.failure is not None:
                raise self._remote.failure from err
            self.close()
            raise RemoteError(f"not a readable wheel: {self.url}: {err}") from err
        return self

    def close(self) -> None:
        """Close the connection and remove a downloaded copy."""
        if self._zip is not None:
            self._zip.close()
        if self._remote is not None:
            self._remote.close()
        if self._local is not None:
            with contextlib.suppress(OSError):
                os.unlink(self._local)
            self._local = None

    def __enter__(self) -> RemoteWheel:
        return self.open()

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def zip(self) -> zipfile.ZipFile:
        """The opened zip (after :meth:`open`)."""
        if self._zip is None:
            msg = "RemoteWheel.open() first"
            raise RuntimeError(msg)
        return self._zip

    @property
    def size(self) -> int:
        """The wheel's size in bytes."""
        if self._remote is not None:
            return self._remote.size
        return os.path.getsize(self._local) if self._local else 0

    def device_members(self) -> list[zipfile.ZipInfo]:
        """Members that may carry device code, smallest (compressed) first.

        By name (``.so``, ``.cubin``, ``.fatbin``, ``.ptx``, ...); extension-less files are included only
        in ``bin/``-like places, where a CUDA program may sit, and are then sniffed by their first bytes.
        """
        from cudafit.targets.candidate_files import is_candidate_name

        out = []
        for info in self.zip.infolist():
            if info.is_dir() or ".dist-info/" in info.filename or info.file_size == 0:
                continue
            verdict = is_candidate_name(info.filename)
            if verdict is True or (verdict is None and "/bin/" in f"/{info.filename}"):
                out.append(info)
        return sorted(out, key=lambda i: (i.compress_size, i.filename))

    def read_text(self, suffix: str, limit: int = 1 << 20) -> bytes | None:
        """The first member whose name ends with ``suffix`` (``.dist-info/METADATA``), up to ``limit`` bytes."""
        info = next((i for i in self.zip.infolist() if i.filename.endswith(suffix)), None)
        if info is None:
            return None
        self._plan(info)
        data: bytes = self._guarded(lambda: self._read_member_bytes(info, limit))
        return data

    def _read_member_bytes(self, info: zipfile.ZipInfo, limit: int) -> bytes:
        with self.zip.open(info) as fh:
            return fh.read(limit)

    def _plan(self, info: zipfile.ZipInfo) -> None:
        if self._remote is not None:
            # local header (30 bytes + name + extra, re-read from the file) + data + a data descriptor
            self._remote.plan(info.header_offset, info.header_offset + 30 + 1024 + info.compress_size + 16)

    def _guarded(self, read: Callable[[], Any]) -> Any:
        try:
            return read()
        except RemoteError:
            raise
        except (zipfile.BadZipFile, OSError, ValueError, EOFError, RuntimeError, NotImplementedError) as err:
            if self._remote is not None and self._remote.failure is not None:
                raise self._remote.failure from err
            raise RemoteError(f"unreadable wheel member in {self.url}: {err}") from err

    def read_member(
        self, info: zipfile.ZipInfo, display: str, *, stop: StopWhen | None = None, keep_in: str | None = None
    ) -> MemberRead:
        """Inflate one member into the fatbin reader; ``stop`` may end it early (see ``inspect_stream``).

        ``keep_in``: a directory where a member read whole in memory is also written (``MemberRead.local``).
        """
        from cudafit.binary import inspect_stream, sniff
        from cudafit.binary.reader import STREAM_IN_MEMORY_LIMIT
        from cudafit.binary.stream import EARLY_STOP_NOTE
        from cudafit.targets.candidate_files import is_candidate_name

        before = self.stats.bytes_fetched
        self._plan(info)
        keep: list[str] = []
        if keep_in is not None:
            # One folder per member, the member's own file name inside: the engine matches DT_NEEDED entries
            # (libtorch_cuda_linalg.so -> libtorch_cuda.so) by file name.
            folder = os.path.join(keep_in, str(len(os.listdir(keep_in))))
            os.makedirs(folder)
            keep.append(os.path.join(folder, os.path.basename(info.filename)))

        def read() -> BinaryFacts:
            with self.zip.open(info) as fh:
                stream: IO[bytes] = fh
                if is_candidate_name(info.filename) is None:
                    head = fh.read(64)
                    if sniff(head, info.filename) is None:
                        from cudafit.binary.facts import BinaryFacts, FileFormat

                        return BinaryFacts(path=display, format=FileFormat.NOT_CUDA, size=info.file_size)
                    stream = cast("IO[bytes]", PrefixedStream(head, fh))
                if stop is not None and info.file_size <= STREAM_IN_MEMORY_LIMIT:
                    return _scan_small(stream, display, info.file_size, stop, keep)
                if keep:
                    return _scan_large(stream, display, info.file_size, stop, keep[0])
                return inspect_stream(stream, display, info.file_size, stop=stop)

        facts: BinaryFacts = self._guarded(read)
        if self._remote is not None and self._remote.failure is not None:
            raise self._remote.failure  # inspect_stream turned the network error into facts: not a member problem
        complete = not any(n.startswith(EARLY_STOP_NOTE) for n in facts.notes)
        return MemberRead(
            name=info.filename,
            file_size=info.file_size,
            compress_size=info.compress_size,
            crc=info.CRC,
            facts=facts,
            complete=complete,
            bytes_fetched=self.stats.bytes_fetched - before,
            local=keep[0] if keep and complete and os.path.isfile(keep[0]) else None,
        )


def _scan_small(stream: IO[bytes], display: str, size: int, stop: StopWhen, keep: Sequence[str] = ()) -> BinaryFacts:
    """A member small enough to parse in memory, read so that ``stop`` can still end the download.

    The bytes go through the stream locator (which calls ``stop`` after each fatbin) and are kept; when it
    reaches the end without stopping, the kept bytes are parsed like a file (ELF sections, DT_NEEDED,
    embedded fatbins), so a complete read has the same facts as ``check`` gets from the wheel.
    """
    from cudafit.binary import inspect_bytes
    from cudafit.binary.stream import EARLY_STOP_NOTE, scan_stream

    tee = _Tee(stream)
    facts = scan_stream(cast("IO[bytes]", tee), display, tee.read(4096), stop=stop)
    if any(n.startswith(EARLY_STOP_NOTE) for n in facts.notes):
        return facts
    while tee.read(1 << 20):  # the locator gives up early on some inputs (a bare cubin): keep the rest too
        pass
    for path in keep:
        with contextlib.suppress(OSError), open(path, "wb") as out:
            out.write(tee.kept)
    return inspect_bytes(tee.kept, display)  # no copy: up to 64 MB


def _scan_large(stream: IO[bytes], display: str, size: int, stop: StopWhen | None, path: str) -> BinaryFacts:
    """A large member streamed through the locator (memory stays bounded) and written to ``path`` as it goes.

    Read to the end, the copy on disk is parsed like an installed file (ELF sections, DT_NEEDED, the fatbins
    a library embeds to load itself), so the verdict has what ``check`` would see; stopped early, the copy
    is removed and the located fatbins are the facts.
    """
    from cudafit.binary import inspect_path
    from cudafit.binary.stream import EARLY_STOP_NOTE, scan_stream

    try:
        out = open(path, "wb")  # noqa: SIM115 - closed below, before the copy is parsed
    except OSError:
        return scan_stream(stream, display, stream.read(4096), stop=stop)
    with out:
        tee = _Tee(stream, out)
        facts = scan_stream(cast("IO[bytes]", tee), display, tee.read(4096), stop=stop)
        stopped = any(n.startswith(EARLY_STOP_NOTE) for n in facts.notes)
        while not stopped and tee.read(1 << 20):
            pass
    if stopped or os.path.getsize(path) != size:  # (a locator error, as for a bare cubin: the copy decides)
        with contextlib.suppress(OSError):
            os.unlink(path)
        return facts
    return inspect_path(path, name=display, gate=True)  # a download has no neighbours: imports checked


class _Tee(io.RawIOBase):
    """A stream that keeps a copy of what was read from it: in memory (members up to the in-memory limit)
    or, given ``sink``, in a file."""

    def __init__(self, inner: IO[bytes], sink: IO[bytes] | None = None) -> None:
        super().__init__()
        self.inner = inner
        self.sink = sink
        self.kept = bytearray()

    def readable(self) -> bool:
        return True

    def read(self, size: int = -1) -> bytes:
        data = self.inner.read(size)
        if self.sink is not None:
            self.sink.write(data)
        else:
            self.kept += data
        return bytes(data)


def iter_wheel_items(wheel: RemoteWheel, package: str | None, version: str | None) -> Iterator[Any]:
    """Every device-code member of an opened remote wheel as a scan item, smallest first (read in full)."""
    from cudafit.targets.interface import ScanItem

    for info in wheel.device_members():
        read = wheel.read_member(info, f"{os.path.basename(wheel.url.split('#')[0])}!{info.filename}")
        yield ScanItem(package=package, version=version, path=read.facts.path, facts=read.facts)
