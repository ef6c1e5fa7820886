#!/usr/bin/env bash
# readConfig() reads every KCOUNT_* setting through a kc::inject::SettingName (inject/settings.h): a name
# that kSettings lists compiles, and one that it does not list is a compile error, so a setting cannot be
# read without being listed (and then warned about as a misspelling of another). Compiles
# tests/inject/compile/setting_name.cpp with -fsyntax-only and the project's C++ compiler.
# Usage: test_setting_names.sh CXX
set -u
cxx=$1
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
src=$root/tests/inject/compile/setting_name.cpp
fail=0
compile() { "$cxx" -std=c++20 -fsyntax-only -I"$root" -DKC_NAME="\"$1\"" "$src" 2>&1; }

# Names that kSettings lists compile (its first, one readConfig() reads, its last).
for n in KCOUNT_OUTPUT KCOUNT_MODE KCOUNT_TORCH_NVTX_LIB; do
  if out=$(compile "$n"); then
    echo "PASS setting names: listed $n compiles as a SettingName"
  else
    echo "FAIL setting names: listed $n does not compile: $out"; fail=1
  fi
done

# A name it does not list (a misspelling, a name not yet added, a non-setting) does not.
for n in KCOUNT_MDOE KCOUNT_NEW_SETTING KCOUNT_WARNED; do
  if out=$(compile "$n"); then
    echo "FAIL setting names: unlisted $n compiles"; fail=1
  elif ! grep -q settingNameNotInKSettings <<<"$out"; then
    echo "FAIL setting names: unlisted $n fails for another reason: $out"; fail=1
  else
    echo "PASS setting names: unlisted $n is a compile error naming settingNameNotInKSettings"
  fi
done
exit $fail
