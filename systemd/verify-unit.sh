#!/bin/sh
# verify-unit.sh UNIT_FILE: `systemd-analyze verify`, strict. systemd-analyze exits 0 on
# unknown keys and unparsable values (it logs "..., ignoring" and carries on), so any
# output at all counts as a failure here, as does a non-zero exit.
set -u
unit=$1
output=$(systemd-analyze verify --man=no "$unit" 2>&1)
status=$?
if [ $status -ne 0 ] || [ -n "$output" ]; then
  printf '%s\n' "$output"
  echo "verify-unit: REJECTED $unit (exit $status)"
  exit 1
fi
echo "verify-unit: OK $unit"
