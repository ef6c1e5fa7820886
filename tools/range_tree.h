// The range tree a summary shows: its scopes in depth-first order, with the parents of those with numbers
// (placeholders), each scope's depth and parent, ranges whose tally was dropped.
#pragma once

#include <cstdint>
#include <vector>

#include "collector/analysis.h"
#include "collector/log_reader.h"

namespace kc {

/// Scope ids shown by the summary, in depth-first order: the root, then every scope with an instance,
/// a launch or a kernel (inclusive), and every parent of those (so the tree has no gap).
std::vector<uint32_t> shownScopes(const LogData& log, const Summary& s);
/// True for a shown range with no instance, launch or kernel of its own or below it in the tree: a parent
/// shown only to hold its children (no instance of it was recorded: it was open before recording began
/// or when it stopped, e.g. around a capture window). Text tables mark its name (kPlaceholderMark).
bool isPlaceholder(const Summary& s, uint32_t scope_id);
/// True for a range of a summary-mode log whose tally was dropped at KCOUNT_MAX_KEYS (Summary::tally_dropped):
/// shown, without numbers, only to hold its children; not a placeholder. Text tables mark its name with
/// kTallyDroppedMark, explained once under the table (tallyDroppedNote()).
bool tallyDropped(const Summary& s, uint32_t scope_id);

/// True for a range with `instances` instances when the most repeated range has `most`: at least 9 in 10
/// of them count as "most repeated", the steady state the tools put first (summary's focus, diff's
/// verdicts, the exporter's kernels per instance), so that near-equal repeats are not told apart by one
/// instance: an inference server's sample and decode ranges (256 and 248 in one run) are both its steady
/// state, and the one with more work (kernels, GPU time) is the unit users ask about. Pure.
inline bool amongMostRepeated(uint64_t instances, uint64_t most) { return instances >= most - most / 10; }

/// Depth of each scope in the (repaired) range tree; the root is 0, a top-level range 1.
std::vector<uint32_t> scopeDepths(const Summary& s);
/// Each scope's parent by Summary::children, indexed by scope id (one per range of s.inclusive):
/// kRootScope for the root and for a scope no children list names.
std::vector<uint32_t> scopeParents(const Summary& s);

}  // namespace kc
