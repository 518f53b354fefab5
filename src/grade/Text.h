// Text helpers of the grader: the lines of a child's or a compiler's output worth putting in a
// report, with the grader's temporary paths cut so that they read as the student wrote them.
#pragma once

#include "platform/Types.h"

#include <string>
#include <vector>

namespace rsb::grade {

// "a,b,c".
std::string Join(const std::vector<std::string>& v, const char* sep = ",");

// The first lines worth reading of a child's output: no blank lines, at most maxLines.
std::string Excerpt(const std::string& text, size_t maxLines = 20);

// How an item's detail begins where its task's host code does not build; its first line says why
// (the compiler's first error, or that the hand-in is not of this grader's task API).
inline constexpr const char* kHostCodeFails = "host code does not build: ";

// The line of a child's output that says most: the first with a file:line (a compiler's
// error), else the first with "error", else the first; of an item's detail that begins with
// kHostCodeFails, its first line.
std::string Headline(const std::string& text);

// The device a report names: "-" until a run named it; where the validating runs went to another
// (--check-platform), "D (correctness runs on C)".
std::string DeviceText(const std::string& device, const std::string& checkDevice);

// Paths inside the hand-in read as the student wrote them: kernels/Scan.cl:12:3.
std::string ShortenPaths(std::string text, const std::string& root);

}  // namespace rsb::grade
