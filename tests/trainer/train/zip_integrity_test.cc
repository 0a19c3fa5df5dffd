// CheckZipIntegrity on archives written here byte by byte: stored and
// deflated entries, zip64 sizes and offsets, and damage to each part.
#include "zip_integrity.h"

#include <gtest/gtest.h>
#include <zlib.h>

#include <string>
#include <vector>

namespace ffyolo {
namespace {

void Put(std::string* out, uint64_t v, int n) {
  for (int i = 0; i < n; ++i) out->push_back(static_cast<char>(v >> (8 * i)));
}

struct Entry {
  std::string name, data;
  bool deflate = false;
};

// A zip of `entries`; with `zip64` every size and offset goes through the
// zip64 extra field and end-of-directory records, as writers do past 4 GiB.
std::string Zip(const std::vector<Entry>& entries, bool zip64) {
  std::string out, directory;
  for (const Entry& e : entries) {
    std::string packed = e.data;
    if (e.deflate) {
      z_stream z{};
      deflateInit2(&z, 6, Z_DEFLATED, -MAX_WBITS, 8, Z_DEFAULT_STRATEGY);
      packed.assign(deflateBound(&z, e.data.size()), '\0');
      z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(e.data.data()));
      z.avail_in = static_cast<uInt>(e.data.size());
      z.next_out = reinterpret_cast<Bytef*>(packed.data());
      z.avail_out = static_cast<uInt>(packed.size());
      deflate(&z, Z_FINISH);
      packed.resize(z.total_out);
      deflateEnd(&z);
    }
    const uint32_t crc = static_cast<uint32_t>(crc32(0, reinterpret_cast<const Bytef*>(e.data.data()),
                                                     static_cast<uInt>(e.data.size())));
    const uint64_t local = out.size();
    Put(&out, 0x04034b50, 4), Put(&out, 20, 2), Put(&out, 0, 2), Put(&out, e.deflate ? 8 : 0, 2), Put(&out, 0, 4);
    Put(&out, crc, 4), Put(&out, packed.size(), 4), Put(&out, e.data.size(), 4);
    Put(&out, e.name.size(), 2), Put(&out, 0, 2);
    out += e.name + packed;
    std::string extra;
    if (zip64) Put(&extra, 1, 2), Put(&extra, 24, 2), Put(&extra, e.data.size(), 8), Put(&extra, packed.size(), 8),
        Put(&extra, local, 8);
    const uint64_t big = zip64 ? 0xffffffff : 0;
    Put(&directory, 0x02014b50, 4), Put(&directory, 45, 2), Put(&directory, 45, 2), Put(&directory, 0, 2);
    Put(&directory, e.deflate ? 8 : 0, 2), Put(&directory, 0, 4), Put(&directory, crc, 4);
    Put(&directory, big ? big : packed.size(), 4), Put(&directory, big ? big : e.data.size(), 4);
    Put(&directory, e.name.size(), 2), Put(&directory, extra.size(), 2), Put(&directory, 0, 2);
    Put(&directory, 0, 2), Put(&directory, 0, 2), Put(&directory, 0, 4), Put(&directory, big ? big : local, 4);
    directory += e.name + extra;
  }
  const uint64_t at = out.size();
  out += directory;
  if (zip64) {
    const uint64_t record = out.size();
    Put(&out, 0x06064b50, 4), Put(&out, 44, 8), Put(&out, 45, 2), Put(&out, 45, 2), Put(&out, 0, 4), Put(&out, 0, 4);
    Put(&out, entries.size(), 8), Put(&out, entries.size(), 8), Put(&out, directory.size(), 8), Put(&out, at, 8);
    Put(&out, 0x07064b50, 4), Put(&out, 0, 4), Put(&out, record, 8), Put(&out, 1, 4);
  }
  Put(&out, 0x06054b50, 4), Put(&out, 0, 4);
  Put(&out, zip64 ? 0xffff : entries.size(), 2), Put(&out, zip64 ? 0xffff : entries.size(), 2);
  Put(&out, zip64 ? 0xffffffff : directory.size(), 4), Put(&out, zip64 ? 0xffffffff : at, 4), Put(&out, 0, 2);
  return out;
}

ffr::Status Check(const std::string& zip) {
  return CheckZipIntegrity(reinterpret_cast<const uint8_t*>(zip.data()), zip.size(), "w.pt");
}

const std::vector<Entry> kEntries = {{"archive/data.pkl", std::string(3000, 'p') + "weights", true},
                                     {"archive/data/0", std::string(4096, '\x3c'), false},
                                     {"archive/version", "3\n", false}};

TEST(ZipIntegrityTest, WholeArchivesPass) {
  for (const bool zip64 : {false, true}) {
    const ffr::Status s = Check(Zip(kEntries, zip64));
    EXPECT_TRUE(s.ok()) << (zip64 ? "zip64: " : "") << s.ToString();
  }
}

// The listing the checkpoint reader checks pickles and code from: every entry's inflated size in
// archive order, and the inflated bytes of the entries asked for only.
TEST(ZipIntegrityTest, ListsEntriesWithTheContentsAskedFor) {
  for (const bool zip64 : {false, true}) {
    SCOPED_TRACE(zip64 ? "zip64" : "zip");
    const std::string zip = Zip(kEntries, zip64);
    std::vector<ZipEntry> entries;
    const ffr::Status s = CheckZipIntegrity(reinterpret_cast<const uint8_t*>(zip.data()), zip.size(), "w.pt", &entries,
                                            [](const std::string& name) { return name != "archive/data/0"; });
    ASSERT_TRUE(s.ok()) << s.ToString();
    ASSERT_EQ(entries.size(), kEntries.size());
    for (size_t i = 0; i < entries.size(); ++i) {
      EXPECT_EQ(entries[i].name, kEntries[i].name);
      EXPECT_EQ(entries[i].size, kEntries[i].data.size());
      EXPECT_EQ(entries[i].contents, i == 1 ? "" : kEntries[i].data);  // entry 0 is deflated
    }
  }
}

TEST(ZipIntegrityTest, EachKindOfDamageNamesTheFileAndEntry) {
  for (const bool zip64 : {false, true}) {
    SCOPED_TRACE(zip64 ? "zip64" : "zip");
    const std::string good = Zip(kEntries, zip64);
    const size_t stored = good.find(std::string(16, '\x3c'));
    std::string bad = good;
    bad[stored + 100] ^= 0x04;
    ffr::Status s = Check(bad);
    EXPECT_TRUE(s.IsCorruption());
    EXPECT_NE(s.message().find("w.pt: 'archive/data/0'"), std::string::npos) << s.ToString();
    bad = good;
    bad[kEntries[0].name.size() + 30 + 3] ^= 0x10;  // inside the deflated stream
    s = Check(bad);
    EXPECT_NE(s.message().find("'archive/data.pkl'"), std::string::npos) << s.ToString();
    EXPECT_TRUE(Check(good.substr(0, good.size() - 30)).IsCorruption());  // end records cut
    EXPECT_TRUE(Check(good.substr(0, stored + 10)).IsCorruption());
    EXPECT_TRUE(Check(std::string(100, '\0')).IsCorruption());
  }
}

}  // namespace
}  // namespace ffyolo
