// ListGpuPciIds: the GPUs' PCI ids from sysfs, in CUDA's PCI_BUS_ID order.
#include <cstdlib>
#include <set>

#include "ffyolo/numa_binding.h"
#include "parse_text.h"
#include "sysfs.h"

namespace ffyolo {

namespace {

constexpr unsigned long kNvidiaVendor = 0x10de;
constexpr unsigned long kDisplayClass = 0x03;  // PCI base class "display controller" (VGA, 3D)

bool ReadHex(const std::string& path, unsigned long* value) {
  std::string text;
  if (!ReadSysfsValue(path, &text) || text.empty()) return false;
  char* end = nullptr;
  *value = std::strtoul(text.c_str(), &end, 16);
  return *end == '\0';
}

// Applies an index list ("2,0") the way CUDA does: parsing stops at the first
// entry that is not a valid, unused index. Other forms leave `gpus` as is.
std::vector<std::string> SelectVisible(const std::vector<std::string>& gpus, const std::string& visible) {
  if (!visible.empty() && visible.find_first_of("0123456789-") != 0) return gpus;  // GPU-<uuid>, MIG-...
  std::vector<std::string> out;
  std::set<int> used;
  for (const std::string& entry : SplitCommas(visible)) {
    int index = -1;
    if (!ParseInt(entry, &index) || index < 0 || index >= static_cast<int>(gpus.size()) || !used.insert(index).second)
      break;
    out.push_back(gpus[index]);
  }
  return out;
}

}  // namespace

std::vector<std::string> ListGpuPciIds(const std::string& sysfs_root, const EnvMap& env) {
  const std::string dir = sysfs_root + "/bus/pci/devices";
  std::vector<std::string> names, gpus;
  if (!ListSysfsDir(dir, &names)) return gpus;
  // Names are "dddd:bb:dd.f" in fixed-width hex, so sorted names are PCI bus order.
  for (const std::string& name : names) {
    unsigned long vendor = 0, device_class = 0;
    if (ReadHex(dir + "/" + name + "/vendor", &vendor) && vendor == kNvidiaVendor &&
        ReadHex(dir + "/" + name + "/class", &device_class) && (device_class >> 16) == kDisplayClass)
      gpus.push_back(name);
  }
  auto visible = env.find("CUDA_VISIBLE_DEVICES");
  return visible == env.end() ? gpus : SelectVisible(gpus, visible->second);
}

}  // namespace ffyolo
