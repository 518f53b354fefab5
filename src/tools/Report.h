// `reduce-scan-bench report RESULTS.json [MORE.json...] -o report.html`: result files as one
// self-contained HTML page (report/HtmlPage.h): each file's device and provenance, its results'
// table, the per-kernel breakdown, the figure of `plot` as inline SVG (left out, saying why,
// without Python 3 and matplotlib) and, given two files, compare's comparison (BASE the first).
#pragma once

namespace rsb {

// argv[0] is "report". Returns the exit status: 0 written, 2 bad input (a file that is missing or
// not a result file, an output that is not .html), 3 system error (the output cannot be
// written).
int Report(int argc, char** argv);

}  // namespace rsb
