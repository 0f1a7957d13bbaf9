#!/usr/bin/env python3
"""Checks that CI files made from this repository's templates carry suites with `module:` variants
(kernels the project's own nvcc builds, named through an environment variable) end to end:

  1. one variables block for every job: the workflow's `env` (GitHub) or the file's `variables`
     (GitLab) sets HARNESS_PROJECT_BUILD, the project's build command, and every variable that the
     `module:` paths of the suites HARNESS_SUITES names read; no job or step sets one of them again,
     and no GitLab job that loads the suites stops inheriting them (the gate loads them too);
  2. every job that runs `harness run` runs the project's build (`eval "$HARNESS_PROJECT_BUILD"`)
     before it, in the same job, so that the module files are newer than the checkout (the harness
     refuses a module older than its sources); on GitHub after the harness is unpacked, since the
     build may use its CMake package;
  3. when a suite has module variants, the build command is not empty, and (GitHub) no module
     variable names `github.workspace`, the runner's folder rather than the job container's.

docs/ci-templates.md shows the templates set up for examples/tensor-kernels, whose suite `stencil`
runs an nvcc-built fatbin: `worked-example` puts its blocks into copies of the templates and checks
them with the example's suites, and `self-test` plants breaks in those copies, each of which must
fail with its message.

Usage:
  check_ci_modules.py github FILE PROJECT     check a GitHub Actions workflow; PROJECT: the folder
  check_ci_modules.py gitlab FILE PROJECT     HARNESS_SUITES is relative to (the repository root)
  check_ci_modules.py worked-example DOCS GITHUB_TEMPLATE GITLAB_TEMPLATE PROJECT
  check_ci_modules.py self-test DOCS GITHUB_TEMPLATE GITLAB_TEMPLATE PROJECT
Exit status: 0 when every file passes, 1 when one does not, 2 on bad usage.
"""

import glob
import os
import re
import sys

import yaml

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import check_ci_templates as templates  # noqa: E402  (the structural rules, loaders and reports)

BUILD = "HARNESS_PROJECT_BUILD"
RUNS_SUITES = re.compile(r"\bharness\s+run\b")
# A command that loads suites: it fails on a module variable that is not set.
LOADS_SUITES = re.compile(r"\bharness\s+(run|merge|check|list|baseline)\b|\$\{?HARNESS_GATE\b")
RUNS_BUILD = re.compile(r'\beval\s+"\$\{?' + BUILD + r'\}?"')
MODULE_VARIABLE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")
# The region of each template that a project fills in, and that the worked example replaces.
REGION = re.compile(r"^  # >>> THE PROJECT'S BUILD.*?^  # <<< THE PROJECT'S BUILD[^\n]*\n", re.S | re.M)
WORKED_EXAMPLE = re.compile(r"<!-- worked example: (github|gitlab) -->\n```yaml\n(.*?)```\n", re.S)


def module_suites(project, pattern, report, line):
    """[(suite file, variant, {variables its `module:` path reads})] of the suites `pattern` names."""
    found = []
    for word in str(pattern or "").split():
        for path in sorted(glob.glob(os.path.join(project, word))):
            try:
                with open(path) as f:
                    suite = yaml.safe_load(f)
            except (OSError, yaml.YAMLError) as error:
                report.error(line, f"cannot read the suite {path}: {error}")
                continue
            variants = suite.get("variants") if isinstance(suite, dict) else None
            for name, variant in (variants or {}).items():
                if isinstance(variant, dict) and isinstance(variant.get("module"), str):
                    found.append((os.path.relpath(path, project), name,
                                  set(MODULE_VARIABLE.findall(variant["module"]))))
    return found


def value_of(variable):
    """A variable's value: GitLab also writes {value: ..., description: ...}."""
    return variable.get("value") if isinstance(variable, dict) else variable


def check_shared_block(shared, where, line, suites, report):
    """The top-level block sets the build command and every module variable; the build is not empty
    when a suite has module variants."""
    if BUILD not in shared:
        report.error(line, f"{where} does not set {BUILD}, the project's build command (\"\" when no suite "
                           "has `module:` variants)")
    for suite, variant, variables in suites:
        for name in sorted(variables):
            if not value_of(shared.get(name)):
                report.error(line, f"{suite}: variant '{variant}' reads ${{{name}}} in its `module:` path, but "
                                   f"{where} does not set it (the jobs that run and gate the suites load them)")
    if suites and BUILD in shared and not str(value_of(shared[BUILD]) or "").strip():
        names = ", ".join(f"{suite} ({variant})" for suite, variant, _ in suites)
        report.error(line, f"{BUILD} is empty, but these suites have `module:` variants whose files the "
                           f"project builds: {names}")


def check_order(job_name, lines, report, line):
    """`lines` (each job's commands in order, as (text, what)) run the build before `harness run`."""
    runs = [i for i, (text, _) in enumerate(lines) if RUNS_SUITES.search(text)]
    if not runs:
        return
    builds = [i for i, (text, _) in enumerate(lines) if RUNS_BUILD.search(text)]
    if not builds:
        report.error(line, f"job '{job_name}' runs `harness run` without the project's build: run "
                           f"`eval \"${BUILD}\"` before it, in this job, so that the module files are built "
                           "where they run")
    elif builds[0] > runs[0]:
        report.error(line, f"job '{job_name}' runs the project's build ({lines[builds[0]][1]}) after "
                           f"`harness run` ({lines[runs[0]][1]})")


def check_github(doc, project, report):
    if not isinstance(doc, dict) or not isinstance(doc.get("jobs"), dict):
        return  # the structural check names what is wrong
    env = doc.get("env") if isinstance(doc.get("env"), dict) else {}
    suites = module_suites(project, env.get("HARNESS_SUITES"), report, doc.line_of("env"))
    shared = {BUILD} | {name for _, _, variables in suites for name in variables}
    check_shared_block(env, "the workflow's env", doc.line_of("env"), suites, report)
    for name in sorted(shared & set(env)):
        if "github.workspace" in str(env[name]):
            report.error(doc.line_of("env"), f"{name} names github.workspace, the runner's folder, not the "
                                             "job container's: give a path relative to the repository root")
    jobs = doc["jobs"]
    for job_name, job in jobs.items():
        if not isinstance(job, dict):
            continue
        for name in sorted(shared & set(job.get("env") or {})):
            report.error(job.line_of("env"), f"job '{job_name}' sets {name} in its own env: set it once, in "
                                             "the workflow's env, which every job sees")
        steps = [s for s in job.get("steps") or [] if isinstance(s, dict)]
        for number, step in enumerate(steps, 1):
            for name in sorted(shared & set(step.get("env") or {})):
                report.error(step.line_of("env"), f"job '{job_name}', step {number} sets {name} in its own "
                                                  "env: set it once, in the workflow's env")
        lines = [(str(s.get("run", "")), f"step {n}") for n, s in enumerate(steps, 1)]
        check_order(job_name, lines, report, jobs.line_of(job_name))
        unpacked = [n for n, (text, _) in enumerate(lines) if "harness-install" in text]
        built = [n for n, (text, _) in enumerate(lines) if RUNS_BUILD.search(text)]
        if built and (not unpacked or built[0] < unpacked[0]):
            report.error(jobs.line_of(job_name), f"job '{job_name}' runs the project's build before the harness "
                                                 "is unpacked into harness-install/ (the build may use its package)")


def check_gitlab(doc, project, report):
    if not isinstance(doc, dict):
        return
    variables = doc.get("variables") if isinstance(doc.get("variables"), dict) else {}
    suites = module_suites(project, value_of(variables.get("HARNESS_SUITES")), report, doc.line_of("variables"))
    shared = {BUILD} | {name for _, _, names in suites for name in names}
    check_shared_block(variables, "the file's variables block", doc.line_of("variables"), suites, report)
    default = doc.get("default") if isinstance(doc.get("default"), dict) else {}
    jobs = {name: job for name, job in doc.items()
            if isinstance(job, dict) and isinstance(name, str) and not name.startswith(".")
            and name not in templates.GITLAB_GLOBAL_KEYS}
    hidden = {name: job for name, job in doc.items() if isinstance(name, str) and name.startswith(".")}
    for job_name, job in jobs.items():
        # What is wrong with `extends` itself is the structural check's to report.
        resolved = templates.resolve_extends(job_name, job, jobs, hidden, templates.Report(report.path))
        line = doc.line_of(job_name)
        for name in sorted(shared & set(resolved.get("variables") or {})):
            report.error(line, f"job '{job_name}' sets {name} in its own variables: set it once, in the file's "
                               "variables, which every job sees")
        before = resolved.get("before_script", default.get("before_script", []))
        lines = [(text, "before_script") for text in templates.as_list(before) if isinstance(text, str)]
        lines += [(text, "script") for text in templates.as_list(resolved.get("script", [])) if isinstance(text, str)]
        check_order(job_name, lines, report, line)
        # The jobs that load the suites need their module variables; those that run them, the build too.
        needed = set()
        if any(LOADS_SUITES.search(text) for text, _ in lines):
            needed |= shared - {BUILD}
        if any(RUNS_SUITES.search(text) for text, _ in lines):
            needed.add(BUILD)
        inherit = (resolved.get("inherit") or {}).get("variables", True)
        for name in sorted(needed):
            if inherit is False or (isinstance(inherit, list) and name not in inherit):
                report.error(line, f"job '{job_name}' does not inherit {name} from the file's variables block "
                                   "(inherit: variables)")


def check_text(kind, path, text, project):
    """The structural errors of the file, then those of its module handling."""
    errors = templates.check_text(kind, path, text)
    if errors:
        return errors
    report = templates.Report(path)
    loader = templates.GitHubLoader if kind == "github" else templates.LineLoader
    (check_github if kind == "github" else check_gitlab)(yaml.load(text, Loader=loader), project, report)
    return report.errors


def worked_examples(docs_path, template_paths):
    """{kind: a copy of the template with the worked example's block in place of its region}."""
    with open(docs_path) as f:
        blocks = dict(WORKED_EXAMPLE.findall(f.read()))
    copies = {}
    for kind, path in template_paths.items():
        if kind not in blocks:
            raise SystemExit(f"{docs_path}: no worked example for {kind} (<!-- worked example: {kind} --> "
                             "before a ```yaml block)")
        with open(path) as f:
            text = f.read()
        if len(REGION.findall(text)) != 1:
            raise SystemExit(f"{path}: no region from '# >>> THE PROJECT'S BUILD' to '# <<< THE PROJECT'S BUILD'")
        copies[kind] = REGION.sub(lambda _: blocks[kind], text)
    return copies


def worked_example(docs_path, template_paths, project):
    failures = 0
    for kind, text in worked_examples(docs_path, template_paths).items():
        errors = check_text(kind, f"{template_paths[kind]} with the worked example of {docs_path}", text, project)
        if errors:
            print("\n".join(errors), file=sys.stderr)
            failures += 1
        else:
            print(f"{kind}: the worked example of {docs_path} with {project}: ok")
    return 1 if failures else 0


# Each break is planted in a copy of a template set up as the worked example and must fail with its
# message: (kind, what is replaced, by what, a piece of the message expected). None as what is
# replaced: the template as it is, unconfigured, with the example's suites.
BUILD_STEP = """\
      - name: The project's build (HARNESS_PROJECT_BUILD)
        run: eval "$HARNESS_PROJECT_BUILD"
"""
STATIC_STEP = """\
      # Registers, spills, shared memory and occupancy of every variant against baselines/<suite>/sm_XX.csv;
      # the harness appends its summary.md to the job summary.
      - name: Static tier of every suite
        run: harness run --static --ci $HARNESS_SUITES --out static
"""
UNPACK_STEP = """\
      - name: Unpack the harness
        run: tar -xzf harness.tar.gz && echo "$PWD/harness-install/bin" >> "$GITHUB_PATH"
      # In the job that runs them, so that the module files are newer than the checkout (docs/ci-templates.md).
"""
BUILD_ONLY_STEP = """\
      - name: The project's build (HARNESS_PROJECT_BUILD)
        run: eval "$HARNESS_PROJECT_BUILD"
"""
GATE_JOB = "harness-gate:\n  stage: gate\n"
BREAKS = [
    ("github", None, None, "variant 'nvcc' reads ${EXAMPLE_BUILD_DIR} in its `module:` path, but the workflow's"),
    ("github", None, None, "HARNESS_PROJECT_BUILD is empty, but these suites have `module:` variants"),
    ("github", "  EXAMPLE_BUILD_DIR: build\n", "", "reads ${EXAMPLE_BUILD_DIR} in its `module:` path, but the"),
    ("github", "  static:\n    needs: build\n", "  static:\n    needs: build\n    env: {EXAMPLE_BUILD_DIR: build}\n",
     "job 'static' sets EXAMPLE_BUILD_DIR in its own env"),
    ("github", "      - name: Shard", "      - env:\n          HARNESS_PROJECT_BUILD: ''\n        name: Shard",
     "job 'shard', step 6 sets HARNESS_PROJECT_BUILD in its own env"),
    ("github", "  HARNESS_PROJECT_BUILD: >-\n", "  PROJECT_BUILD: >-\n",
     "the workflow's env does not set HARNESS_PROJECT_BUILD"),
    ("github", "  EXAMPLE_BUILD_DIR: build\n", "  EXAMPLE_BUILD_DIR: ${{ github.workspace }}/build\n",
     "EXAMPLE_BUILD_DIR names github.workspace"),
    ("github", BUILD_STEP + "      # Each suite", "      # Each suite",
     "job 'shard' runs `harness run` without the project's build"),
    ("github", BUILD_STEP + STATIC_STEP, STATIC_STEP + BUILD_STEP,
     "job 'static' runs the project's build (step 6) after `harness run` (step 5)"),
    ("github", UNPACK_STEP + BUILD_ONLY_STEP, BUILD_ONLY_STEP + UNPACK_STEP,
     "job 'static' runs the project's build before the harness is unpacked"),
    ("gitlab", None, None, "variant 'nvcc' reads ${EXAMPLE_BUILD_DIR} in its `module:` path, but the file's"),
    ("gitlab", None, None, "HARNESS_PROJECT_BUILD is empty, but these suites have `module:` variants"),
    ("gitlab", "  EXAMPLE_BUILD_DIR: build\n", "", "reads ${EXAMPLE_BUILD_DIR} in its `module:` path, but the"),
    ("gitlab", GATE_JOB, GATE_JOB + "  variables:\n    EXAMPLE_BUILD_DIR: ''\n",
     "job 'harness-gate' sets EXAMPLE_BUILD_DIR in its own variables"),
    ("gitlab", GATE_JOB, GATE_JOB + "  inherit:\n    variables: [HARNESS_SUITES]\n",
     "job 'harness-gate' does not inherit EXAMPLE_BUILD_DIR"),
    ("gitlab", "  extends: .harness-suites\n  tags: [gpu]\n", "  tags: [gpu]\n",
     "job 'harness-gpu' runs `harness run` without the project's build"),
    ("gitlab", "    - eval \"$HARNESS_PROJECT_BUILD\"\n", "", "job 'harness-static' runs `harness run` without"),
    ("gitlab", "    - harness run --static --ci $HARNESS_SUITES --out static\n",
     "    - harness run --static --ci $HARNESS_SUITES --out static\n  before_script:\n    - echo no build\n",
     "job 'harness-static' runs `harness run` without the project's build"),
]


def self_test(docs_path, template_paths, project):
    examples = worked_examples(docs_path, template_paths)
    failures = 0
    for kind, old, new, expected in BREAKS:
        if old is None:
            label = f"{kind}: the template as it is"
            with open(template_paths[kind]) as f:
                text = f.read()
        else:
            label = f"{kind}: {old.strip()!r} -> {new.strip()!r}"
            if old not in examples[kind]:
                print(f"self-test: {label}: the worked example no longer holds {old!r}; update BREAKS",
                      file=sys.stderr)
                failures += 1
                continue
            text = examples[kind].replace(old, new, 1)
        errors = check_text(kind, f"planted-{kind}.yml", text, project)
        if not any(expected in e for e in errors):
            print(f"self-test: {label}: expected an error with {expected!r}, got:", file=sys.stderr)
            print("\n".join(f"  {e}" for e in errors) or "  no error", file=sys.stderr)
            failures += 1
    print(f"check-ci-templates module self-test: {len(BREAKS) - failures} passed, {failures} failed")
    return 1 if failures else 0


def main(argv):
    if len(argv) == 3 and argv[0] in ("github", "gitlab"):
        with open(argv[1]) as f:
            errors = check_text(argv[0], argv[1], f.read(), argv[2])
        if errors:
            print("\n".join(errors), file=sys.stderr)
            return 1
        print(f"{argv[0]}: {argv[1]}: module: suites ok (suites from {argv[2]})")
        return 0
    if len(argv) == 5 and argv[0] in ("worked-example", "self-test"):
        paths = {"github": argv[2], "gitlab": argv[3]}
        return (worked_example if argv[0] == "worked-example" else self_test)(argv[1], paths, argv[4])
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
