// The path of a summary row (rowPath()), which summary_output.cpp and kernels_output.cpp show alike.
// Internal to tools/.
#pragma once

#include <cstdint>
#include <string>

#include "collector/log_reader.h"

namespace kc {

/// Pseudo scope id of the row of records whose range is unknown (Summary::unresolved) in the loops over
/// shown scopes; never a real scope id (those are capped far below, docs/reader-guarantees.md).
inline constexpr uint32_t kUnresolvedRow = UINT32_MAX;

/// Path of a row as CSV and the verdict lines show it: the scope path, "(no range)" for the root, the
/// unknown-range label for kUnresolvedRow.
std::string rowPath(const LogData& d, uint32_t id);

}  // namespace kc
