"""Container images without a Docker engine: ``docker save`` tarballs and OCI image layouts.

Layers (tar, tar+gzip, tar+zstd) are streamed from the top layer down, so each path is read from
the layer that wins in the final file system: a path seen in a higher layer shadows lower ones,
and whiteouts (``.wh.NAME`` deletes NAME, ``.wh..wh..opq`` makes a directory opaque) hide what
lies below (OCI image spec, "Representing Changes", https://github.com/opencontainers/image-spec/blob/main/layer.md).
Files are then mapped to the image's Python distributions through their ``*.dist-info/RECORD``.
Nothing from the image is executed.
"""

from __future__ import annotations

import contextlib
import io
import lzma
import os
import posixpath
import tarfile
import zlib
from collections.abc import Callable, Collection, Iterator
from dataclasses import dataclass
from typing import IO, Any, cast

import zstandard

from cudafit.binary import inspect_stream, sniff
from cudafit.targets.candidate_files import is_candidate_name
from cudafit.targets.interface import PathTarget, ScanItem, error_item
from cudafit.targets.runtime import python_modules, runtime_compiled_kind
from cudafit.targets.wheel_members import PrefixedStream

__all__ = ["ImageTarget", "extract_members", "looks_like_image"]

_MAX_MANIFEST = 16 * 1024 * 1024
_WHITEOUT = ".wh."
_OPAQUE = ".wh..wh..opq"


def looks_like_image(path: str) -> bool:
    """A docker-save tarball, an OCI layout tarball, or an OCI layout directory."""
    if os.path.isdir(path):
        return os.path.isfile(os.path.join(path, "oci-layout")) and os.path.isfile(os.path.join(path, "index.json"))
    try:
        with tarfile.open(path, "r:") as tf:
            names = set(tf.getnames()[:64])
    except (OSError, tarfile.TarError):
        return False
    return "manifest.json" in names or "oci-layout" in names or "index.json" in names


@dataclass
class _Dist:
    info_dir: str  # image-relative path of the *.dist-info directory
    root: str  # the site-packages directory, image-relative
    name: str = ""
    version: str = ""
    files: list[str] | None = None


class _Source:
    """Read blobs and manifests from a tarball or a layout directory."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.tar: tarfile.TarFile | None = None if os.path.isdir(path) else tarfile.open(path, "r:")  # noqa: SIM115 - closed by close()

    def close(self) -> None:
        if self.tar is not None:
            self.tar.close()

    def open(self, name: str) -> IO[bytes]:
        name = name.lstrip("./")
        if self.tar is None:
            return open(os.path.join(self.path, name), "rb")
        member = self.tar.extractfile(name)
        if member is None:
            raise OSError(f"{name} is not a regular file in the image")
        return member

    def json(self, name: str) -> Any:
        """A manifest or index, decoded strictly (a wrong type or a nesting bomb is a DocumentError)."""
        from cudafit.documents import DocumentError, decode_json

        with self.open(name) as fh:
            data = fh.read(_MAX_MANIFEST + 1)
        if len(data) > _MAX_MANIFEST:
            raise DocumentError(name, f"larger than {_MAX_MANIFEST} bytes: not an image manifest")
        return decode_json(data, name)

    def has(self, name: str) -> bool:
        if self.tar is None:
            return os.path.exists(os.path.join(self.path, name))
        try:
            self.tar.getmember(name)
        except KeyError:
            return False
        return True


def _layers(src: _Source) -> list[str]:
    """Layer blob names, bottom layer first (manifests checked by :mod:`cudafit.documents`)."""
    from cudafit.documents import DockerManifest, OciIndex, OciManifest, convert

    if src.has("manifest.json"):
        images = convert(src.json("manifest.json"), DockerManifest, "manifest.json")
        return list(images[0].Layers)
    index = convert(src.json("index.json"), OciIndex, "index.json")
    name = _blob(index.manifests[0].digest)
    doc = convert(src.json(name), OciManifest, name)
    for _ in range(4):  # an index of platforms (linux/amd64 first in practice), possibly nested
        if doc.layers is not None or not doc.manifests:
            break
        name = _blob(doc.manifests[0].digest)
        doc = convert(src.json(name), OciManifest, name)
    if doc.layers is None:
        from cudafit.documents import DocumentError

        raise DocumentError(name, "an OCI manifest without layers")
    return [_blob(layer.digest) for layer in doc.layers]


def _blob(digest: str) -> str:
    """``sha256:abc`` -> ``blobs/sha256/abc`` (the digest's grammar is checked: no path can escape)."""
    return "blobs/" + digest.replace(":", "/", 1)


def _open_layer(raw: IO[bytes]) -> tarfile.TarFile:
    """A streaming tar reader for a plain, gzip or zstd layer."""
    buffered: Any = raw if hasattr(raw, "peek") else io.BufferedReader(raw, 1 << 16)
    magic = buffered.peek(4)[:4]
    if magic == b"\x28\xb5\x2f\xfd":
        return tarfile.open(fileobj=zstandard.ZstdDecompressor().stream_reader(buffered), mode="r|")
    return tarfile.open(fileobj=buffered, mode="r|*")


class _Reopened:
    """A layer member opened again, with the layer it lives in (closed together)."""

    def __init__(self, fh: IO[bytes], stack: contextlib.ExitStack) -> None:
        self.fh, self.stack = fh, stack

    def read(self, n: int = -1) -> bytes:
        return self.fh.read(n)

    def __enter__(self) -> _Reopened:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stack.close()


def _member_opener(src: _Source, layer: str, name: str) -> Callable[[], IO[bytes]]:
    """Opens a layer member again from its start (a large library's symbol table, read again when needed:
    the layer is read up to the member a second time)."""

    def reopen() -> IO[bytes]:
        stack = contextlib.ExitStack()
        try:
            tf = stack.enter_context(_open_layer(stack.enter_context(src.open(layer))))
            for m in tf:
                if m.name == name:
                    fh = tf.extractfile(m)
                    if fh is not None:
                        return cast("IO[bytes]", _Reopened(fh, stack))
        except BaseException:
            stack.close()
            raise
        stack.close()
        raise OSError(f"{name} not found again in {layer}")

    return reopen


#: What a corrupt, truncated or missing layer raises while it is streamed (each decompressor has its own).
_LAYER_ERRORS: tuple[type[BaseException], ...] = (
    OSError,
    EOFError,
    KeyError,  # a manifest naming a layer that is not in the tarball
    tarfile.TarError,
    ValueError,
    RuntimeError,
    zlib.error,
    lzma.LZMAError,
    zstandard.ZstdError,
)


def _reason(err: BaseException) -> str:
    if isinstance(err, KeyError):
        return f"not in the image: {err.args[0] if err.args else err}"
    return str(err) or type(err).__name__


def _norm(name: str) -> str:
    return posixpath.normpath("/" + name).lstrip("/")


def _whiteout(path: str, hidden: set[str]) -> bool:
    """Whether ``path`` is an OCI whiteout entry (a deleted file, or an opaque directory): what it hides from
    lower layers is added to ``hidden``."""
    base = posixpath.basename(path)
    parent = posixpath.dirname(path)
    if base == _OPAQUE:
        hidden.add(parent)
        return True
    if base.startswith(_WHITEOUT):
        hidden.add(posixpath.join(parent, base[len(_WHITEOUT) :]))
        return True
    return False


def _masked(path: str, seen: set[str], hidden: set[str]) -> bool:
    """Whether a higher layer already decided ``path`` (replaced it, deleted it or hid its directory)."""
    if path in seen:
        return True
    parts = path.split("/")
    return any("/".join(parts[:i]) in hidden for i in range(1, len(parts) + 1))


class ImageTarget(PathTarget):
    """Every candidate binary of a container image's final file system."""

    def describe(self) -> str:
        return f"image {os.path.basename(self.path.rstrip('/'))}"

    def iter_items(self) -> Iterator[ScanItem]:
        try:
            src = _Source(self.path)
        except (OSError, tarfile.TarError) as err:
            yield error_item(self.path, f"not a readable image: {err}", "bad-image")
            return
        try:
            try:
                layers = _layers(src)
            except (OSError, KeyError, ValueError, tarfile.TarError) as err:  # DocumentError is a ValueError
                yield error_item(self.path, f"no readable image manifest: {_reason(err)}", "bad-image")
                return
            yield from self._scan(src, layers)
        finally:
            src.close()

    def _scan(self, src: _Source, layers: list[str]) -> Iterator[ScanItem]:
        seen: set[str] = set()  # paths decided by a higher layer
        hidden: set[str] = set()  # deleted or opaque-masked prefixes from higher layers
        items: list[ScanItem] = []
        dists: list[_Dist] = []
        for layer in reversed(layers):
            here: set[str] = set()
            new_hidden: set[str] = set()
            try:
                with src.open(layer) as raw, _open_layer(raw) as tf:
                    for member in tf:
                        path = _norm(member.name)
                        if _whiteout(path, new_hidden) or _masked(path, seen, hidden):
                            continue
                        here.add(path)
                        item = self._member_item(src, layer, tf, member, path, dists) if member.isfile() else None
                        if item is not None:
                            items.append(item)
            except _LAYER_ERRORS as err:  # this layer is unreadable: it is reported, the others are still read
                items.append(error_item(f"{self.path}!{layer}", f"unreadable layer: {_reason(err)}", "bad-layer"))
            seen |= here
            hidden |= new_hidden
        yield from _attribute(items, dists, self.path)

    def _member_item(
        self, src: _Source, layer: str, tf: tarfile.TarFile, member: tarfile.TarInfo, path: str, dists: list[_Dist]
    ) -> ScanItem | None:
        """The item of one regular file of a layer (``None``: metadata, read into ``dists``, or no device code)."""
        base = posixpath.basename(path)
        if base in ("METADATA", "RECORD") and posixpath.dirname(path).endswith(".dist-info"):
            self._read_dist(tf, member, path, dists)
            return None
        verdict = is_candidate_name(base)
        if verdict is False or (verdict is None and not member.mode & 0o100):
            return None
        fh = tf.extractfile(member)
        if fh is None:
            return None
        stream: IO[bytes] = fh
        if verdict is None:
            head = fh.read(64)
            if sniff(head, base) is None:
                return None
            stream = cast("IO[bytes]", PrefixedStream(head, fh))
        display = f"{self.path}!{path}"
        facts = inspect_stream(stream, display, member.size, reopen=_member_opener(src, layer, member.name))
        return ScanItem(package=None, version=None, path=display, facts=facts)

    @staticmethod
    def _read_dist(tf: tarfile.TarFile, member: tarfile.TarInfo, path: str, dists: list[_Dist]) -> None:
        fh = tf.extractfile(member)
        if fh is None:
            return
        text = fh.read(8 * 1024 * 1024).decode("utf-8", "replace")
        info_dir = posixpath.dirname(path)
        root = posixpath.dirname(info_dir)
        dist = next((d for d in dists if d.info_dir == info_dir), None)
        if dist is None:
            dist = _Dist(info_dir=info_dir, root=root)
            dists.append(dist)
        if path.endswith("METADATA"):
            for line in text.splitlines():
                if not line:
                    break
                if line.startswith("Name:") and not dist.name:
                    dist.name = line[5:].strip()
                elif line.startswith("Version:") and not dist.version:
                    dist.version = line[8:].strip()
        else:
            dist.files = [
                _norm(posixpath.join(root, row.split(",", 1)[0])) for row in text.splitlines() if row.split(",", 1)[0]
            ]


def _attribute(items: list[ScanItem], dists: list[_Dist], image: str) -> Iterator[ScanItem]:
    owner: dict[str, tuple[str, str]] = {}
    pys: dict[str, int] = {}
    for d in dists:
        name = d.name or posixpath.basename(d.info_dir).split("-")[0]
        pys[name] = pys.get(name, 0) + python_modules(d.files or ())
        for f in d.files or ():
            owner[f] = (name, d.version)
    runtime: dict[str, str | None] = {}
    for item in items:
        path = item.path[len(image) + 1 :]
        found = owner.get(path)
        if found is None:
            yield item
            continue
        name, version = found
        if name not in runtime:
            runtime[name] = runtime_compiled_kind(name, [p for p, o in owner.items() if o[0] == name])
        yield ScanItem(
            package=name,
            version=version,
            path=item.path,
            facts=item.facts,
            runtime_compiled=runtime[name],
            python_modules=pys.get(name, 0),
        )


def extract_members(image: str, members: Collection[str], dest: str) -> dict[str, str]:
    """Copy files of the image's final file system into ``dest``: {image path: copied file}.

    One pass over the layers from the top down; the first layer holding a path as a regular file is
    the one the scan read it from (a path a higher layer deletes is never asked for).  Streamed, so
    memory stays bounded whatever the layer or file size.  ``cudafit verify`` uses this to hand a
    module's bytes to the driver.
    """
    import shutil

    wanted = {_norm(m): m for m in members}
    found: dict[str, str] = {}
    src = _Source(image)
    try:
        for layer in reversed(_layers(src)):
            if len(found) == len(wanted):
                break
            with src.open(layer) as raw, _open_layer(raw) as tf:
                for member in tf:
                    path = _norm(member.name)
                    if path not in wanted or wanted[path] in found:
                        continue
                    if not member.isfile():
                        found[wanted[path]] = ""  # a link or a directory here hides lower layers' file
                        continue
                    fh = tf.extractfile(member)
                    if fh is None:
                        continue
                    out = os.path.join(dest, f"{len(found)}-{posixpath.basename(path)}")
                    with fh, open(out, "wb") as w:
                        shutil.copyfileobj(fh, w, 1 << 20)
                    found[wanted[path]] = out
    except _LAYER_ERRORS as err:
        raise OSError(f"unreadable image: {_reason(err)}") from err
    finally:
        src.close()
    return {m: p for m, p in found.items() if p}
