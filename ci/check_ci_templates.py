#!/usr/bin/env python3
"""Checks CI files for GitHub Actions and GitLab CI without their services: strict YAML, then the
structural rules of their documentation that a typo breaks and a YAML parser accepts.

Debian 12 ships no schema of either format (nor actionlint or check-jsonschema), and CI here has
no network to ask GitHub or GitLab, so the rules are written out below, each from the format's
reference: only rules these files rely on, each of which fails a real pipeline when broken.

Usage:
  check_ci_templates.py github FILE...      check GitHub Actions workflows
  check_ci_templates.py gitlab FILE...      check GitLab CI files
  check_ci_templates.py self-test GITHUB_FILE GITLAB_FILE
                                            plant each break of BREAKS in a copy of the files and
                                            require the check to fail with the expected message
Exit status: 0 when every file passes, 1 when one does not, 2 on bad usage.
"""

import itertools
import re
import sys

import yaml
from yamllint import linter
from yamllint.config import YamlLintConfig

# yamllint's defaults, every warning an error. `on:` is GitHub's key, not a boolean; comments may
# sit one space after the text; lines may run to 120 columns as in the rest of the repository.
YAMLLINT_CONFIG = YamlLintConfig("""
extends: default
rules:
  document-start: disable
  line-length: {max: 120}
  truthy: {check-keys: false}
  comments: {min-spaces-from-content: 1}
""")


class Map(dict):
    """A YAML mapping that remembers the line of each key (1-based), for messages."""

    line = 0
    key_lines = None

    def line_of(self, key):
        return (self.key_lines or {}).get(key, self.line)


class LineLoader(yaml.SafeLoader):
    """YAML 1.1 as PyYAML reads it (GitLab reads YAML with Ruby's Psych, also YAML 1.1)."""


def _construct_map(loader, node):
    loader.flatten_mapping(node)
    result = Map()
    result.line = node.start_mark.line + 1
    result.key_lines = {}
    for key_node, value_node in node.value:
        key = loader.construct_object(key_node, deep=True)
        result[key] = loader.construct_object(value_node, deep=True)
        result.key_lines[key] = key_node.start_mark.line + 1
    return result


LineLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_map)


class GitHubLoader(LineLoader):
    """GitHub reads workflows as YAML 1.2: `on`, `yes` and `no` are strings, only true/false are booleans."""


GitHubLoader.yaml_implicit_resolvers = {
    first: [(tag, regexp) for tag, regexp in resolvers if tag != "tag:yaml.org,2002:bool"]
    for first, resolvers in LineLoader.yaml_implicit_resolvers.items()
}
GitHubLoader.add_implicit_resolver(
    "tag:yaml.org,2002:bool", re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$"), list("tTfF")
)


class Report:
    """The errors found in one file, as `file:line: message`."""

    def __init__(self, path):
        self.path = path
        self.errors = []

    def error(self, line, message):
        self.errors.append(f"{self.path}:{line}: {message}")


def lint_yaml(path, text, report):
    """yamllint in strict mode: syntax, duplicate keys, indentation, trailing spaces, tabs."""
    for problem in linter.run(text, YAMLLINT_CONFIG, path):
        report.error(problem.line, f"{problem.desc} (yamllint {problem.rule or 'syntax'})")


def strings_in(value):
    """Every string inside a YAML value, keys included."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from strings_in(key)
            yield from strings_in(item)
    elif isinstance(value, list):
        for item in value:
            yield from strings_in(item)


def find_cycle(edges):
    """A list of nodes that form a cycle in `edges` (node -> iterable of nodes), or None."""
    state = {}

    def visit(node, path):
        state[node] = "open"
        for target in edges.get(node, ()):
            if state.get(target) == "open":
                return path[path.index(target):] + [target]
            if target in edges and target not in state:
                cycle = visit(target, path + [target])
                if cycle:
                    return cycle
        state[node] = "done"
        return None

    for start in edges:
        if start not in state:
            cycle = visit(start, [start])
            if cycle:
                return cycle
    return None


def as_list(value):
    return value if isinstance(value, list) else [value]


# GitHub Actions (docs.github.com, "Workflow syntax for GitHub Actions").

GITHUB_TOP_KEYS = {"name", "run-name", "on", "permissions", "env", "defaults", "concurrency", "jobs"}
GITHUB_JOB_KEYS = {
    "name", "permissions", "needs", "if", "runs-on", "environment", "concurrency", "outputs", "env",
    "defaults", "steps", "timeout-minutes", "strategy", "continue-on-error", "container", "services",
    "uses", "with", "secrets", "snapshot",
}
GITHUB_STEP_KEYS = {
    "id", "if", "name", "uses", "run", "working-directory", "shell", "with", "env", "continue-on-error",
    "timeout-minutes",
}
GITHUB_ID = re.compile(r"^[A-Za-z_][A-Za-z0-9_-]*$")
# owner/repo[/path]@ref where ref is a version tag (v4, v4.1, v4.1.7) or a full commit SHA: a branch
# such as @main changes under the workflow.
PINNED_ACTION = re.compile(r"^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+(/[^@\s]+)?@(v\d+(\.\d+){0,2}|[0-9a-f]{40})$")
PINNED_DOCKER = re.compile(r"^docker://[^\s:@]+(:[^\s:@/]+|@sha256:[0-9a-f]{64})$")
EXPRESSION = re.compile(r"\$\{\{(.*?)\}\}", re.S)
# `harness bisect` walks every commit between its two ends: a shallow clone holds only the last.
BISECT = re.compile(r"\bharness\s+bisect\b")
# What a job reads of the harness's own source (a submodule in a project that copies the templates).
HARNESS_DIR_PATH = re.compile(r"\$\{?HARNESS_DIR\}?/[^\s\"']*|\$\{\{\s*env\.HARNESS_DIR\s*\}\}/[^\s\"']*")
# A program of the installed package: `harness <command>` (or the gating command, which is one),
# `harness-history-branch`. Not harness.tar.gz, harness-install/ or a folder named harness-history.
PACKAGE_PROGRAM = re.compile(r"(?<![\w./$-])(harness-history-branch|harness(?=[ \t]+[a-z]))\b|\$\{?HARNESS_GATE\b")
# The step that puts the unpacked harness on PATH, before which no step can run its programs.
UNPACK_HARNESS = re.compile(r"harness-install/bin[^\n]*GITHUB_PATH")
# A step that installs git (apt-get, dnf, apk, ...): actions/checkout needs it for submodules.
INSTALLS_GIT = re.compile(r"\binstall\b[^\n]*\bgit\b")


def check_github(doc, report):
    if not isinstance(doc, dict):
        report.error(1, "a workflow is a mapping of keys (on, jobs, ...)")
        return
    for key in doc:
        if key not in GITHUB_TOP_KEYS:
            report.error(doc.line_of(key), f"unknown top-level key '{key}'")
    if "on" not in doc:
        report.error(doc.line, "no 'on': the workflow never runs")
    jobs = doc.get("jobs")
    if not isinstance(jobs, dict) or not jobs:
        report.error(doc.line_of("jobs"), "'jobs' must be a non-empty mapping of job ids to jobs")
        return
    for text in strings_in({k: v for k, v in doc.items() if k != "jobs"}):
        check_github_expressions(text, None, doc.line_of("env"), "the workflow", report)
    for job_id, job in jobs.items():
        line = jobs.line_of(job_id)
        if not isinstance(job_id, str) or not GITHUB_ID.match(job_id):
            report.error(line, f"job id '{job_id}': letters, digits, '-' and '_', starting with a letter or '_'")
        if not isinstance(job, dict):
            report.error(line, f"job '{job_id}' must be a mapping")
            continue
        check_github_job(job_id, job, jobs, report)
    needs = {job_id: as_list(job.get("needs", [])) for job_id, job in jobs.items() if isinstance(job, dict)}
    cycle = find_cycle(needs)
    if cycle:
        report.error(jobs.line, f"jobs need each other in a circle: {' -> '.join(cycle)}")


def check_github_job(job_id, job, jobs, report):
    for key in job:
        if key not in GITHUB_JOB_KEYS:
            report.error(job.line_of(key), f"job '{job_id}': unknown key '{key}'")
    needs = as_list(job.get("needs", []))
    for name in needs:
        if name == job_id:
            report.error(job.line_of("needs"), f"job '{job_id}' needs itself")
        elif name not in jobs:
            report.error(job.line_of("needs"), f"job '{job_id}': needs '{name}', which is not a job of this workflow")
    if "uses" in job:
        check_github_uses(job["uses"], job.line_of("uses"), f"job '{job_id}'", report, workflow=True)
    else:
        if not job.get("runs-on"):
            report.error(job.line, f"job '{job_id}' has no 'runs-on'")
        steps = job.get("steps")
        if not isinstance(steps, list) or not steps:
            report.error(job.line_of("steps"), f"job '{job_id}' has no 'steps' (a non-empty list)")
        else:
            check_github_steps(job_id, steps, job.line_of("steps"), report)
    check_github_bisect_history(job_id, job, report)
    check_github_submodules(job_id, job, report)
    check_github_package_order(job_id, job, report)
    matrix = check_github_strategy(job_id, job, report)
    step_ids = {s.get("id") for s in job.get("steps") or [] if isinstance(s, dict) and "id" in s}
    context = {"matrix": matrix, "needs": set(needs), "steps": step_ids}
    for key, value in job.items():
        for text in strings_in(value):
            check_github_expressions(text, context, job.line_of(key), f"job '{job_id}'", report)


def check_github_bisect_history(job_id, job, report):
    """A job that runs `harness bisect` checks out the whole history (actions/checkout fetches one commit)."""
    steps = [s for s in job.get("steps") or [] if isinstance(s, dict)]
    if not any(isinstance(s.get("run"), str) and BISECT.search(s["run"]) for s in steps):
        return
    for step in steps:
        with_ = step.get("with")
        if (str(step.get("uses", "")).startswith("actions/checkout@") and isinstance(with_, dict)
                and str(with_.get("fetch-depth")) == "0"):
            return
    report.error(job.line, f"job '{job_id}' runs `harness bisect` without the whole history "
                           "(actions/checkout with fetch-depth: 0)")


def run_texts(job):
    """(step number, step, its `run` text) of each run step of a job."""
    steps = job.get("steps") if isinstance(job.get("steps"), list) else []
    return [(n, s, s["run"]) for n, s in enumerate(steps, 1) if isinstance(s, dict) and isinstance(s.get("run"), str)]


def check_github_submodules(job_id, job, report):
    """Every checkout clones the submodules, with git installed before it in a container.

    The templates are written for a project that keeps the harness as a submodule (HARNESS_DIR):
    a job that checks out without submodules lacks the harness's files, the headers its kernels
    include from other submodules, and, in a bisect, the copies from which each step checks out its
    commit's submodules (harness bisect never fetches). In a container without git,
    actions/checkout downloads the files through GitHub's API, which cannot fetch submodules."""
    steps = [s for s in job.get("steps") or [] if isinstance(s, dict)]
    checkouts = [(n, s) for n, s in enumerate(steps, 1) if str(s.get("uses", "")).startswith("actions/checkout@")]
    reads = sorted({m.group(0) for _, _, text in run_texts(job) for m in HARNESS_DIR_PATH.finditer(text)})
    why = f"; it reads {', '.join(reads)}" if reads else ""
    if any(isinstance(s.get("run"), str) and BISECT.search(s["run"]) for s in steps):
        why += "; harness bisect checks out each commit's submodules from the clone's copies"
    if reads and not checkouts:
        report.error(job.line, f"job '{job_id}' checks nothing out{why}")
    for number, step in checkouts:
        with_ = step.get("with") if isinstance(step.get("with"), dict) else {}
        if str(with_.get("submodules", "false")).lower() not in ("true", "recursive"):
            report.error(step.line, f"job '{job_id}' checks out without submodules (actions/checkout with "
                                    f"submodules: recursive), so a harness kept as a submodule is missing{why}")
        elif "container" in job and not any(INSTALLS_GIT.search(text) for n, _, text in run_texts(job) if n < number):
            report.error(step.line, f"job '{job_id}' checks out submodules in a container without git: install git "
                                    "in a step before actions/checkout (without it the checkout downloads the files "
                                    "through GitHub's API, which fetches no submodules)")


def check_github_package_order(job_id, job, report):
    """The installed harness's programs run only after the step that puts it on PATH."""
    unpacked = [n for n, _, text in run_texts(job) if UNPACK_HARNESS.search(text)]
    for number, step, text in run_texts(job):
        match = PACKAGE_PROGRAM.search(text)
        if not match:
            continue
        program = match.group(1) or "the gating command"
        if not unpacked:
            report.error(step.line, f"job '{job_id}', step {number} runs {program}, but the job never unpacks the "
                                    "harness (a step that adds harness-install/bin to GITHUB_PATH)")
        elif number < unpacked[0]:
            report.error(step.line, f"job '{job_id}', step {number} runs {program} before the harness is unpacked "
                                    f"(step {unpacked[0]} adds harness-install/bin to GITHUB_PATH)")


def check_github_strategy(job_id, job, report):
    """The job's matrix variables (None without a matrix); reports a malformed strategy."""
    strategy = job.get("strategy")
    if strategy is None:
        return None
    line = job.line_of("strategy")
    if not isinstance(strategy, dict) or not isinstance(strategy.get("matrix"), (dict, str)):
        report.error(line, f"job '{job_id}': 'strategy' needs a 'matrix'")
        return None
    matrix = strategy["matrix"]
    if isinstance(matrix, str):  # an expression such as ${{ fromJSON(...) }}: its keys are not known here
        return {"*"}
    names = set()
    for key, value in matrix.items():
        if key in ("include", "exclude"):
            if not isinstance(value, list) or not all(isinstance(e, dict) for e in value):
                report.error(matrix.line_of(key), f"job '{job_id}': matrix '{key}' must be a list of mappings")
            elif key == "include":
                names.update(k for e in value for k in e)
        elif isinstance(value, list) and value:
            names.add(key)
        elif isinstance(value, str) and EXPRESSION.search(value):
            names.add(key)
        else:
            report.error(matrix.line_of(key), f"job '{job_id}': matrix variable '{key}' must be a non-empty list")
    if not names:
        report.error(line, f"job '{job_id}': the matrix defines no variable")
    return names


def check_github_steps(job_id, steps, line, report):
    ids = set()
    for number, step in enumerate(steps, 1):
        where = f"job '{job_id}', step {number}"
        if not isinstance(step, dict):
            report.error(line, f"{where}: a step is a mapping")
            continue
        for key in step:
            if key not in GITHUB_STEP_KEYS:
                report.error(step.line_of(key), f"{where}: unknown key '{key}'")
        if ("uses" in step) == ("run" in step):
            report.error(step.line, f"{where}: a step has either 'uses' or 'run', exactly one")
        if "uses" in step:
            check_github_uses(step["uses"], step.line_of("uses"), where, report, workflow=False)
            for key in ("shell", "working-directory"):
                if key in step:
                    report.error(step.line_of(key), f"{where}: '{key}' belongs to a 'run' step")
        elif "with" in step:
            report.error(step.line_of("with"), f"{where}: 'with' belongs to a 'uses' step")
        if "id" in step:
            if not isinstance(step["id"], str) or not GITHUB_ID.match(step["id"]):
                report.error(step.line_of("id"), f"{where}: step id '{step['id']}' is not a valid id")
            elif step["id"] in ids:
                report.error(step.line_of("id"), f"{where}: step id '{step['id']}' is used twice")
            ids.add(step["id"])


def check_github_uses(uses, line, where, report, workflow):
    if not isinstance(uses, str):
        report.error(line, f"{where}: 'uses' must be a string")
    elif uses.startswith("./"):
        return  # an action or workflow of this repository, at the workflow's own commit
    elif uses.startswith("docker://") and not workflow:
        if not PINNED_DOCKER.match(uses):
            report.error(line, f"{where}: '{uses}' is not pinned to an image tag or digest")
    elif not PINNED_ACTION.match(uses):
        report.error(line, f"{where}: '{uses}' is not pinned to a version (owner/repo@vN, @vN.N.N or a commit SHA)")


def check_github_expressions(text, context, line, where, report):
    """${{ }} closes, and its matrix., needs. and steps. names exist where the expression runs."""
    if text.count("${{") != len(EXPRESSION.findall(text)):
        report.error(line, f"{where}: an expression '${{{{' is never closed with '}}}}'")
    for expression in EXPRESSION.findall(text):
        for name in re.findall(r"\bmatrix\.([A-Za-z_][A-Za-z0-9_-]*)", expression):
            matrix = context["matrix"] if context else None
            if matrix is None:
                report.error(line, f"{where}: uses matrix.{name}, but has no strategy.matrix")
            elif name not in matrix and "*" not in matrix:
                report.error(line, f"{where}: uses matrix.{name}, which the matrix does not define "
                                   f"(it defines {', '.join(sorted(matrix))})")
        for name in re.findall(r"\bneeds\.([A-Za-z_][A-Za-z0-9_-]*)", expression):
            if context is None or name not in context["needs"]:
                report.error(line, f"{where}: reads needs.{name}, but '{name}' is not in its 'needs'")
        for name in re.findall(r"\bsteps\.([A-Za-z_][A-Za-z0-9_-]*)", expression):
            if context is None or name not in context["steps"]:
                report.error(line, f"{where}: reads steps.{name}, but no step has the id '{name}'")


# GitLab CI (docs.gitlab.com, "CI/CD YAML syntax reference").

GITLAB_GLOBAL_KEYS = {
    "default", "include", "stages", "variables", "workflow", "spec",
    "image", "services", "cache", "before_script", "after_script",  # deprecated as globals, still keywords
}
# A job may not be named so (reference: "job names ... can't use these keywords").
GITLAB_RESERVED_NAMES = {
    "image", "services", "stages", "types", "before_script", "after_script", "variables", "cache", "include",
    "true", "false", "nil", "default", "workflow", "spec",
}
GITLAB_JOB_KEYS = {
    "after_script", "allow_failure", "artifacts", "before_script", "cache", "coverage", "dast_configuration",
    "dependencies", "environment", "extends", "hooks", "identity", "id_tokens", "image", "inherit",
    "interruptible", "manual_confirmation", "needs", "pages", "parallel", "release", "resource_group", "retry",
    "rules", "run", "script", "secrets", "services", "stage", "start_in", "tags", "timeout", "trigger",
    "variables", "when", "only", "except",
}
GITLAB_DEFAULT_KEYS = {
    "after_script", "artifacts", "before_script", "cache", "hooks", "id_tokens", "image", "interruptible",
    "retry", "services", "tags", "timeout",
}
GITLAB_ARTIFACT_KEYS = {"paths", "exclude", "expire_in", "expose_as", "name", "public", "access", "reports",
                        "untracked", "when"}
GITLAB_DEFAULT_STAGES = [".pre", "build", "test", "deploy", ".post"]
GITLAB_JOB_WHEN = {"on_success", "on_failure", "never", "always", "manual", "delayed"}
GITLAB_ARTIFACT_WHEN = {"on_success", "on_failure", "always"}
GITLAB_MAX_PARALLEL = 200


def check_gitlab(doc, report):
    if not isinstance(doc, dict):
        report.error(1, "a GitLab CI file is a mapping of jobs and global keywords")
        return
    jobs, templates = {}, {}
    for name, value in doc.items():
        line = doc.line_of(name)
        if not isinstance(name, str) or name in GITLAB_RESERVED_NAMES - GITLAB_GLOBAL_KEYS:
            report.error(line, f"'{name}' is a reserved word and cannot name a job")
        elif name in GITLAB_GLOBAL_KEYS:
            if isinstance(value, dict) and ("script" in value or "stage" in value):
                report.error(line, f"'{name}' is a reserved keyword and cannot name a job")
        elif name.startswith("."):
            templates[name] = value  # hidden: a template for extends, not run
        elif not isinstance(value, dict):
            report.error(line, f"job '{name}' must be a mapping")
        else:
            jobs[name] = value
    stages = check_gitlab_globals(doc, report)
    global_variables = doc.get("variables") if isinstance(doc.get("variables"), dict) else {}
    resolved = {name: resolve_extends(name, job, jobs, templates, report) for name, job in jobs.items()}
    for name, job in jobs.items():
        check_gitlab_job(name, job, resolved[name], resolved, stages, report)
        check_gitlab_bisect_history(name, job, resolved[name], global_variables, report)
        check_gitlab_submodules(name, job, resolved[name], global_variables, report)
    edges = {name: [n for n, _ in needed_jobs(job)] for name, job in resolved.items()}
    cycle = find_cycle(edges)
    if cycle:
        report.error(doc.line, f"jobs need each other in a circle: {' -> '.join(cycle)}")


def check_gitlab_globals(doc, report):
    """The pipeline's stages; reports malformed global keywords."""
    stages = GITLAB_DEFAULT_STAGES
    if "stages" in doc:
        declared = doc["stages"]
        if not isinstance(declared, list) or not all(isinstance(s, str) for s in declared):
            report.error(doc.line_of("stages"), "'stages' must be a list of names")
        else:
            stages = [".pre"] + declared + [".post"]
    variables = doc.get("variables", {})
    if not isinstance(variables, dict):
        report.error(doc.line_of("variables"), "'variables' must be a mapping")
    default = doc.get("default", {})
    if not isinstance(default, dict):
        report.error(doc.line_of("default"), "'default' must be a mapping")
    else:
        for key in default:
            if key not in GITLAB_DEFAULT_KEYS:
                report.error(default.line_of(key), f"'default' cannot set '{key}'")
    return stages


def resolve_extends(name, job, jobs, templates, report, seen=()):
    """The job with what it extends merged under it (deep for mappings), as GitLab does."""
    if name in seen:
        report.error(job.line_of("extends"), f"'{name}' extends itself through {' -> '.join(seen)}")
        return job
    merged = Map()
    for parent in as_list(job.get("extends", [])):
        base = jobs.get(parent, templates.get(parent))
        if not isinstance(base, dict):
            report.error(job.line_of("extends"), f"'{name}' extends '{parent}', which is not a job or template")
            continue
        deep_merge(merged, resolve_extends(parent, base, jobs, templates, report, seen + (name,)))
    deep_merge(merged, job)
    merged.line, merged.key_lines = job.line, job.key_lines
    return merged


def deep_merge(into, source):
    for key, value in source.items():
        if isinstance(value, dict) and isinstance(into.get(key), dict):
            merged = Map(into[key])
            deep_merge(merged, value)
            into[key] = merged
        else:
            into[key] = value


def needed_jobs(job):
    """(name, entry) of each job in `needs` (other pipelines' jobs left out)."""
    result = []
    for entry in as_list(job.get("needs", [])) if job.get("needs") is not None else []:
        if isinstance(entry, str):
            result.append((entry, {}))
        elif isinstance(entry, dict) and "job" in entry and "pipeline" not in entry and "project" not in entry:
            result.append((entry["job"], entry))
    return result


def check_gitlab_job(name, job, resolved, all_jobs, stages, report):
    for key in job:
        if key not in GITLAB_JOB_KEYS:
            report.error(job.line_of(key), f"job '{name}': unknown key '{key}'")
    if not any(k in resolved for k in ("script", "trigger", "run")):
        report.error(job.line, f"job '{name}' has no 'script' (nor 'trigger' or 'run'), itself or through 'extends'")
    check_gitlab_scripts(name, resolved, report)
    stage = resolved.get("stage", "test")
    if stage not in stages:
        report.error(job.line_of("stage"), f"job '{name}': stage '{stage}' is not in 'stages' ({', '.join(stages)})")
    if "when" in resolved and resolved["when"] not in GITLAB_JOB_WHEN:
        report.error(job.line_of("when"), f"job '{name}': 'when: {resolved['when']}' is not one of "
                                          f"{', '.join(sorted(GITLAB_JOB_WHEN))}")
    if "tags" in resolved and (not isinstance(resolved["tags"], list)
                               or not all(isinstance(t, str) for t in resolved["tags"])):
        report.error(job.line_of("tags"), f"job '{name}': 'tags' must be a list of strings")
    check_gitlab_needs(name, job, resolved, all_jobs, stages, report)
    check_gitlab_parallel(name, job, resolved, report)
    if "artifacts" in resolved:
        check_gitlab_artifacts(name, job, resolved["artifacts"], report)


def check_gitlab_bisect_history(name, job, resolved, global_variables, report):
    """A job that runs `harness bisect` clones the whole history (GitLab clones 20 commits by default)."""
    scripts = [resolved.get(key) for key in ("before_script", "script")]
    if not any(BISECT.search(text) for text in strings_in(scripts)):
        return
    variables = dict(global_variables)
    variables.update(resolved.get("variables") or {})
    if str(variables.get("GIT_DEPTH")) != "0":
        report.error(job.line, f"job '{name}' runs `harness bisect` without the whole history (GIT_DEPTH: \"0\")")


def check_gitlab_submodules(name, job, resolved, global_variables, report):
    """Every job clones the submodules (GIT_SUBMODULE_STRATEGY normal or recursive; GitLab's default
    is none): a harness kept as a submodule (HARNESS_DIR), headers the kernels include from
    submodules, and the copies each step of a bisect checks its commit's submodules out from."""
    variables = dict(global_variables)
    variables.update(resolved.get("variables") or {})
    if str(variables.get("GIT_STRATEGY", "fetch")) == "none":
        return  # the job clones nothing
    strategy = str(variables.get("GIT_SUBMODULE_STRATEGY", "none"))
    if strategy in ("normal", "recursive"):
        return
    scripts = [resolved.get(key) for key in ("before_script", "script")]
    reads = sorted({m.group(0) for text in strings_in(scripts) for m in HARNESS_DIR_PATH.finditer(text)})
    why = f"; it reads {', '.join(reads)}" if reads else ""
    if any(BISECT.search(text) for text in strings_in(scripts)):
        why += "; harness bisect checks out each commit's submodules from the clone's copies"
    report.error(job.line, f"job '{name}' clones without submodules (GIT_SUBMODULE_STRATEGY: {strategy}; give it "
                           f"recursive), so a harness kept as a submodule is missing{why}")


def check_gitlab_scripts(name, job, report):
    for key in ("before_script", "script", "after_script"):
        if key not in job:
            continue
        value = job[key]
        lines = [value] if isinstance(value, str) else value if isinstance(value, list) else None
        flat = None if lines is None else list(itertools.chain.from_iterable(as_list(x) for x in lines))
        if not flat or not all(isinstance(x, str) for x in flat):
            report.error(job.line_of(key), f"job '{name}': '{key}' must be a command or a list of commands")


def check_gitlab_needs(name, job, resolved, all_jobs, stages, report):
    index = {stage: i for i, stage in enumerate(stages)}
    needs = needed_jobs(resolved)
    for needed, entry in needs:
        if needed == name:
            report.error(job.line_of("needs"), f"job '{name}' needs itself")
        elif needed not in all_jobs:
            if not entry.get("optional"):
                report.error(job.line_of("needs"), f"job '{name}': needs '{needed}', which is not a job of this file")
        elif isinstance(entry.get("parallel"), dict):
            check_needs_matrix(name, job, needed, entry["parallel"], all_jobs[needed], report)
    dependencies = resolved.get("dependencies")
    if dependencies is None:
        return
    if not isinstance(dependencies, list):
        report.error(job.line_of("dependencies"), f"job '{name}': 'dependencies' must be a list of job names")
        return
    own_stage = index.get(resolved.get("stage", "test"), 0)
    for dependency in dependencies:
        if dependency not in all_jobs:
            report.error(job.line_of("dependencies"),
                         f"job '{name}': dependencies names '{dependency}', which is not a job of this file")
        elif "needs" in resolved and dependency not in {n for n, _ in needs}:
            report.error(job.line_of("dependencies"), f"job '{name}': dependency '{dependency}' must be in 'needs' too")
        elif "needs" not in resolved and index.get(all_jobs[dependency].get("stage", "test"), 0) >= own_stage:
            report.error(job.line_of("dependencies"),
                         f"job '{name}': dependency '{dependency}' is not in an earlier stage")


def check_needs_matrix(name, job, needed, parallel, needed_job, report):
    """needs:parallel:matrix names variables and values of the needed job's own matrix."""
    own = needed_job.get("parallel")
    own_matrix = own.get("matrix") if isinstance(own, dict) else None
    if not isinstance(own_matrix, list):
        report.error(job.line_of("needs"), f"job '{name}': needs a matrix of '{needed}', which has no parallel:matrix")
        return
    values = {}
    for entry in own_matrix:
        if isinstance(entry, dict):
            for variable, value in entry.items():
                values.setdefault(variable, set()).update(str(v) for v in as_list(value))
    for entry in parallel.get("matrix") or []:
        for variable, value in (entry.items() if isinstance(entry, dict) else []):
            if variable not in values:
                report.error(job.line_of("needs"),
                             f"job '{name}': needs '{needed}' with matrix variable '{variable}', which it does not define")
            elif not {str(v) for v in as_list(value)} <= values[variable]:
                report.error(job.line_of("needs"),
                             f"job '{name}': needs '{needed}' with {variable}={value}, which its matrix does not hold")


def check_gitlab_parallel(name, job, resolved, report):
    parallel = resolved.get("parallel")
    uses_node_index = any(re.search(r"\$\{?CI_NODE_(INDEX|TOTAL)\b", text)
                          for key in ("before_script", "script", "after_script", "artifacts")
                          for text in strings_in(resolved.get(key)))
    if parallel is None:
        if uses_node_index:
            report.error(job.line, f"job '{name}' reads CI_NODE_INDEX or CI_NODE_TOTAL, which only 'parallel' sets")
        return
    if isinstance(parallel, bool) or not isinstance(parallel, (int, dict)):
        report.error(job.line_of("parallel"), f"job '{name}': 'parallel' is a number or 'matrix:'")
    elif isinstance(parallel, int):
        if not 1 <= parallel <= GITLAB_MAX_PARALLEL:
            report.error(job.line_of("parallel"), f"job '{name}': 'parallel' must be 1 to {GITLAB_MAX_PARALLEL}")
    else:
        matrix = parallel.get("matrix")
        if not isinstance(matrix, list) or not matrix or not all(isinstance(e, dict) and e for e in matrix):
            report.error(job.line_of("parallel"), f"job '{name}': 'parallel: matrix' must be a list of mappings")
            return
        total = 0
        for entry in matrix:
            combinations = 1
            for variable, value in entry.items():
                values = as_list(value)
                if not values or not all(isinstance(v, (str, int, float)) and not isinstance(v, bool) for v in values):
                    report.error(job.line_of("parallel"),
                                 f"job '{name}': matrix variable '{variable}' must be a value or a list of values")
                combinations *= max(len(values), 1)
            total += combinations
        if total > GITLAB_MAX_PARALLEL:
            report.error(job.line_of("parallel"), f"job '{name}': the matrix makes {total} jobs, more than "
                                                  f"{GITLAB_MAX_PARALLEL}")


def check_gitlab_artifacts(name, job, artifacts, report):
    line = job.line_of("artifacts")
    if not isinstance(artifacts, dict):
        report.error(line, f"job '{name}': 'artifacts' must be a mapping")
        return
    for key in artifacts:
        if key not in GITLAB_ARTIFACT_KEYS:
            report.error(line, f"job '{name}': unknown artifacts key '{key}'")
    if artifacts.get("when", "on_success") not in GITLAB_ARTIFACT_WHEN:
        report.error(line, f"job '{name}': artifacts 'when' must be one of {', '.join(sorted(GITLAB_ARTIFACT_WHEN))}")
    paths = artifacts.get("paths", [])
    if not isinstance(paths, list) or not all(isinstance(p, str) for p in paths):
        report.error(line, f"job '{name}': artifacts 'paths' must be a list of paths")
        return
    if "expose_as" in artifacts:
        # The merge request links only plain paths (reference: artifacts:expose_as).
        if not paths:
            report.error(line, f"job '{name}': 'expose_as' needs artifacts 'paths'")
        for path in paths:
            if "*" in path or "$" in path or path.startswith("./"):
                report.error(line, f"job '{name}': 'expose_as' cannot expose '{path}' (no glob, variable or './')")
    reports = artifacts.get("reports", {})
    if not isinstance(reports, dict):
        report.error(line, f"job '{name}': artifacts 'reports' must be a mapping")
    elif "junit" in reports and not all(isinstance(p, str) and p for p in as_list(reports["junit"])):
        report.error(line, f"job '{name}': artifacts 'reports: junit' must be a path or a list of paths")


# Checking a file, and the self-test.

def check_text(kind, path, text):
    """The errors of one file's text, checked as `kind` (github or gitlab)."""
    report = Report(path)
    lint_yaml(path, text, report)
    try:
        doc = yaml.load(text, Loader=GitHubLoader if kind == "github" else LineLoader)
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        report.error(mark.line + 1 if mark else 1, f"not YAML: {getattr(error, 'problem', error)}")
        return report.errors
    (check_github if kind == "github" else check_gitlab)(doc, report)
    return report.errors


# The gate job of the GitHub template as it was before every job cloned the submodules: the
# history script read from the harness's source, which a checkout without submodules lacks.
GATE_WITH_SUBMODULES = """      - uses: actions/checkout@v5
        with:
          submodules: recursive
      - uses: actions/download-artifact@v7
        with:
          name: harness
      - name: Unpack the harness
        run: tar -xzf harness.tar.gz && echo "$PWD/harness-install/bin" >> "$GITHUB_PATH"
      # harness-history-branch is installed with the harness (ci/history-branch.sh in its source).
      - name: The history store (branch HARNESS_HISTORY_BRANCH)
        run: |
          git config --global --add safe.directory "$PWD"
          harness-history-branch fetch "$HARNESS_HISTORY_BRANCH" harness-history
"""
GATE_WITHOUT_SUBMODULES = """      - uses: actions/checkout@v5
      - name: The history store (branch HARNESS_HISTORY_BRANCH)
        run: |
          git config --global --add safe.directory "$PWD"
          bash "$HARNESS_DIR/ci/history-branch.sh" fetch "$HARNESS_HISTORY_BRANCH" harness-history
      - uses: actions/download-artifact@v7
        with:
          name: harness
      - name: Unpack the harness
        run: tar -xzf harness.tar.gz && echo "$PWD/harness-install/bin" >> "$GITHUB_PATH"
"""
# The installed history script run before the harness is on PATH.
GATE_UNPACK_THEN_HISTORY = GATE_WITH_SUBMODULES
GATE_HISTORY_THEN_UNPACK = """      - uses: actions/checkout@v5
        with:
          submodules: recursive
      - name: The history store (branch HARNESS_HISTORY_BRANCH)
        run: |
          git config --global --add safe.directory "$PWD"
          harness-history-branch fetch "$HARNESS_HISTORY_BRANCH" harness-history
      - uses: actions/download-artifact@v7
        with:
          name: harness
      - name: Unpack the harness
        run: tar -xzf harness.tar.gz && echo "$PWD/harness-install/bin" >> "$GITHUB_PATH"
"""

# Each break is planted in a copy of a template and must fail with its message: (kind, what is
# replaced, by what, a piece of the message expected). A break whose text the template no longer
# holds fails the self-test, so the breaks follow the templates.
BREAKS = [
    ("github", "needs: build\n", "needs: biuld\n", "needs 'biuld', which is not a job"),
    ("github", "needs: [build, shard]", "needs: [build, shards]", "needs 'shards', which is not a job"),
    ("github", "SHARD: ${{ matrix.shard }}", "SHARD: ${{ matrix.shards }}", "uses matrix.shards, which the matrix"),
    ("github", "actions/checkout@v5", "actions/checkout@main", "'actions/checkout@main' is not pinned"),
    ("github", "actions/upload-artifact@v6", "actions/upload-artifact", "'actions/upload-artifact' is not pinned"),
    ("github", "    runs-on: [self-hosted, gpu]\n", "", "job 'shard' has no 'runs-on'"),
    ("github", "needs.build.result", "needs.static.result", "reads needs.static, but 'static' is not in its"),
    ("github", "\njobs:\n", "\njobs:\n  static:\n    runs-on: ubuntu-24.04\n", "duplication of key"),
    ("github", "\non:\n", "\ntriggers:\n", "no 'on'"),
    ("github", "          fetch-depth: 0\n          submodules: recursive\n", "          submodules: recursive\n",
     "job 'bisect' runs `harness bisect` without the whole history"),
    ("gitlab", "needs: [harness-build, harness-gpu]", "needs: [harness-build, harness-gpus]",
     "needs 'harness-gpus', which is not a job"),
    ("gitlab", "stage: gate\n", "stage: report\n", "stage 'report' is not in 'stages'"),
    ("gitlab", "  script:\n    - harness run --static", "  scripts:\n    - harness run --static",
     "job 'harness-static' has no 'script'"),
    ("gitlab", "\nharness-static:\n", "\nvariables:\n", "duplication of key"),
    ("gitlab", "\nharness-static:\n", "\ncache:\n", "'cache' is a reserved keyword and cannot name a job"),
    ("gitlab", "\nharness-static:\n", "\ntrue:\n", "is a reserved word and cannot name a job"),
    ("gitlab", "  parallel: 4\n", "", "reads CI_NODE_INDEX or CI_NODE_TOTAL, which only 'parallel' sets"),
    ("gitlab", "  needs: [harness-build]\n  # Registers", "  dependencies: [harness-gate]\n  # Registers",
     "dependency 'harness-gate' is not in an earlier stage"),
    ("gitlab", "paths: [merged/]", "paths: [merged/*/report.html]", "'expose_as' cannot expose"),
    ("gitlab", '    GIT_DEPTH: "0"\n', '    GIT_DEPTH: "20"\n',
     "job 'harness-bisect' runs `harness bisect` without the whole history"),
    # The submodule layout the docs recommend (the harness in third_party/harness): every job clones
    # the submodules, and only the build job reads the harness's source.
    ("github", GATE_WITH_SUBMODULES, GATE_WITHOUT_SUBMODULES,
     "job 'gate' checks out without submodules (actions/checkout with submodules: recursive), so a harness kept "
     "as a submodule is missing; it reads $HARNESS_DIR/ci/history-branch.sh"),
    ("github", "          fetch-depth: 0\n          submodules: recursive\n", "          fetch-depth: 0\n",
     "job 'bisect' checks out without submodules (actions/checkout with submodules: recursive), so a harness "
     "kept as a submodule is missing; harness bisect checks out each commit's submodules"),
    ("github", "headers, and the project's build may need them.\n      - name: Install git, so that checkout clones "
     "submodules\n        run: apt-get update -qq && apt-get install -y -qq --no-install-recommends git "
     "ca-certificates\n", "headers, and the project's build may need them.\n",
     "job 'static' checks out submodules in a container without git"),
    ("github", GATE_UNPACK_THEN_HISTORY, GATE_HISTORY_THEN_UNPACK,
     "job 'gate', step 3 runs harness-history-branch before the harness is unpacked"),
    ("gitlab", "  GIT_SUBMODULE_STRATEGY: recursive\n", "",
     "job 'harness-build' clones without submodules (GIT_SUBMODULE_STRATEGY: none; give it recursive), so a "
     "harness kept as a submodule is missing; it reads $HARNESS_DIR/ci/install-deps.sh"),
    ("gitlab", '    GIT_DEPTH: "0"\n', '    GIT_DEPTH: "0"\n    GIT_SUBMODULE_STRATEGY: none\n',
     "job 'harness-bisect' clones without submodules (GIT_SUBMODULE_STRATEGY: none; give it recursive), so a "
     "harness kept as a submodule is missing; harness bisect checks out each commit's submodules"),
]


def self_test(github_path, gitlab_path):
    texts = {"github": open(github_path).read(), "gitlab": open(gitlab_path).read()}
    failures = 0
    for kind, old, new, expected in BREAKS:
        label = f"{kind}: {old.strip()!r} -> {new.strip()!r}"
        if old not in texts[kind]:
            print(f"self-test: {label}: the template no longer holds {old!r}; update BREAKS", file=sys.stderr)
            failures += 1
            continue
        errors = check_text(kind, f"planted-{kind}.yml", texts[kind].replace(old, new, 1))
        if not any(expected in e for e in errors):
            print(f"self-test: {label}: expected an error with {expected!r}, got:", file=sys.stderr)
            print("\n".join(f"  {e}" for e in errors) or "  no error", file=sys.stderr)
            failures += 1
    print(f"check-ci-templates self-test: {len(BREAKS) - failures} passed, {failures} failed")
    return 1 if failures else 0


def main(argv):
    if len(argv) >= 2 and argv[0] in ("github", "gitlab"):
        errors = []
        for path in argv[1:]:
            with open(path) as f:
                errors += check_text(argv[0], path, f.read())
        if errors:
            print("\n".join(errors), file=sys.stderr)
            return 1
        print(f"{argv[0]}: {' '.join(argv[1:])}: ok")
        return 0
    if len(argv) == 3 and argv[0] == "self-test":
        return self_test(argv[1], argv[2])
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
