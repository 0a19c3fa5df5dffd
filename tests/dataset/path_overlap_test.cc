// ResolvedPath, PathWithin and CheckOutputFile in POSIX calls, with std::filesystem (which the test
// may call: it imports no torch) as the oracle of where a path really is; PlaceWithin and
// CheckOutputApart against the file system's own answer, one folder under two names included.
#include "ffyolo/output/path_overlap.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

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

// Writes `text` into the /proc file `path`; false on failure.
bool WriteProcFile(const std::string& path, const std::string& text) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) return false;
  const bool written = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  return ::close(fd) == 0 && written;
}

// Binds `folder` on `alias`, so that it has two names, in a mount namespace of this process's own: no
// other process sees the mount, and it goes with the process. Without the right to (not root), a user
// namespace of its own first makes the process root in it. False, saying why, where neither is allowed.
bool BindMount(const std::string& folder, const std::string& alias, std::string* why) {
  if (::unshare(CLONE_NEWNS) != 0) {
    const uid_t uid = ::getuid();
    const gid_t gid = ::getgid();
    if (::unshare(CLONE_NEWUSER | CLONE_NEWNS) != 0 || !WriteProcFile("/proc/self/setgroups", "deny") ||
        !WriteProcFile("/proc/self/uid_map", "0 " + std::to_string(uid) + " 1") ||
        !WriteProcFile("/proc/self/gid_map", "0 " + std::to_string(gid) + " 1")) {
      *why = std::string("no mount namespace: ") + std::strerror(errno);
      return false;
    }
  }
  if (::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0 ||
      ::mount(folder.c_str(), alias.c_str(), nullptr, MS_BIND, nullptr) != 0) {
    *why = std::string("mount --bind: ") + std::strerror(errno);
    return false;
  }
  return true;
}

class PathOverlapTest : public ::testing::Test {
 protected:
  void SetUp() override {
    fs::create_directories(dir_ / "a/real/inner");
    fs::create_directory_symlink(dir_ / "a/real", dir_ / "link");  // link/.. is a, not the scratch folder
    fs::create_symlink("a/real", dir_ / "relative-link");
    std::ofstream(dir_ / "a/real/file") << "x";
  }
  // The scratch folder goes after this: a folder still bound in it would be emptied twice.
  void TearDown() override {
    if (!mounted_.empty()) {
      EXPECT_EQ(::umount2(mounted_.c_str(), MNT_DETACH), 0) << std::strerror(errno);
    }
  }
  testing::ScratchDir dir_{"path_overlap_test"};
  std::string mounted_;  // a bind mount's second name, once made
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

// Whether an output lands in an input is the file system's answer: a symlink, `..` or /proc/self/cwd
// reach the folder they name; below what exists, the names are compared as written.
TEST_F(PathOverlapTest, APlaceIsWithinAnotherAsTheFileSystemReachesIt) {
  const std::string real = dir_ / "a/real";
  EXPECT_TRUE(PlaceWithin(real, real));
  EXPECT_TRUE(PlaceWithin(dir_ / "link/inner", real));
  EXPECT_TRUE(PlaceWithin(dir_ / "relative-link/missing/deeper", dir_ / "link/missing"));
  EXPECT_TRUE(PlaceWithin(dir_ / "link/..", dir_ / "a"));
  EXPECT_TRUE(PlaceWithin(real, dir_ / "link/../real"));
  EXPECT_FALSE(PlaceWithin(dir_ / "a", real));
  EXPECT_FALSE(PlaceWithin(dir_ / "link/missing", real + "/other"));
  EXPECT_FALSE(PlaceWithin(dir_ / "a/realm", real));
  const std::string before = fs::current_path();
  fs::current_path(real);
  EXPECT_TRUE(PlaceWithin("/proc/self/cwd/new", real));
  EXPECT_TRUE(PlaceWithin("inner", dir_ / "link"));
  fs::current_path(before);
  EXPECT_TRUE(PlaceWithin("/missing-folder/a/b", "/missing-folder/a"));
  EXPECT_FALSE(PlaceWithin("/missing-folder/ab", "/missing-folder/a"));
  EXPECT_FALSE(PlaceWithin("/missing-folder", "/missing-folder/a"));
  EXPECT_TRUE(PlaceWithin(real, "/"));
}

// A hard link is the file it links under another name: an output there is the input.
TEST_F(PathOverlapTest, AHardLinkIsTheFileItLinks) {
  const std::string file = dir_ / "a/real/file", linked = dir_ / "linked";
  ASSERT_EQ(::link(file.c_str(), linked.c_str()), 0) << std::strerror(errno);
  EXPECT_TRUE(PlaceWithin(linked, file));
  const ffr::Status s = CheckOutputApart("--out", linked, {{"data YAML", file}});
  EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();
  EXPECT_NE(s.message().find("--out " + linked + " is the data YAML " + file + " ("), std::string::npos) << s.message();
  EXPECT_NE(s.message().find(Oracle(linked) + " is " + Oracle(file) + " under another name: a bind mount or a hard link)"),
            std::string::npos)
      << s.message();
}

// One folder under two names by a bind mount: `yolo-ffr show DATA -o ALIAS/dataset.yaml --force` wrote
// a JPEG over the manifest, exit 0, where the same through a symlink, `..` or /proc/self/cwd was
// refused: the paths differed, the folder did not.
TEST_F(PathOverlapTest, AFolderBoundUnderASecondNameIsTheSamePlace) {
  const std::string data = dir_ / "a/real", alias = dir_ / "alias";  // alias: a's second name
  fs::create_directory(alias);
  std::string why;
  if (!BindMount(dir_ / "a", alias, &why)) GTEST_SKIP() << "no bind mount here (" << why << "); skipping";
  mounted_ = alias;
  ASSERT_TRUE(fs::exists(alias + "/real/file"));
  EXPECT_TRUE(PlaceWithin(alias + "/real", data));
  EXPECT_TRUE(PlaceWithin(data, alias + "/real"));
  EXPECT_TRUE(PlaceWithin(data, alias));
  EXPECT_TRUE(PlaceWithin(alias + "/real/file", data));
  EXPECT_TRUE(PlaceWithin(alias + "/real/missing/deeper", data + "/missing"));
  EXPECT_FALSE(PlaceWithin(alias + "/real/missing", data + "/other"));
  EXPECT_FALSE(PlaceWithin(alias, data));
  EXPECT_FALSE(PlaceWithin(dir_.path(), alias));

  const ffr::Status inside = CheckOutputApart("-o", alias + "/real/file", {{"dataset", data}});
  EXPECT_TRUE(inside.IsInvalidArgument()) << inside.ToString();
  EXPECT_NE(inside.message().find("-o " + alias + "/real/file lies inside the dataset " + data), std::string::npos)
      << inside.message();
  EXPECT_NE(inside.message().find(Oracle(alias + "/real") + " is " + Oracle(data) + " under another name"),
            std::string::npos)
      << inside.message();
  // An output the writer empties may not hold an input reached through its second name either.
  const ffr::Status holds = CheckOutputApart("output", dir_ / "a", {{"source", alias + "/real/inner"}}, true);
  EXPECT_TRUE(holds.IsInvalidArgument()) << holds.ToString();
  EXPECT_NE(holds.message().find("output " + dir_ / "a" + " contains the source " + alias + "/real/inner"),
            std::string::npos)
      << holds.message();
  EXPECT_TRUE(CheckOutputApart("output", dir_ / "a", {{"source", alias + "/real/inner"}}).ok());
  EXPECT_TRUE(CheckOutputApart("-o", dir_ / "elsewhere", {{"dataset", alias}}, true).ok());
}

// A folder bound from inside an input: the second name goes through no name of the input, and the file
// system (its mounts) still says where it lies.
TEST_F(PathOverlapTest, AFolderBoundFromInsideAnInputLiesInIt) {
  const std::string alias = dir_ / "alias";  // a/real's second name
  fs::create_directory(alias);
  std::string why;
  if (!BindMount(dir_ / "a/real", alias, &why)) GTEST_SKIP() << "no bind mount here (" << why << "); skipping";
  mounted_ = alias;
  EXPECT_TRUE(PlaceWithin(alias, dir_ / "a"));
  EXPECT_TRUE(PlaceWithin(alias + "/missing", dir_ / "a/real/missing"));
  EXPECT_TRUE(PlaceWithin(dir_ / "a/real/inner", alias));
  EXPECT_FALSE(PlaceWithin(alias, dir_ / "a/realm"));
  EXPECT_FALSE(PlaceWithin(alias + "/missing", dir_ / "a/real/other"));
  EXPECT_FALSE(PlaceWithin(dir_ / "a", alias));

  const ffr::Status inside = CheckOutputApart("-o", alias + "/new", {{"dataset", dir_ / "a"}});
  EXPECT_TRUE(inside.IsInvalidArgument()) << inside.ToString();
  EXPECT_NE(inside.message().find(Oracle(alias) + " lies in " + Oracle(dir_ / "a") + " under another name"),
            std::string::npos)
      << inside.message();
  const ffr::Status holds = CheckOutputApart("output", dir_ / "a", {{"source", alias + "/inner"}}, true);
  EXPECT_TRUE(holds.IsInvalidArgument()) << holds.ToString();
  EXPECT_NE(holds.message().find("output " + dir_ / "a" + " contains the source " + alias + "/inner"),
            std::string::npos)
      << holds.message();
  const ffr::Status same = CheckOutputApart("-o", alias + "/inner", {{"dataset", dir_ / "a/real/inner"}});
  EXPECT_NE(same.message().find(" is the dataset "), std::string::npos) << same.ToString();
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
