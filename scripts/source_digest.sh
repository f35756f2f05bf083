#!/usr/bin/env bash
# source_digest.sh [REV]: a short SHA-256 of the files that decide what the
# build produces and what a run executes (CMakeLists.txt, Makefile,
# pyproject.toml, cmake/, include/, python/, src/, tests/, tools/): each
# file's SHA-256 and path, in path order, hashed once more. python/ counts
# because the device's Python steps (the package's tests, the model) run it.
# Digests in device logs up to run 114 were taken without python/ and
# pyproject.toml: to match one, run that commit's own copy of this script,
# from scripts/ (cd scripts && git show REV:scripts/source_digest.sh | bash -s REV).
#
#   scripts/source_digest.sh          the files on disk (git-ignored ones left out)
#   scripts/source_digest.sh REV      the files of commit REV
#
# A copy of the tree whose .git is older than its files (a GPU machine's copy
# of a working tree) reports a stale commit; its digest still names the
# sources. device-check.sh prints it at the top of device.log and in
# summary.txt; run this with a commit here to find which commit ran.
set -euo pipefail
cd "$(dirname "$0")/.."
paths=(CMakeLists.txt Makefile pyproject.toml cmake include python src tests tools)
list() {
    if [ $# -ge 1 ]; then
        git ls-tree -r --name-only "$1" -- "${paths[@]}" | LC_ALL=C sort | while IFS= read -r f; do
            printf '%s  %s\n' "$(git show "$1:$f" | sha256sum | cut -d' ' -f1)" "$f"
        done
    else
        local present=()
        for p in "${paths[@]}"; do [ -e "$p" ] && present+=("$p"); done
        # check-ignore exits 1 when no path is ignored: not an error here
        find "${present[@]}" -type f -print |
            { git check-ignore --stdin --non-matching --verbose || [ $? -eq 1 ]; } |
            awk -F'\t' '$1 == "::" { print $2 }' |
            LC_ALL=C sort | while IFS= read -r f; do
                printf '%s  %s\n' "$(sha256sum <"$f" | cut -d' ' -f1)" "$f"
            done
    fi
}
list "$@" | sha256sum | cut -c1-16
