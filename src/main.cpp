// reduce-scan-bench: the benchmark run (src/run/Bench.h) or one of its subcommands (grade,
// compare, plot, tune: src/tools/); an error that escapes as its exit status. Exit statuses: 0
// all passed, 1 a validation failed, 2 bad input, 3 an OpenCL/system error (in a case or
// outside), 130 interrupted.
#include "platform/CLUtil.h"
#include "platform/Errors.h"
#include "platform/Subprocess.h"
#include "run/Bench.h"
#include "tasks/Tasks.h"
#include "tools/Compare.h"
#include "tools/Plot.h"
#include "tools/Tune.h"
#include "tools/grade/Grade.h"

#include <iostream>
#include <new>
#include <string>

using namespace rsb;

int main(int argc, char** argv) {
  SaveEnvironment();
  if (argc > 1 && std::string(argv[1]) == "grade")
    return Grade(argc - 1, argv + 1);
  if (argc > 1 && std::string(argv[1]) == "compare")
    return Compare(argc - 1, argv + 1);
  if (argc > 1 && std::string(argv[1]) == "plot")
    return Plot(argc - 1, argv + 1);
  if (argc > 1 && std::string(argv[1]) == "tune")
    return Tune(argc - 1, argv + 1, MakeTasks());
  try {
    return RunBenchmark(argc, argv);
  } catch (const UsageError& e) {
    std::cerr << "error: " << e.what() << "\n";
    return kExitUsage;
  } catch (const DeviceError& e) {
    std::cerr << "error: " << e.what() << "\n";
    return kExitDevice;
  } catch (const cl::Error& e) {
    std::cerr << "error: OpenCL call " << e.what() << " failed: " << ClErrorName(e.err()) << "\n";
    return kExitDevice;
  } catch (const std::bad_alloc&) {
    std::cerr << "error: out of host memory\n";
    return kExitDevice;
  } catch (const std::exception& e) {
    std::cerr << "error: " << e.what() << "\n";
    return kExitDevice;
  }
}
