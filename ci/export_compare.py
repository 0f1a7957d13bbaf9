"""Compares a committed kernel export with the export made afresh from the same source, for the
exporters' re-export checks (ci/triton_export.py --reexport, ci/cutile_export.py --reexport).

A cubin's bytes cannot be compared whole: its line table names the folders of the machine that
exported it (the checkout, the exporter's own installation), so the same kernel exported in two
checkouts differs. What is compared instead:
- every ELF section byte for byte, but for the line tables and the PTX text kept for debugging;
- the line tables with their folders left out: the same files, the same line program;
- the PTX text as the instructions it holds, in any order and with its virtual registers unnumbered:
  the exporter may emit an unchanged kernel's independent PTX instructions in another order, with
  other register numbers, in another folder (seen with Triton's two-CTA matmul), and the table from
  SASS to those PTX lines (.nv_debug_line_sass) moves with them; the machine code they become is
  compared whole below;
- the normalised SASS (nvdisasm -c -g, addresses and encodings dropped, each source file by its
  name): the same instructions at the same lines, shown as a diff where they are not.

Only Python's standard library is used.
"""

import difflib
import os
import re
import shutil
import struct
import subprocess

# Sections that name the exporting machine's folders, or are padded differently where they do:
# the line tables (SASS to source lines; cuTile's also Tile IR to source lines) with their
# relocations, and the PTX text kept for debugging.
LINE_TABLES = (".debug_line", ".nv.tileir.debug_line")
PTX_TEXT = ".nv_debug_ptx_txt"
SASS_TO_PTX_LINES = ".nv_debug_line_sass"


class BadCubin(Exception):
    """A cubin that is no ELF file this reader understands."""


def elf_sections(data):
    """{name: (type, bytes)} of a 64-bit little-endian ELF file (a cubin)."""
    if len(data) < 64 or data[:4] != b"\x7fELF" or data[4] != 2 or data[5] != 1:
        raise BadCubin("not a 64-bit little-endian ELF file")
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3A)
    if shentsize < 64 or shstrndx >= shnum or shoff + shnum * shentsize > len(data):
        raise BadCubin("its section headers lie outside the file")
    headers = [struct.unpack_from("<IIQQQQIIQQ", data, shoff + i * shentsize) for i in range(shnum)]
    names_at, names_size = headers[shstrndx][4], headers[shstrndx][5]
    if names_at + names_size > len(data):
        raise BadCubin("its section names lie outside the file")
    sections = {}
    for name_offset, kind, _flags, _addr, offset, size, *_ in headers:
        end = data.find(b"\0", names_at + name_offset, names_at + names_size)
        if end < 0:
            raise BadCubin("a section name is not terminated")
        name = data[names_at + name_offset:end].decode("utf-8", "replace")
        nobits = kind == 8
        if not nobits and offset + size > len(data):
            raise BadCubin(f"section {name} lies outside the file")
        sections[name] = (kind, b"" if nobits else data[offset:offset + size], size)
    return sections


def _uleb(data, at):
    value = shift = 0
    while True:
        if at >= len(data):
            raise BadCubin("a line table ends inside a number")
        byte = data[at]
        at += 1
        value |= (byte & 0x7F) << shift
        shift += 7
        if byte < 0x80:
            return value, at


def _string(data, at):
    end = data.find(b"\0", at)
    if end < 0:
        raise BadCubin("a line table ends inside a name")
    return data[at:end], end + 1


def line_table_facts(data):
    """Each unit of a DWARF 2-4 line table with its folders left out: the header's parameters, the
    files (name, folder index, length; not their times) and the line program's bytes, with the offset of the
    program's start (where the relocations point)."""
    units, at = [], 0
    while at < len(data):
        if at + 10 > len(data):
            raise BadCubin("a line table unit is cut short")
        length, version = struct.unpack_from("<IH", data, at)
        end = at + 4 + length
        if version not in (2, 3, 4) or end > len(data):
            raise BadCubin(f"a line table unit of version {version} or length {length} is not read")
        header_length, = struct.unpack_from("<I", data, at + 6)
        program = at + 10 + header_length
        q = at + 10
        fixed = data[q:q + (6 if version >= 4 else 5)]
        q += len(fixed)
        opcode_base = data[q - 1]
        lengths = data[q:q + opcode_base - 1]
        q += opcode_base - 1
        folders = 0
        while True:
            folder, q = _string(data, q)
            if not folder:
                break
            folders += 1
        files = []
        while True:
            name, q = _string(data, q)
            if not name:
                break
            folder, q = _uleb(data, q)
            time, q = _uleb(data, q)
            size, q = _uleb(data, q)
            del time  # the file's modification time: a checkout sets it at random
            files.append((name, folder, size))
        units.append({"version": version, "parameters": fixed + lengths, "folders": folders, "files": files,
                      "program": data[program:end], "program_at": program})
        at = end
    return units


def _relocations(data, program_starts):
    """The line table's relocations (ELF64 RELA), each offset taken from its unit's program start."""
    out = []
    for i in range(0, len(data) - len(data) % 24, 24):
        offset, info, addend = struct.unpack_from("<QQq", data, i)
        base = max((s for s in program_starts if s <= offset), default=0)
        out.append((offset - base, info, addend))
    return out


def ptx_lines(sections):
    """The PTX text kept for debugging, its lines without the empty ones: where it held the
    exporting machine's folders, as many empty lines are left as the names took, and padding
    follows it."""
    if PTX_TEXT not in sections:
        return None
    return [line for line in sections[PTX_TEXT][1].split(b"\0") if line]


_VIRTUAL_REGISTER = re.compile(rb"%(rd|r|p|f|fd|h|hh|rs|b)[0-9]+")


def ptx_instructions(sections):
    """The PTX text kept for debugging as a sorted list of its lines, virtual registers unnumbered
    (%r1488 -> %r): the same instructions, whatever order and register numbers the exporter chose."""
    lines = ptx_lines(sections)
    return None if lines is None else sorted(_VIRTUAL_REGISTER.sub(rb"%\1", line) for line in lines)


def compare_cubins(committed, fresh):
    """What differs between the committed cubin and the fresh export's, apart from folder names:
    a list of sentences (empty when they are the same kernel)."""
    try:
        old, new = elf_sections(committed), elf_sections(fresh)
    except BadCubin as e:
        return [f"not a cubin: {e}"]
    problems = []
    special = {PTX_TEXT, SASS_TO_PTX_LINES, *LINE_TABLES, *(".rela" + t for t in LINE_TABLES)}
    for name in sorted(set(old) | set(new)):
        if name in special:
            continue
        if name not in new:
            problems.append(f"section {name} is not in the export")
        elif name not in old:
            problems.append(f"section {name} of the export is missing")
        elif old[name] != new[name]:
            problems.append(f"section {name} differs from the export's ({old[name][2]} bytes, the export's {new[name][2]})")
    if ptx_instructions(old) != ptx_instructions(new):
        problems.append(f"section {PTX_TEXT} (the PTX kept for debugging) differs from the export's")
    for table in LINE_TABLES:
        try:
            old_lines = line_table_facts(old.get(table, (0, b"", 0))[1])
            new_lines = line_table_facts(new.get(table, (0, b"", 0))[1])
        except BadCubin as e:
            problems.append(f"{table}: {e}")
            continue
        without_start = lambda units: [{k: v for k, v in u.items() if k != "program_at"} for u in units]
        if without_start(old_lines) != without_start(new_lines):
            problems.append(f"the line table {table} (files and lines) differs from the export's")
            continue
        # The relocations point into the line program, whose start moves with the folders' names.
        relocations = ".rela" + table
        old_rel = _relocations(old.get(relocations, (0, b"", 0))[1], [u["program_at"] for u in old_lines])
        new_rel = _relocations(new.get(relocations, (0, b"", 0))[1], [u["program_at"] for u in new_lines])
        if old_rel != new_rel:
            problems.append(f"the relocations of the line table {table} differ from the export's")
    return problems


def find_nvdisasm(root):
    """nvdisasm as the harness finds it (docs/sass.md): $HARNESS_NVDISASM, the toolkit's, the
    project's .venv, PATH; None when there is none."""
    candidates = [os.environ.get("HARNESS_NVDISASM")]
    for variable in ("CUDA_PATH", "CUDA_HOME"):
        if os.environ.get(variable):
            candidates.append(os.path.join(os.environ[variable], "bin", "nvdisasm"))
    candidates += ["/usr/local/cuda/bin/nvdisasm", os.path.join(root, ".venv", "bin", "nvdisasm"),
                   shutil.which("nvdisasm")]
    for c in candidates:
        if c and os.path.isfile(c) and os.access(c, os.X_OK):
            return c
    return None


_ADDRESS = re.compile(r"^\s*/\*[0-9a-f]{4,}\*/\s*")
_ENCODING = re.compile(r"^\s*/\* 0x[0-9a-f]{16} \*/\s*$")
_QUOTED_PATH = re.compile(r'"([^"]*)"')


def normalised_sass(nvdisasm, cubin, scratch):
    """The cubin's SASS with line information (nvdisasm -c -g), without addresses, encodings and
    blank lines, each source file named by its file name alone."""
    path = os.path.join(scratch, "sass.cubin")
    with open(path, "wb") as f:
        f.write(cubin)
    try:
        run = subprocess.run([nvdisasm, "-c", "-g", path], capture_output=True, text=True, timeout=600)
    except subprocess.TimeoutExpired:
        raise BadCubin("nvdisasm ran past 600 s on it")
    if run.returncode != 0:
        raise BadCubin(f"nvdisasm exited {run.returncode}: {run.stderr.strip()[:300]}")
    lines = []
    for line in run.stdout.splitlines():
        if _ENCODING.match(line) or not line.strip():
            continue
        line = _ADDRESS.sub("", line).strip()
        lines.append(_QUOTED_PATH.sub(lambda m: '"' + os.path.basename(m.group(1)) + '"', line))
    return lines


def sass_difference(nvdisasm, committed, fresh, scratch, limit=12):
    """The first lines of a diff of the two cubins' normalised SASS, or [] when they are equal."""
    old = normalised_sass(nvdisasm, committed, scratch)
    new = normalised_sass(nvdisasm, fresh, scratch)
    if old == new:
        return []
    diff = [d for d in difflib.unified_diff(old, new, "committed", "export", lineterm="", n=0)
            if not d.startswith(("---", "+++"))]
    return diff[:limit] + ([f"... {len(diff) - limit} more lines"] if len(diff) > limit else [])


def manifest_differences(committed, fresh, volatile):
    """Each fact of the committed manifest that the fresh export states otherwise, as "key: X, the
    export says Y"; `volatile` names the keys ("launch.hash") that carry the exporting machine."""
    problems = []

    def walk(a, b, prefix):
        if isinstance(a, dict) and isinstance(b, dict):
            for key in sorted(set(a) | set(b)):
                name = f"{prefix}.{key}" if prefix else key
                if name in volatile:
                    continue
                if key not in b:
                    problems.append(f"{name} is not in the export's manifest")
                elif key not in a:
                    problems.append(f"{name} is missing (the export says {json_text(b[key])})")
                else:
                    walk(a[key], b[key], name)
        elif isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
            for i, (x, y) in enumerate(zip(a, b)):
                walk(x, y, f"{prefix}[{i}]")
        elif a != b:
            problems.append(f"{prefix} is {json_text(a)}, the export says {json_text(b)}")

    walk(committed, fresh, "")
    return problems


def json_text(value):
    import json
    text = json.dumps(value, sort_keys=True)
    return text if len(text) <= 120 else text[:117] + "..."
