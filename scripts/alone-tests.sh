#!/usr/bin/env bash
# The tests that make test runs alone, one at a time, after the others:
# those whose own function calls testutil.Alone(t) (a call in a helper is
# not found here, and testutil.Alone fails such a test in the shared line).
#
#   scripts/alone-tests.sh pattern    ^(TestA|TestB)$, for go test -run and -skip
#   scripts/alone-tests.sh packages   the packages that define a test of one
#                                     of those names: a test of the same name
#                                     in another package is skipped by the
#                                     shared line too, so the alone line runs it
set -euo pipefail
cd "$(dirname "$0")/.."
mapfile -t files < <(find . -name '*_test.go' -not -path './tools/*' | sort)
names=$(awk '
	/^func / { name = "" }
	/^func Test[A-Za-z0-9_]*\(t \*testing\.T\)/ { name = $2; sub(/\(.*/, "", name) }
	/testutil\.Alone\(t\)/ && name != "" { print name }
' "${files[@]}" | sort -u)
if [ -z "$names" ]; then
	echo "scripts/alone-tests.sh: no test calls testutil.Alone(t)" >&2
	exit 1
fi
case "${1:-}" in
pattern)
	echo "^($(paste -sd'|' <<<"$names"))\$"
	;;
packages)
	grep -lE "^func ($(paste -sd'|' <<<"$names"))\(t \*testing\.T\)" "${files[@]}" |
		xargs -n1 dirname | sort -u | sed 's|$|/|'
	;;
*)
	echo "usage: scripts/alone-tests.sh pattern|packages" >&2
	exit 2
	;;
esac
