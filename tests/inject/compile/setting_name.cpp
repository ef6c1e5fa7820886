// Not built with the project: tests/cli/test_setting_names.sh compiles it with -DKC_NAME='"KCOUNT_..."'
// (syntax check only) to see that a SettingName of a name kSettings lists compiles and one of a name it
// does not list is a compile error naming kc::inject::detail::settingNameNotInKSettings.
#include "inject/settings.h"

const char* settingValue() { return kc::inject::getSetting(KC_NAME); }
