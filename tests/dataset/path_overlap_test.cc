// ResolvedPath, PathWithin and CheckOutputFile in POSIX calls, with std::filesystem (which the test
// may call: it imports no torch) as the oracle of where a path really is.
#include "ffyolo/output/path_overlap.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "testing/test_env.h"

namespace ffyolo {
namespace {

namespace fs = std::filesystem;

// std::filesystem's answer: weakly_canonical of the absolute path, without a trailing separator.
std::string Oracle(const std::string& path) {
  std::string out = fs::weakly_canonical(fs::absolute(path)).string();
  while (out.size() > 1 && out.back() == '/') out.pop_back();
  return out;
}

class PathOverlapTest : public ::testing::Test {
 protected:
  void SetUp() override {
    fs::create_directories(dir_ / "a/real/inner");
    fs::create_directory_symlink(dir_ / "a/real", dir_ / "link");  // link/.. is a, not the scratch folder
    fs::create_symlink("a/real", dir_ / "relative-link");
    std::ofstream(dir_ / "a/real/file") << "x";
  }
  testing::ScratchDir dir_{"path_overlap_test"};
};

TEST_F(PathOverlapTest, ResolvesAsStdFilesystemWeaklyCanonical) {
  const std::string real = Oracle(dir_.path());
  for (const std::string& rest : std::vector<std::string>{"", "/", "/a", "/a/", "/./a//real/", "/link", "/link/", "/link/..", "/link/../real/inner", "/relative-link/file",
       "/link/missing", "/link/missing/deeper/..", "/link/missing/../../..", "/missing/../a", "/a/real/file/..",
       "/../" + fs::path(real).filename().string() + "/a"}) {
    const std::string path = dir_.path() + rest;
    EXPECT_EQ(ResolvedPath(path), Oracle(path)) << path;
  }
  EXPECT_EQ(ResolvedPath(dir_ / "link/.."), real + "/a");  // physical, as the kernel resolves it
  EXPECT_EQ(ResolvedPath("/"), "/");
  EXPECT_EQ(ResolvedPath("/.."), "/");
  EXPECT_EQ(ResolvedPath("/missing-folder/x/.."), "/missing-folder");
}

TEST_F(PathOverlapTest, ResolvesARelativePathAgainstTheCurrentFolder) {
  const std::string before = fs::current_path();
  fs::current_path(dir_ / "link");
  const std::string relative = ResolvedPath("inner/../missing"), here = ResolvedPath("."), empty = ResolvedPath("");
  fs::current_path(before);
  EXPECT_EQ(relative, Oracle(dir_ / "a/real/missing"));
  EXPECT_EQ(here, Oracle(dir_ / "a/real"));
  EXPECT_EQ(empty, here);
}

TEST(PathWithinTest, ComparesWholeComponents) {
  EXPECT_TRUE(PathWithin("/a/b", "/a/b"));
  EXPECT_TRUE(PathWithin("/a/b/c", "/a/b"));
  EXPECT_FALSE(PathWithin("/a/bc", "/a/b"));
  EXPECT_FALSE(PathWithin("/a", "/a/b"));
  EXPECT_TRUE(PathWithin("/a", "/"));
  EXPECT_TRUE(PathWithin("/", "/"));
  EXPECT_FALSE(PathWithin("/", "/a"));
}

TEST_F(PathOverlapTest, AnOutputFileIsReplacedOnlyWhenRegularAndAsked) {
  EXPECT_TRUE(CheckOutputFile("-o", dir_ / "new", false, "--force").ok());
  const ffr::Status kept = CheckOutputFile("-o", dir_ / "a/real/file", false, "--force");
  EXPECT_TRUE(kept.IsAlreadyExists()) << kept.ToString();
  EXPECT_NE(kept.message().find("-o " + dir_ / "a/real/file" + " exists; --force replaces it"), std::string::npos);
  EXPECT_TRUE(CheckOutputFile("-o", dir_ / "a/real/file", true, "--force").ok());
  ASSERT_EQ(mkfifo((dir_ / "fifo").c_str(), 0600), 0);
  fs::create_symlink(dir_ / "nowhere", dir_ / "dangling");
  for (const std::string& other : {dir_ / "a", dir_ / "fifo", dir_ / "dangling"}) {
    const ffr::Status s = CheckOutputFile("-o", other, true, "--force");
    EXPECT_TRUE(s.IsAlreadyExists()) << other;
    EXPECT_NE(s.message().find("is not a regular file"), std::string::npos) << s.ToString();
  }
}

}  // namespace
}  // namespace ffyolo
