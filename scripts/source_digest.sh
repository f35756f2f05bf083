#!/usr/bin/env bash
# source_digest.sh [REV]: a short SHA-256 of the files that decide what the
# build produces (CMakeLists.txt, Makefile, cmake/, include/, src/, tests/,
# tools/): each file's SHA-256 and path, in path order, hashed once more.
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
paths=(CMakeLists.txt Makefile cmake include src tests tools)
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
