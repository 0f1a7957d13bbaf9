"""Reading and writing the files of a kernel export, shared by the exporters
(ci/triton_export.py, ci/cutile_export.py): sources, manifests and cubins are read only as
regular files inside the spec's repository, of bounded size, opened without following a last link
or blocking; artifacts are written beside their final names and renamed.

Only Python's standard library is used.
"""

import hashlib
import json
import os
import stat
import sys
import tempfile

# The name messages start with: the script that reads the files.
program = "export"


def fail(message):
    """Bad input: the message, then exit 2 (never a traceback)."""
    print(f"{program}: {message}", file=sys.stderr)
    sys.exit(2)


# The largest source or cubin read: the harness reads a cubin of at most 256 MiB, and a kernel's
# .py file is far smaller than this.
MAX_INPUT_BYTES = 256 * 1024 * 1024


def project_root(folder):
    """The repository folder holds: the nearest folder from `folder` upwards with a .git; else `folder`."""
    at = os.path.realpath(folder)
    while True:
        if os.path.lexists(os.path.join(at, ".git")):
            return at
        parent = os.path.dirname(at)
        if parent == at:
            return os.path.realpath(folder)
        at = parent


def input_path(path, root, what):
    """`path` resolved, when it lies inside `root`; fail() for a path that resolves outside."""
    resolved = os.path.realpath(path)
    if os.path.commonpath([resolved, root]) != root:
        fail(f"{what} {path} resolves to {resolved}, outside {root}: sources and cubins are files of the project")
    return resolved


def read_bounded(path, root, what):
    """The bytes of `path`, a regular file inside `root` of at most MAX_INPUT_BYTES; fail() for anything else.

    Opened without following a last link and without blocking, and judged by what was opened: a
    device, a FIFO or a folder named as a source is bad input, never read."""
    resolved = input_path(path, root, what)
    try:
        fd = os.open(resolved, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0))
    except OSError as e:
        fail(f"{what} {path}: {e.strerror}")
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode):
        os.close(fd)
        fail(f"{what} {path} is not a regular file")
    if info.st_size > MAX_INPUT_BYTES:
        os.close(fd)
        fail(f"{what} {path} has {info.st_size} bytes, more than the {MAX_INPUT_BYTES} read")
    with os.fdopen(fd, "rb") as f:
        data = f.read(MAX_INPUT_BYTES + 1)
    if len(data) > MAX_INPUT_BYTES:
        fail(f"{what} {path} has more than the {MAX_INPUT_BYTES} bytes read")
    return data


def sha256_of(path, root, what):
    return hashlib.sha256(read_bounded(path, root, what)).hexdigest()


def manifest_text(manifest):
    """A manifest as committed: JSON, keys sorted, two spaces, a final newline."""
    return json.dumps(manifest, indent=2, sort_keys=True) + "\n"


def write_files(out, files):
    """Writes each (name, bytes or text) into the folder `out`, each beside its final name and then
    renamed, so that an interrupted export leaves the old artifacts or the new ones, never a cubin
    without its manifest's hash."""
    os.makedirs(out, exist_ok=True)
    for name, data in files:
        fd, tmp = tempfile.mkstemp(dir=out, prefix=".export-")
        os.fchmod(fd, 0o644)
        with os.fdopen(fd, "wb" if isinstance(data, bytes) else "w") as f:
            f.write(data)
        os.replace(tmp, os.path.join(out, name))
