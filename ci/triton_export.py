#!/usr/bin/env python3
"""Exports a project's @triton.jit kernels, at given constexprs, as the artifacts a `triton:`
variant of a harness suite launches: <name>.cubin and <name>.json (the manifest).

Usage (where Python and Triton are installed; no GPU is needed, Triton compiles for the spec's
target):
  python3 ci/triton_export.py kernels/triton/export.json            # write every kernel
  python3 ci/triton_export.py kernels/triton/export.json --only NAME
  python3 ci/triton_export.py kernels/triton/export.json --check    # exit 1 when any is stale

The spec (JSON) names the output folder and each kernel (paths relative to the spec file):
  {"out": "exported", "target": {"arch": 90},
   "kernels": [{"name": "softmax_rows_b1024", "source": "softmax.py", "function": "softmax_rows",
                "signature": {"out_ptr": "*fp32", "in_ptr": "*fp32", "n_cols": "i32"},
                "constexprs": {"BLOCK": 1024}, "num_warps": 4, "num_stages": 3,
                "divisible_by_16": ["out_ptr", "in_ptr"]}]}

`divisible_by_16` specializes the kernel as Triton's JIT does when called with such arguments
(torch tensors are 16-byte aligned; integers that are multiples of 16): without it the export is
not the kernel the JIT runs (a tiled matmul at N = 2048 was 22 % slower unspecialized). The
harness refuses a suite point whose integer argument breaks the assumption.

The manifest records what the harness needs with no Python at run time: Triton's launch facts
(kernel name, warps, CTAs, dynamic shared memory, the hidden scratch parameters' sizes, tensor
descriptors, cooperative or PDL launch), the user parameters in order with their types, the
constexprs, the Triton version and target, and the SHA-256 of the .py source, so that a suite
run (CPU or GPU) refuses an artifact whose source has changed since it was exported. `--check`
also compares the installed Triton version with each manifest's.
"""

import argparse
import hashlib
import importlib.util
import json
import os
import re
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import export_files  # noqa: E402 (beside this script)
from export_files import fail, project_root, read_bounded, sha256_of  # noqa: E402

MANIFEST_FORMAT = 1
NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_.-]{0,99}$")
# Triton's launch facts the harness reads; the rest of Triton's metadata (compiler options, the
# exporting machine's library paths) stays out of the committed manifest.
LAUNCH_FACTS = ("name", "num_warps", "num_ctas", "shared", "cluster_dims", "tensordesc_meta",
                "launch_cooperative_grid", "launch_pdl", "tmem_size", "maxnreg", "hash")


def read_spec(path):
    try:
        with open(path) as f:
            spec = json.load(f)
    except (OSError, ValueError) as e:
        fail(f"{path}: {e}")
    if not isinstance(spec.get("kernels"), list) or not spec["kernels"]:
        fail(f"{path}: 'kernels' must be a non-empty list")
    base = os.path.dirname(os.path.abspath(path))
    names = set()
    for i, k in enumerate(spec["kernels"]):
        where = f"{path}: kernels[{i}]"
        for key in ("name", "source", "function", "signature"):
            if key not in k:
                fail(f"{where}: missing '{key}'")
        if not NAME.match(str(k["name"])):
            fail(f"{where}.name: a name of letters, digits, '_', '.' and '-' (it names files)")
        if k["name"] in names:
            fail(f"{where}.name: '{k['name']}' is given twice")
        names.add(k["name"])
        if not isinstance(k["signature"], dict) or not k["signature"]:
            fail(f"{where}.signature: a map of parameter name to Triton type ('*fp32', 'i32', ...)")
        if not isinstance(k["source"], str) or not k["source"]:
            fail(f"{where}.source: the path of the kernel's .py file, relative to the spec")
    if not isinstance(spec.get("out", "exported"), str):
        fail(f"{path}: 'out' must be a folder's path, relative to the spec")
    out = os.path.normpath(os.path.join(base, spec.get("out", "exported")))
    return spec, base, out


def load_function(source, function):
    spec = importlib.util.spec_from_file_location(f"triton_export_{abs(hash(source))}", source)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    fn = getattr(module, function, None)
    if fn is None:
        fail(f"{source}: no function '{function}'")
    return fn


def export_kernel(kernel, base, out, target_spec):
    """Compiles `kernel` and writes its cubin and manifest into `out`."""
    manifest, cubin = make_export(kernel, base, out, target_spec)
    write_export(out, kernel["name"], manifest, cubin)
    facts = manifest["launch"]
    print(f"{kernel['name']}: {facts['name']}, {facts['num_warps']} warps, {facts['shared']} B shared, "
          f"hidden {[h['name'] for h in facts['hidden_parameters']]} -> {os.path.relpath(out)}")


def make_export(kernel, base, out, target_spec):
    """The manifest and the cubin of `kernel` compiled for `target_spec`, as they would be written
    into `out`."""
    import triton
    from triton.backends.compiler import GPUTarget

    source = os.path.normpath(os.path.join(base, kernel["source"]))
    fn = load_function(source, kernel["function"])
    constexprs = kernel.get("constexprs", {})
    params = list(fn.arg_names)
    unknown = [p for p in list(kernel["signature"]) + list(constexprs) if p not in params]
    if unknown:
        fail(f"{kernel['name']}: {kernel['function']} has no parameter {', '.join(unknown)}")
    missing = [p for p in params if p not in kernel["signature"] and p not in constexprs]
    if missing:
        fail(f"{kernel['name']}: give a type (signature) or a value (constexprs) for {', '.join(missing)}")
    signature = {p: ("constexpr" if p in constexprs else kernel["signature"][p]) for p in params}
    arch = int(target_spec.get("arch", 90))
    target = GPUTarget("cuda", arch, int(target_spec.get("warp_size", 32)))
    options = {k: kernel[k] for k in ("num_warps", "num_stages", "num_ctas", "maxnreg") if k in kernel}
    # Triton's JIT specializes a kernel on the arguments it is called with: pointers and integers
    # divisible by 16 get `tt.divisibility` 16 (aligned, vectorized accesses). A kernel exported
    # without it is not the one the JIT runs for such arguments; `divisible_by_16` names the
    # parameters to specialize on, and the harness checks every case's values against it.
    divisible = kernel.get("divisible_by_16", [])
    unknown = [p for p in divisible if p not in kernel["signature"]]
    if unknown:
        fail(f"{kernel['name']}: divisible_by_16 names {', '.join(unknown)}, not a parameter of the signature")
    attrs = {(params.index(p),): [["tt.divisibility", 16]] for p in divisible}
    compiled = triton.compile(
        triton.compiler.ASTSource(fn=fn, signature=signature, constexprs=constexprs, attrs=attrs),
        target=target, options=options)
    metadata = compiled.metadata._asdict()
    facts = {k: metadata[k] for k in LAUNCH_FACTS if k in metadata}
    # Every hidden parameter Triton appends has a size and an alignment in its metadata
    # (global_scratch since 3.4, profile_scratch since 3.5): all of them are kept, in order, so
    # that a kind this manifest's reader does not know is refused rather than left out.
    facts["hidden_parameters"] = [
        {"name": k[: -len("_size")], "size": metadata[k], "align": metadata.get(k[: -len("_size")] + "_align", 1)}
        for k in metadata if k.endswith("_scratch_size")
    ]
    cubin = compiled.asm["cubin"]
    manifest = {
        "format": MANIFEST_FORMAT,
        "kernel": kernel["name"],
        "function": kernel["function"],
        "source": os.path.relpath(source, out),
        "source_sha256": sha256_of(source, project_root(base), f"{kernel['name']}: source"),
        "triton_version": triton.__version__,
        "target": {"backend": "cuda", "arch": arch, "warp_size": target.warp_size},
        "parameters": [dict({"name": p, "type": kernel["signature"][p]}, **({"divisibility": 16} if p in divisible else {}))
                       for p in params if p not in constexprs],
        "constexprs": constexprs,
        "num_stages": metadata.get("num_stages"),
        "cubin": kernel["name"] + ".cubin",
        "cubin_sha256": hashlib.sha256(cubin).hexdigest(),
        "launch": facts,
    }
    return manifest, cubin


def write_export(out, name, manifest, cubin):
    export_files.write_files(out, [(manifest["cubin"], cubin), (name + ".json", export_files.manifest_text(manifest))])


# Facts of a manifest that carry the exporting machine, not the kernel: the cubin's hash (its line
# table names the machine's folders) and Triton's cache key (which hashes its installation).
VOLATILE_FACTS = {"cubin_sha256", "launch.hash"}


def reexport_kernel(kernel, base, out, target_spec, nvdisasm):
    """Each way the committed export of `kernel` is not what exporting it now makes (empty: it is)."""
    import export_compare

    path = os.path.join(out, kernel["name"] + ".json")
    root = project_root(base)
    if not os.path.lexists(path):
        return [f"{path}: missing (not exported yet?)"]
    try:
        committed = json.loads(read_bounded(path, root, "manifest"))
    except ValueError as e:
        fail(f"{path}: {e}")
    if not isinstance(committed, dict):
        fail(f"{path}: a manifest is a JSON object")
    manifest, cubin = make_export(kernel, base, out, target_spec)
    problems = [f"{path}: {p}" for p in export_compare.manifest_differences(committed, manifest, VOLATILE_FACTS)]
    name = committed.get("cubin")
    if not isinstance(name, str) or not NAME.match(name.removesuffix(".cubin")) or not name.endswith(".cubin"):
        fail(f"{path}: 'cubin' must name a .cubin file beside the manifest, not {str(name)[:100]!r}")
    cubin_path = os.path.join(out, name)
    old = read_bounded(cubin_path, root, f"{path}: cubin")
    problems += [f"{cubin_path}: {p}" for p in export_compare.compare_cubins(old, cubin)]
    with tempfile.TemporaryDirectory(prefix="triton-reexport-") as scratch:
        try:
            problems += [f"{cubin_path}: SASS: {d}" for d in export_compare.sass_difference(nvdisasm, old, cubin, scratch)]
        except export_compare.BadCubin as e:
            problems.append(f"{cubin_path}: {e}")
    return problems


def check_kernel(kernel, base, out, version):
    path = os.path.join(out, kernel["name"] + ".json")
    root = project_root(base)
    if not os.path.lexists(path):
        return [f"{path}: missing (not exported yet?)"]
    try:
        manifest = json.loads(read_bounded(path, root, "manifest"))
    except ValueError as e:
        fail(f"{path}: {e}")
    if not isinstance(manifest, dict):
        fail(f"{path}: a manifest is a JSON object")
    problems = []
    source = os.path.normpath(os.path.join(base, kernel["source"]))
    if manifest.get("source_sha256") != sha256_of(source, root, f"{kernel['name']}: source"):
        problems.append(f"{path}: {os.path.relpath(source)} changed since it was exported")
    if version and manifest.get("triton_version") != version:
        problems.append(f"{path}: exported with Triton {manifest.get('triton_version')}, installed is {version}")
    name = manifest.get("cubin")
    # The manifest names its cubin beside it, as the export writes it.
    if not isinstance(name, str) or not NAME.match(name.removesuffix(".cubin")) or not name.endswith(".cubin"):
        fail(f"{path}: 'cubin' must name a .cubin file beside the manifest, not {str(name)[:100]!r}")
    cubin = os.path.join(out, name)
    if sha256_of(cubin, root, f"{path}: cubin") != manifest.get("cubin_sha256"):
        problems.append(f"{path}: {cubin} is not the cubin this manifest was written with")
    return problems


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("spec")
    parser.add_argument("--only", action="append", default=[], help="export only this kernel (repeatable)")
    parser.add_argument("--check", action="store_true", help="say which artifacts are stale; write nothing")
    parser.add_argument("--reexport", action="store_true",
                        help="export every kernel afresh (Triton installed, no GPU needed) and fail where a committed "
                             "artifact is not what the export makes: its manifest's facts, its cubin's sections and "
                             "normalised SASS; write nothing")
    args = parser.parse_args()
    export_files.program = "triton_export"
    spec, base, out = read_spec(args.spec)
    kernels = [k for k in spec["kernels"] if not args.only or k["name"] in args.only]
    if args.reexport:
        import export_compare
        try:
            import triton  # noqa: F401 (the export needs it)
        except ImportError:
            fail("--reexport needs Triton (ci/install-exporters.sh installs the pinned version)")
        nvdisasm = export_compare.find_nvdisasm(project_root(base))
        if not nvdisasm:
            fail("--reexport compares normalised SASS and needs nvdisasm (ci/install-nvdisasm.sh, or HARNESS_NVDISASM)")
        problems = []
        for k in kernels:
            found = reexport_kernel(k, base, out, spec.get("target", {}), nvdisasm)
            problems += found
            print(f"{k['name']}: {'differs from its export' if found else 'what the export makes'}")
        for p in problems:
            print(p, file=sys.stderr)
        stale = len({p.split(":")[0].removesuffix(".cubin").removesuffix(".json") for p in problems})
        print(f"triton_export: {len(kernels) - stale} of {len(kernels)} committed exports are what the export makes")
        sys.exit(1 if problems else 0)
    if args.check:
        try:
            import triton
            version = triton.__version__
        except ImportError:
            version = None
        problems = [p for k in kernels for p in check_kernel(k, base, out, version)]
        for p in problems:
            print(p, file=sys.stderr)
        print(f"triton_export: {len(kernels) - len({p.split(':')[0] for p in problems})} of {len(kernels)} "
              f"up to date" + ("" if version else " (Triton is not installed: its version is not compared)"))
        sys.exit(1 if problems else 0)
    for k in kernels:
        export_kernel(k, base, out, spec.get("target", {}))


if __name__ == "__main__":
    main()
