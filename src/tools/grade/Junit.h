// JUnit XML for any CI (`grade --format junit`: DIR/junit.xml): a <testsuite> per hand-in, a
// <testcase> per item, failed (<failure>, a validation or a point lost) or in error (<error>: an
// OpenCL error, a crash, a timeout, code that does not build), its points in <system-out>.
#pragma once

#include "tools/grade/Report.h"

#include <string>
#include <vector>

namespace rsb::grade {

// The hand-in's <testsuite name="NAME" tests= failures= errors=>, a <testcase classname="NAME"
// name="ITEM"> per item.
std::string JunitTestsuite(const RunInfo& run, const HandinGrade& h);
// The document: <testsuites name="RUBRIC" tests= failures= errors=> around the suites (in the
// class's order), its counts summed from them.
std::string JunitDocument(const std::string& rubricName, const std::vector<std::string>& suites);

}  // namespace rsb::grade
