#!/usr/bin/env bash
# Exports the MLP example with the CLI and runs RuntimeThreadsTest (built with
# ThreadSanitizer) on it; any report fails the test.
set -euo pipefail
python=$1 test=$2
root=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
bash "$root/tests/deploy/export_mlp.sh" "$python" "$work"
TSAN_OPTIONS="halt_on_error=1 exitcode=66 second_deadlock_stack=1 suppressions=$root/tests/runtime/tsan.supp" \
  "$test" "$work/mlp.cuvil" "$work"/in{0,1,2,3,4}.bin
