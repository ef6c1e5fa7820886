// The launch hot path of libkcount.so: onLaunchCallback along the full path (launch_path.h). The overhead
// benchmark builds variants of the library with bench/launch_path_variants.cpp in place of this file.
#include "inject/callbacks.h"
#include "inject/launch_path.h"

namespace kc::inject {

void onLaunchCallback(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const CUpti_CallbackData* data) noexcept {
  launch_path::onLaunch<launch_path::FullPath>(domain, cbid, data);
}

}  // namespace kc::inject
