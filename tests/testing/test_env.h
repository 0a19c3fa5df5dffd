// Helpers shared by the test suites: scratch directories and the ../shared data.
#pragma once

#include <string>

namespace ffyolo::testing {

// A fresh empty directory under the build tree, removed when the object dies.
class ScratchDir {
 public:
  explicit ScratchDir(const std::string& name);
  ~ScratchDir();
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;

  const std::string& path() const { return path_; }
  std::string operator/(const std::string& child) const { return path_ + "/" + child; }

 private:
  std::string path_;
};

// Env::RemoveTree of `path`, failing the current test on an error. The tests
// remove trees through it, never with std::filesystem::remove_all, which
// CUDA LibTorch's copy breaks (see Env::RemoveTree).
void RemoveTree(const std::string& path);

// ../shared/<relative>, or "" when ../shared is absent.
std::string SharedPath(const std::string& relative);

// <source tree>/<relative> (configs, scripts, the fuzz corpus) and <build tree>/<relative>. Only
// test_env.cc knows the two trees, so that no other test source depends on where they are: each
// compiles the same in every checkout and build folder, and ccache hits across them.
std::string SourcePath(const std::string& relative);
std::string BinaryPath(const std::string& relative);

// The Python of the Ultralytics v7.0 reference environment ($REF_VENV, else
// .venv-ref in the source tree, made by scripts/reference-venv.sh), or "" when
// there is none.
std::string ReferencePython();
// The Python of the Ultralytics 8 reference environment ($U8_VENV, else .venv-u8 in the source tree, made by
// scripts/ultralytics8-venv.sh: the `ultralytics` package 8.4), or "" when there is none.
std::string Ultralytics8Python();

// Reads a whole file into a string (empty on failure).
std::string ReadFileToString(const std::string& path);
// Writes a whole file; returns false on failure.
bool WriteStringToFile(const std::string& path, const std::string& data);

}  // namespace ffyolo::testing

// Skips the current test with a message when ../shared/<rel> does not exist.
#define FFYOLO_REQUIRE_SHARED(var, rel)                                             \
  const std::string var = ::ffyolo::testing::SharedPath(rel);                      \
  if (var.empty()) GTEST_SKIP() << "../shared/" << (rel) << " is absent; skipping"

// Skips the current test with a message when there is no reference environment.
#define FFYOLO_REQUIRE_REFERENCE(python)                                                    \
  const std::string python = ::ffyolo::testing::ReferencePython();                          \
  if (python.empty())                                                                       \
  GTEST_SKIP() << "no Ultralytics reference environment (.venv-ref, or REF_VENV): run "     \
                  "scripts/reference-venv.sh; skipping"

// Skips the current test with a message when there is no Ultralytics 8 environment.
#define FFYOLO_REQUIRE_ULTRALYTICS8(python)                                                 \
  const std::string python = ::ffyolo::testing::Ultralytics8Python();                       \
  if (python.empty())                                                                       \
  GTEST_SKIP() << "no Ultralytics 8 environment (.venv-u8, or U8_VENV): run "               \
                  "scripts/ultralytics8-venv.sh; skipping"
