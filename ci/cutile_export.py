#!/usr/bin/env python3
"""Exports a project's cuTile kernels (@ct.kernel, the `cuda-tile` package), each at given constants
and with the assumptions its arguments meet, as the artifacts a `cutile:` variant of a harness suite
launches: <name>.cubin, <name>.ptx and <name>.json (the manifest). No GPU and no driver are needed:
cuTile's compiler (tileiras) compiles for the spec's target.

Usage (where ci/install-exporters.sh installed cuTile):
  .venv-exporters/bin/python ci/cutile_export.py kernels/cutile/export.json            # every kernel
  .venv-exporters/bin/python ci/cutile_export.py kernels/cutile/export.json --only NAME
  python3 ci/cutile_export.py kernels/cutile/export.json --check      # hashes only, no cuTile needed
  .venv-exporters/bin/python ci/cutile_export.py kernels/cutile/export.json --reexport

The spec (JSON) names the output folder, the target and each kernel (paths relative to the spec):
  {"out": "exported", "target": {"gpu_code": "sm_90"},
   "kernels": [{"name": "softmax_rows_t1024", "source": "softmax.py", "function": "softmax_rows",
                "parameters": {
                  "out": {"array": "f32", "ndim": 2, "base_addr_divisible_by": 16, "stride_constant": [null, 1]},
                  "x":   {"array": "f32", "ndim": 2, "base_addr_divisible_by": 16, "stride_constant": [null, 1]},
                  "TILE": {"constant": 1024}}}]}

Every parameter of the kernel's function is given, in any order: an array (element type, ndim, and
the assumptions of cuTile's ArrayConstraint: index type, base address, shape and stride
divisibility, constant strides, stride lower bounds, alias groups), a scalar ({"scalar": "i32"}) or
a constant ({"constant": 1024}). The kernel is compiled for exactly these assumptions, and a launch
that breaks one is undefined behaviour, so the manifest records them and the harness checks every
suite point's arguments against them before anything runs.

The manifest records the kernel's symbol, the calling convention (an array is passed as its base
pointer, then its shape, then its strides, each of the index type; constants are compiled in and
not passed), the parameters with their assumptions, the constants, the launch the cubin requires
(threads per block from the kernel's .reqntid, a cluster from .reqnctapercluster, static shared
memory), parameters the compiler adds that a launcher must fill (a TMA descriptor: refused by the
harness), the cuTile and tileiras versions, the target, and the SHA-256 of the .py source, the
cubin and the PTX. The PTX is the text the cubin keeps for debugging.
"""

import argparse
import hashlib
import importlib.util
import inspect
import json
import os
import re
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import export_files  # noqa: E402 (beside this script)
from export_files import fail, project_root, read_bounded, sha256_of  # noqa: E402

# Every export compiles afresh: a re-export compares what the compiler makes now, never a cubin
# from cuTile's disk cache.
os.environ["CUDA_TILE_CACHE_DIR"] = "off"

MANIFEST_FORMAT = 1
NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_.-]{0,99}$")
# The harness's element type names and cuTile's dtypes (cuda.tile.<name>).
DTYPES = {"f16": "float16", "bf16": "bfloat16", "f32": "float32", "f64": "float64", "i8": "int8", "i16": "int16",
          "i32": "int32", "i64": "int64", "u8": "uint8", "u16": "uint16", "u32": "uint32", "u64": "uint64"}
INDEX_TYPES = ("i32", "i64")
ARRAY_KEYS = {"array", "ndim", "index", "base_addr_divisible_by", "shape_divisible_by", "stride_divisible_by",
              "stride_constant", "stride_lower_bound", "alias_groups", "may_alias_internally"}
CONVENTIONS = ("cutile_python_v1",)
# Facts that carry the exporting machine, not the kernel: the cubin's and the PTX's hashes (the
# line tables name the machine's folders).
VOLATILE_FACTS = {"cubin_sha256"}


def read_spec(path):
    try:
        with open(path) as f:
            spec = json.load(f)
    except (OSError, ValueError) as e:
        fail(f"{path}: {e}")
    if not isinstance(spec, dict) or not isinstance(spec.get("kernels"), list) or not spec["kernels"]:
        fail(f"{path}: 'kernels' must be a non-empty list")
    base = os.path.dirname(os.path.abspath(path))
    names = set()
    for i, k in enumerate(spec["kernels"]):
        where = f"{path}: kernels[{i}]"
        if not isinstance(k, dict):
            fail(f"{where}: a kernel is an object")
        for key in ("name", "source", "function", "parameters"):
            if key not in k:
                fail(f"{where}: missing '{key}'")
        if not NAME.match(str(k["name"])):
            fail(f"{where}.name: a name of letters, digits, '_', '.' and '-' (it names files)")
        if k["name"] in names:
            fail(f"{where}.name: '{k['name']}' is given twice")
        names.add(k["name"])
        if not isinstance(k["source"], str) or not k["source"]:
            fail(f"{where}.source: the path of the kernel's .py file, relative to the spec")
        if not isinstance(k["parameters"], dict) or not k["parameters"]:
            fail(f"{where}.parameters: a map of each parameter's name to its array, scalar or constant")
        convention = k.get("calling_convention", CONVENTIONS[0])
        if convention not in CONVENTIONS:
            fail(f"{where}.calling_convention: '{convention}' is not one the harness launches ({', '.join(CONVENTIONS)})")
        for name, p in k["parameters"].items():
            check_parameter(p, f"{where}.parameters.{name}")
    target = spec.get("target", {})
    if not isinstance(target, dict) or not re.fullmatch(r"sm_[0-9]{2,3}", str(target.get("gpu_code", "sm_90"))):
        fail(f"{path}: target.gpu_code: an architecture such as sm_90")
    if not isinstance(spec.get("out", "exported"), str):
        fail(f"{path}: 'out' must be a folder's path, relative to the spec")
    out = os.path.normpath(os.path.join(base, spec.get("out", "exported")))
    return spec, base, out


def check_parameter(p, where):
    if not isinstance(p, dict) or len({"array", "scalar", "constant"} & set(p)) != 1:
        fail(f"{where}: give one of 'array' (an element type), 'scalar' (a type) or 'constant' (a value)")
    if "constant" in p:
        if len(p) != 1 or isinstance(p["constant"], bool) or not isinstance(p["constant"], (int, float)):
            fail(f"{where}: a constant is {{\"constant\": NUMBER}}")
        return
    if "scalar" in p:
        if len(p) != 1 or p["scalar"] not in DTYPES:
            fail(f"{where}: a scalar is {{\"scalar\": TYPE}}, TYPE one of {', '.join(DTYPES)}")
        return
    unknown = set(p) - ARRAY_KEYS
    if unknown:
        fail(f"{where}: unknown key {sorted(unknown)[0]!r}; an array takes {', '.join(sorted(ARRAY_KEYS))}")
    if p["array"] not in DTYPES:
        fail(f"{where}.array: an element type, one of {', '.join(DTYPES)}")
    if not isinstance(p.get("ndim"), int) or isinstance(p.get("ndim"), bool) or not 1 <= p["ndim"] <= 8:
        fail(f"{where}.ndim: 1 to 8")
    if p.get("index", "i32") not in INDEX_TYPES:
        fail(f"{where}.index: i32 or i64")


def load_kernel(source, function):
    spec = importlib.util.spec_from_file_location(f"cutile_export_{abs(hash(source))}", source)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    kernel = getattr(module, function, None)
    if kernel is None:
        fail(f"{source}: no function '{function}'")
    return kernel


def constraint(ct, p):
    """The cuTile constraint a spec's parameter states."""
    from cuda.tile.compilation import ArrayConstraint, ScalarConstraint

    if "constant" in p:
        return p["constant"]
    if "scalar" in p:
        return ScalarConstraint(getattr(ct, DTYPES[p["scalar"]]))
    return ArrayConstraint(getattr(ct, DTYPES[p["array"]]), p["ndim"], index_dtype=getattr(ct, DTYPES[p.get("index", "i32")]),
                           stride_lower_bound_incl=p.get("stride_lower_bound", 0),
                           alias_groups=p.get("alias_groups", []),
                           may_alias_internally=p.get("may_alias_internally", False),
                           stride_constant=p.get("stride_constant"),
                           shape_divisible_by=p.get("shape_divisible_by", 1),
                           stride_divisible_by=p.get("stride_divisible_by", 1),
                           base_addr_divisible_by=p.get("base_addr_divisible_by", 1))


def parameter_facts(name, p, c):
    """A parameter as the manifest states it, from the constraint cuTile compiled (its assumptions
    as cuTile normalised them: a bound a constant stride makes redundant is left out)."""
    if "scalar" in p:
        return {"name": name, "kind": "scalar", "type": p["scalar"]}
    return {"name": name, "kind": "array", "type": p["array"], "ndim": c.ndim, "index_type": p.get("index", "i32"),
            "base_addr_divisible_by": c.base_addr_divisible_by,
            "shape_divisible_by": list(c.shape_divisible_by), "stride_divisible_by": list(c.stride_divisible_by),
            "stride_constant": list(c.stride_constant), "stride_lower_bound": list(c.stride_lower_bound_incl),
            "alias_groups": list(c.alias_groups), "may_alias_internally": c.may_alias_internally}


def launch_facts(ptx, entry):
    """What launching the kernel takes, from its PTX: threads per block (.reqntid), a cluster
    (.reqnctapercluster), dynamic shared memory (none: an .extern .shared is refused) and the
    parameters the compiler added for a launcher to fill (.hidden .param, a TMA descriptor)."""
    head = ptx[ptx.find(f".entry {entry}("):]
    body_at = head.find("{")
    directives = head[:body_at] if body_at >= 0 else head
    block = re.search(r"\.reqntid\s+(\d+)(?:\s*,\s*(\d+))?(?:\s*,\s*(\d+))?", directives)
    if not block:
        fail(f"{entry}: the PTX states no .reqntid: the threads per block are not known")
    cluster = re.search(r"\.reqnctapercluster\s+(\d+)(?:\s*,\s*(\d+))?(?:\s*,\s*(\d+))?", directives)
    if re.search(r"\.extern\s+\.shared", ptx):
        fail(f"{entry}: the kernel takes dynamic shared memory of a size the export does not state")
    hidden = [{"name": m.group(2), "bytes": int(m.group(3)), "align": int(m.group(1))}
              for m in re.finditer(r"\.hidden\s+\.param\s+\.align\s+(\d+)\s+\.b8\s+(\w+)\[(\d+)\]", directives)]
    static = sum(int(m.group(1)) for m in re.finditer(r"^\.shared\s+\.align\s+\d+\s+\.b8\s+\w+\[(\d+)\];", ptx, re.M))
    dims = lambda m: [int(m.group(i) or 1) for i in (1, 2, 3)]
    return {"block": dims(block), "cluster": dims(cluster) if cluster else [1, 1, 1],
            "static_shared_bytes": static, "hidden_parameters": hidden}


def make_export(kernel, base, out, target):
    """The manifest, cubin and PTX of `kernel` as they would be written into `out`."""
    import cuda.tile as ct
    from cuda.tile.compilation import CallingConvention, KernelSignature, export_kernel
    import export_compare
    from importlib import metadata

    source = os.path.normpath(os.path.join(base, kernel["source"]))
    compiled = load_kernel(source, kernel["function"])
    function = compiled._annotated_function.pyfunc
    names = list(inspect.signature(function).parameters)
    unknown = [p for p in kernel["parameters"] if p not in names]
    if unknown:
        fail(f"{kernel['name']}: {kernel['function']} has no parameter {', '.join(unknown)}")
    missing = [p for p in names if p not in kernel["parameters"]]
    if missing:
        fail(f"{kernel['name']}: give an array, a scalar or a constant for {', '.join(missing)}")
    constraints = [constraint(ct, kernel["parameters"][p]) for p in names]
    convention = getattr(CallingConvention, kernel.get("calling_convention", CONVENTIONS[0]))()
    signature = KernelSignature(constraints, convention).with_mangled_symbol(function.__name__)
    gpu_code = target.get("gpu_code", "sm_90")
    with tempfile.TemporaryDirectory(prefix="cutile-export-") as scratch:
        path = os.path.join(scratch, "kernel.cubin")
        try:
            export_kernel(compiled, [signature], path, gpu_code=gpu_code, output_format="cubin")
        except Exception as e:  # the compiler's own message, without a traceback
            fail(f"{kernel['name']}: cuTile could not export it: {type(e).__name__}: {str(e).strip()[:2000]}")
        with open(path, "rb") as f:
            cubin = f.read()
    sections = export_compare.elf_sections(cubin)
    ptx = "\n".join(line.decode() for line in (export_compare.ptx_lines(sections) or [])) + "\n"
    if not ptx.strip():
        fail(f"{kernel['name']}: the cubin keeps no PTX text")
    params = [parameter_facts(p, kernel["parameters"][p], c)
              for p, c in zip(names, constraints) if "constant" not in kernel["parameters"][p]]
    manifest = {
        "format": MANIFEST_FORMAT,
        "dsl": "cutile",
        "kernel": kernel["name"],
        "function": kernel["function"],
        "source": os.path.relpath(source, out),
        "source_sha256": sha256_of(source, project_root(base), f"{kernel['name']}: source"),
        "cutile_version": metadata.version("cuda-tile"),
        "compiler": f"tileiras {metadata.version('nvidia-cuda-tileiras')}",
        "target": {"gpu_code": gpu_code, "arch": int(gpu_code[3:])},
        "entry": signature.symbol,
        "calling_convention": convention.name,
        "parameters": params,
        "constants": {p: kernel["parameters"][p]["constant"] for p in names if "constant" in kernel["parameters"][p]},
        "launch": launch_facts(ptx, signature.symbol),
        "cubin": kernel["name"] + ".cubin",
        "cubin_sha256": hashlib.sha256(cubin).hexdigest(),
        "ptx": kernel["name"] + ".ptx",
        "ptx_sha256": hashlib.sha256(ptx.encode()).hexdigest(),
    }
    return manifest, cubin, ptx


def export(kernel, base, out, target):
    manifest, cubin, ptx = make_export(kernel, base, out, target)
    export_files.write_files(out, [(manifest["cubin"], cubin), (manifest["ptx"], ptx),
                                   (kernel["name"] + ".json", export_files.manifest_text(manifest))])
    launch = manifest["launch"]
    print(f"{kernel['name']}: {manifest['entry']}, {launch['block'][0]} threads, {launch['static_shared_bytes']} B shared"
          f"{', hidden ' + str([h['name'] for h in launch['hidden_parameters']]) if launch['hidden_parameters'] else ''}"
          f" -> {os.path.relpath(out)}")


def committed_manifest(path, root):
    try:
        manifest = json.loads(read_bounded(path, root, "manifest"))
    except ValueError as e:
        fail(f"{path}: {e}")
    if not isinstance(manifest, dict):
        fail(f"{path}: a manifest is a JSON object")
    for key, suffix in (("cubin", ".cubin"), ("ptx", ".ptx")):
        name = manifest.get(key)
        # The manifest names its files beside it, as the export writes them.
        if not isinstance(name, str) or not name.endswith(suffix) or not NAME.match(name.removesuffix(suffix)):
            fail(f"{path}: '{key}' must name a {suffix} file beside the manifest, not {str(name)[:100]!r}")
    return manifest


def check_kernel(kernel, base, out):
    """The committed artifacts of `kernel` against their manifest's hashes (no cuTile needed)."""
    path = os.path.join(out, kernel["name"] + ".json")
    root = project_root(base)
    if not os.path.lexists(path):
        return [f"{path}: missing (not exported yet?)"]
    manifest = committed_manifest(path, root)
    problems = []
    source = os.path.normpath(os.path.join(base, kernel["source"]))
    if manifest.get("source_sha256") != sha256_of(source, root, f"{kernel['name']}: source"):
        problems.append(f"{path}: {os.path.relpath(source)} changed since it was exported")
    for key in ("cubin", "ptx"):
        file = os.path.join(out, manifest[key])
        if sha256_of(file, root, f"{path}: {key}") != manifest.get(key + "_sha256"):
            problems.append(f"{path}: {file} is not the {key} this manifest was written with")
    return problems


def reexport_kernel(kernel, base, out, target, nvdisasm):
    """Each way the committed export of `kernel` is not what exporting it now makes (empty: it is)."""
    import export_compare

    path = os.path.join(out, kernel["name"] + ".json")
    root = project_root(base)
    if not os.path.lexists(path):
        return [f"{path}: missing (not exported yet?)"]
    committed = committed_manifest(path, root)
    manifest, cubin, ptx = make_export(kernel, base, out, target)
    problems = [f"{path}: {p}" for p in export_compare.manifest_differences(committed, manifest, VOLATILE_FACTS)]
    ptx_path = os.path.join(out, committed["ptx"])
    if read_bounded(ptx_path, root, f"{path}: ptx") != ptx.encode():
        problems.append(f"{ptx_path}: not the PTX the export makes")
    cubin_path = os.path.join(out, committed["cubin"])
    old = read_bounded(cubin_path, root, f"{path}: cubin")
    problems += [f"{cubin_path}: {p}" for p in export_compare.compare_cubins(old, cubin)]
    with tempfile.TemporaryDirectory(prefix="cutile-reexport-") as scratch:
        try:
            problems += [f"{cubin_path}: SASS: {d}" for d in export_compare.sass_difference(nvdisasm, old, cubin, scratch)]
        except export_compare.BadCubin as e:
            problems.append(f"{cubin_path}: {e}")
    return problems


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("spec")
    parser.add_argument("--only", action="append", default=[], help="export only this kernel (repeatable)")
    parser.add_argument("--check", action="store_true", help="compare the committed artifacts' hashes; write nothing")
    parser.add_argument("--reexport", action="store_true",
                        help="export every kernel afresh and fail where a committed artifact is not what the export "
                             "makes: its manifest's facts, its PTX, its cubin's sections and normalised SASS")
    args = parser.parse_args()
    export_files.program = "cutile_export"
    spec, base, out = read_spec(args.spec)
    kernels = [k for k in spec["kernels"] if not args.only or k["name"] in args.only]
    target = spec.get("target", {})
    if args.check or args.reexport:
        nvdisasm = None
        if args.reexport:
            import export_compare
            try:
                import cuda.tile  # noqa: F401 (the export needs it)
            except ImportError:
                fail("--reexport needs cuTile (ci/install-exporters.sh installs the pinned version)")
            nvdisasm = export_compare.find_nvdisasm(project_root(base))
            if not nvdisasm:
                fail("--reexport compares normalised SASS and needs nvdisasm (ci/install-nvdisasm.sh, or HARNESS_NVDISASM)")
        problems = []
        for k in kernels:
            found = reexport_kernel(k, base, out, target, nvdisasm) if args.reexport else check_kernel(k, base, out)
            problems += found
            if args.reexport:
                print(f"{k['name']}: {'differs from its export' if found else 'what the export makes'}")
        for p in problems:
            print(p, file=sys.stderr)
        bad = len({os.path.splitext(p.split(":")[0])[0] for p in problems})
        print(f"cutile_export: {len(kernels) - bad} of {len(kernels)} "
              + ("committed exports are what the export makes" if args.reexport else "up to date"))
        sys.exit(1 if problems else 0)
    for k in kernels:
        export(k, base, out, target)


if __name__ == "__main__":
    main()
