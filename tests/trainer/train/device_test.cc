// --device as Ultralytics' select_device reads it; the choice of device on a machine without a GPU.
#include "ffyolo/device.h"

#include <gtest/gtest.h>

namespace ffyolo {
namespace {

DeviceSpec Parsed(const std::string& text) {
  DeviceSpec spec;
  const ffr::Status s = ParseDeviceSpec(text, &spec);
  EXPECT_TRUE(s.ok()) << text << ": " << s.ToString();
  return spec;
}

TEST(DeviceTest, UltralyticsSpellings) {
  EXPECT_TRUE(Parsed("cpu").cpu);
  EXPECT_TRUE(Parsed(" CPU ").cpu);
  EXPECT_EQ(Parsed("0").cuda, std::vector<int>({0}));
  EXPECT_EQ(Parsed("cuda:3").cuda, std::vector<int>({3}));
  EXPECT_EQ(Parsed("0,1,2,3").cuda, std::vector<int>({0, 1, 2, 3}));
  EXPECT_EQ(Parsed("2, 5").cuda, std::vector<int>({2, 5}));
  for (const char* automatic : {"", "cuda"}) {
    const DeviceSpec spec = Parsed(automatic);
    EXPECT_FALSE(spec.cpu);
    EXPECT_TRUE(spec.cuda.empty());
  }
}

TEST(DeviceTest, MalformedListsAreRefusedWithTheFlag) {
  for (const char* bad : {"gpu", "0,", ",1", "0,,1", "-1", "1,1", "cuda:x", "mps", "99999"}) {
    DeviceSpec spec;
    const ffr::Status s = ParseDeviceSpec(bad, &spec);
    EXPECT_TRUE(s.IsInvalidArgument()) << bad;
    EXPECT_NE(s.message().find("--device"), std::string::npos) << s.message();
  }
}

TEST(DeviceTest, SelectionFollowsWhatThisLibTorchHas) {
  c10::Device device(c10::kCUDA, 0);
  ASSERT_TRUE(SelectDevice("cpu", -1, &device).ok());
  EXPECT_TRUE(device.is_cpu());
  ASSERT_TRUE(SelectDevice("", -1, &device).ok());
  EXPECT_EQ(device.is_cuda(), CudaDeviceCount() > 0);
  EXPECT_TRUE(SelectDevice("0,1", -1, &device).IsInvalidArgument()) << "two GPUs need --nproc 2";
  if (CudaDeviceCount() == 0) {
    const ffr::Status s = SelectDevice("0", -1, &device);
    EXPECT_TRUE(s.IsInvalidArgument());
    EXPECT_NE(s.message().find("--device cpu"), std::string::npos) << s.message();
  } else {
    ASSERT_TRUE(SelectDevice("cuda:0", -1, &device).ok());
    EXPECT_EQ(device, c10::Device(c10::kCUDA, 0));
    EXPECT_TRUE(SelectDevice(std::to_string(CudaDeviceCount()), -1, &device).IsInvalidArgument());
  }
}

}  // namespace
}  // namespace ffyolo
