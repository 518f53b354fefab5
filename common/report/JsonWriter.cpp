#include "report/ReportUtil.h"

namespace rsb {

void WriteJson(std::ostream& out, const RunInfo& info, const std::vector<Result>& results) {
  nlohmann::json j;
  j["schema"] = "reduce-scan-bench/1";
  j["suite"] = SuiteJson();
  j["date"] = info.date;
  j["host"] = info.host;
  j["command"] = info.command;
  j["kernels"] = info.kernelDir;
  j["kernel_files"] = info.kernelHashes;
  j["cold"] = info.cold;
  j["ci_target"] = info.ciTarget;
  // The first device, as in a file of one device; with several, all of them in `devices` and each
  // result's in its `device`.
  j["device"] = DeviceJson(info.devices.empty() ? DeviceRun() : info.devices.front());
  const bool several = info.devices.size() > 1;
  if (several) {
    j["devices"] = nlohmann::json::array();
    for (const auto& d : info.devices)
      j["devices"].push_back(DeviceJson(d));
  }
  j["results"] = nlohmann::json::array();
  for (const auto& r : results) {
    j["results"].push_back(ResultToJson(r));
    if (several)
      j["results"].back()["device"] = ResultDeviceJson(info, r);
  }
  // Paths and arguments may hold bytes that are not UTF-8: replaced (U+FFFD), never an exception.
  out << j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
}

}  // namespace rsb
