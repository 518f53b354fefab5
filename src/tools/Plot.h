// `reduce-scan-bench plot RESULTS.json [MORE.json...] -o FILE.png|.svg`: draws result files with
// scripts/plot.py (Python 3 and matplotlib): per task, throughput against n per variant (log-log)
// and utilisation per variant against its ceiling; several files overlay as devices. The files
// and the output are checked here first, so that bad input is exit 2 whatever Python does.
#pragma once

#include <string>
#include <vector>

namespace rsb {

// argv[0] is "plot". Returns the exit status: 0 written, 2 bad input (a file that is missing or
// not a result file, an output that is not .png or .svg), 3 system error (no python3 with
// matplotlib: the message names the Debian package python3-matplotlib; the output folder cannot
// be written; the script failed).
int Plot(int argc, char** argv);

// The figure of result files (checked already) as SVG text, drawn by scripts/plot.py into a
// temporary file beside `output` (removed after). DeviceError naming `option` and `output` where it
// cannot be drawn (no python3 with matplotlib: the message names the package; the script failed).
std::string PlotSvg(const std::vector<std::string>& files, const std::string& option,
                    const std::string& output);

}  // namespace rsb
