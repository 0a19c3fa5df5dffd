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
  EXPECT_TRUE(Parsed("").Automatic());
  for (const char* any : {"cuda", "CUDA", " cuda "}) {
    const DeviceSpec spec = Parsed(any);
    EXPECT_TRUE(spec.any_cuda) << any;
    EXPECT_FALSE(spec.Automatic()) << any;
  }
}

TEST(DeviceTest, MalformedListsAreRefusedWithTheFlag) {
  for (const char* bad : {"gpu", "0,", ",1", "0,,1", "-1", "1,1", "cuda:x", "mps", "99999", " ", "\t"}) {
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
    // Every spelling that asks for CUDA is refused alike, as select_device refuses it, never run on the CPU.
    for (const char* cuda : {"0", "cuda:0", "cuda", "CUDA"}) {
      const ffr::Status s = SelectDevice(cuda, -1, &device);
      EXPECT_TRUE(s.IsInvalidArgument()) << cuda;
      EXPECT_NE(s.message().find("--device '" + std::string(cuda) + "' asks for CUDA"), std::string::npos)
          << s.message();
      EXPECT_NE(s.message().find("--device cpu"), std::string::npos) << s.message();
    }
  } else {
    ASSERT_TRUE(SelectDevice("cuda:0", -1, &device).ok());
    EXPECT_EQ(device, c10::Device(c10::kCUDA, 0));
    ASSERT_TRUE(SelectDevice("cuda", -1, &device).ok());
    EXPECT_EQ(device, c10::Device(c10::kCUDA, 0));
    EXPECT_TRUE(SelectDevice(std::to_string(CudaDeviceCount()), -1, &device).IsInvalidArgument());
  }
}

}  // namespace
}  // namespace ffyolo
