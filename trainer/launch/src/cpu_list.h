// The kernel's CPU list format ("0-3,8-11"), used by sysfs cpulist files and
// by the plan text the launcher prints.
#pragma once

#include <string>
#include <vector>

namespace ffyolo {

// Parses "0-3,8-11" (whitespace around it ignored; "" is the empty list) into
// sorted unique CPU numbers. False on anything else.
bool ParseCpuList(const std::string& text, std::vector<int>* cpus);

// Sorted unique CPUs back to the compact form: {0,1,2,3,8} -> "0-3,8".
std::string FormatCpuList(const std::vector<int>& cpus);

}  // namespace ffyolo
