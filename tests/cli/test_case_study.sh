#!/usr/bin/env bash
# Runs tests/cli/test_case_study.py with a python3 that has matplotlib (Debian's python3-matplotlib is
# installed for /usr/bin/python3; $PYTHON, then python3 on PATH, are tried first).
# Usage: test_case_study.sh BUILD_DIR KC_MAKE_LOG
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
for py in ${PYTHON:-} python3 /usr/bin/python3; do
  if "$py" -c 'import matplotlib' >/dev/null 2>&1; then
    exec "$py" "$here/test_case_study.py" "$@"
  fi
done
echo "FAIL case study: no python3 with matplotlib (scripts/install_deps.sh installs python3-matplotlib)"
exit 1
