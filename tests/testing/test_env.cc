#include "testing/test_env.h"

#include "ffr/env.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace fs = std::filesystem;

namespace ffyolo::testing {

ScratchDir::ScratchDir(const std::string& name) {
  const ::testing::TestInfo* info = ::testing::UnitTest::GetInstance()->current_test_info();
  std::string test = info ? std::string(info->test_suite_name()) + "." + info->name() : "global";
  for (char& c : test)
    if (c == '/') c = '_';
  path_ = BinaryPath("test_scratch/" + test + "." + name + "." + std::to_string(::getpid()));
  RemoveTree(path_);
  fs::create_directories(path_);
}

ScratchDir::~ScratchDir() { RemoveTree(path_); }

void RemoveTree(const std::string& path) {
  const ffr::Status s = ffr::Env::Default()->RemoveTree(path);
  if (!s.ok()) ADD_FAILURE() << s.ToString();
}

std::string SharedPath(const std::string& relative) {
  std::string p = std::string(FFYOLO_SHARED_DIR) + "/" + relative;
  return fs::exists(p) ? p : std::string();
}

std::string SourcePath(const std::string& relative) { return std::string(FFYOLO_SOURCE_DIR) + "/" + relative; }

std::string BinaryPath(const std::string& relative) { return std::string(FFYOLO_BINARY_DIR) + "/" + relative; }

std::string ReferencePython() {
  const char* venv = std::getenv("REF_VENV");
  const std::string python = (venv ? std::string(venv) : SourcePath(".venv-ref")) + "/bin/python";
  return access(python.c_str(), X_OK) == 0 ? python : std::string();
}

std::string Ultralytics8Python() {
  const char* venv = std::getenv("U8_VENV");
  const std::string python = (venv ? std::string(venv) : SourcePath(".venv-u8")) + "/bin/python";
  return access(python.c_str(), X_OK) == 0 ? python : std::string();
}

std::string ReadFileToString(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

bool WriteStringToFile(const std::string& path, const std::string& data) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(data.data(), static_cast<std::streamsize>(data.size()));
  return static_cast<bool>(out);
}

}  // namespace ffyolo::testing
