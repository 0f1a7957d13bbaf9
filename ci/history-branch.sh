#!/usr/bin/env bash
# Keeps a history store (docs/history.md) on a branch of the repository, for the CI templates
# (docs/ci-templates.md, "History"). Run from the top of the repository's checkout, with git and
# harness on PATH. The package installs it as bin/harness-history-branch, beside bin/harness, so that a
# job runs it from the harness it unpacked, not from the harness's source.
#
#   ci/history-branch.sh fetch BRANCH DIR              check out the store of BRANCH into DIR (a git
#                                                     worktree); an empty folder when BRANCH does not exist
#                                                     yet. A shallow clone is deepened to the whole history
#   ci/history-branch.sh record BRANCH DIR RESULTS.json...
#                                                     record the runs at HEAD into the store in DIR (fetched
#                                                     first when DIR is missing) and push BRANCH
#
# The store is append-only, one file per run named by its content: two jobs never write the same
# file, so when another job pushed first, this one's commit goes onto theirs without a conflict
# and the push is tried again (up to 5 times). Nothing is ever force-pushed.
# HARNESS_HISTORY_REMOTE: the remote (a name or a URL with credentials) to fetch and push; default origin.
# Exit status: 0 when done, 1 when the push kept failing, 2 on bad usage.
set -euo pipefail

usage() {
  echo "usage: $(basename "$0") fetch BRANCH DIR | record BRANCH DIR RESULTS.json..." >&2
  exit 2
}
(($# >= 3)) || usage
action="$1" branch="$2" dir="$3"
shift 3
remote="${HARNESS_HISTORY_REMOTE:-origin}"
git check-ref-format --branch "$branch" >/dev/null || usage

fetch() {
  [ -e "$dir/.git" ] && return 0
  # History pages order commits by the whole first-parent line of HEAD.
  if [ "$(git rev-parse --is-shallow-repository)" = true ]; then
    git fetch --quiet --unshallow "$remote" || echo "history: could not fetch the whole history" >&2
  fi
  if git fetch --quiet "$remote" "+refs/heads/$branch:refs/harness-history/$branch" 2>/dev/null; then
    git worktree add --quiet --detach "$dir" "refs/harness-history/$branch"
  else
    echo "history: no branch $branch yet; starting an empty store in $dir"
    git worktree add --quiet --detach "$dir" HEAD
    git -C "$dir" checkout --quiet --orphan "harness-history-$$"
    git -C "$dir" rm -r -f --quiet --ignore-unmatch .
  fi
}

record() {
  (($# >= 1)) || usage
  fetch
  harness history record --store "$dir" --repo . --commit "$(git rev-parse HEAD)" "$@"
  git -C "$dir" add -A .
  if git -C "$dir" diff --cached --quiet; then
    echo "history: these runs were recorded before"
    return 0
  fi
  git -C "$dir" -c user.name="harness history" -c user.email="harness-history@localhost" \
    commit --quiet -m "history: $(git rev-parse --short=12 HEAD)"
  for attempt in 1 2 3 4 5; do
    if git -C "$dir" push --quiet "$remote" "HEAD:refs/heads/$branch"; then
      echo "history: pushed to $branch"
      return 0
    fi
    echo "history: $branch moved (attempt $attempt); putting this run on top of it" >&2
    sleep $((attempt * 2))
    git -C "$dir" fetch --quiet "$remote" "+refs/heads/$branch:refs/harness-history/$branch"
    git -C "$dir" -c user.name="harness history" -c user.email="harness-history@localhost" \
      rebase --quiet "refs/harness-history/$branch"
  done
  echo "history: could not push $branch" >&2
  return 1
}

case "$action" in
  fetch) fetch ;;
  record) record "$@" ;;
  *) usage ;;
esac
