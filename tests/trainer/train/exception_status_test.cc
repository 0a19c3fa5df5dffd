// Exceptions become Statuses whose code says what went wrong.
#include "ffyolo/exception_status.h"

#include <c10/util/Exception.h>
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <stdexcept>

namespace ffyolo {
namespace {

using Code = ffr::Status::Code;

template <class Throw>
ffr::Status Caught(Throw&& thrower) {
  return StatusOrException([&]() -> ffr::Status {
    thrower();
    return ffr::Status::OK();
  });
}

TEST(ExceptionStatusTest, BadValuesStayInvalidArguments) {
  EXPECT_EQ(Caught([] { TORCH_CHECK_VALUE(false, "lr must be >= 0"); }).code(), Code::kInvalidArgument);
  EXPECT_EQ(Caught([] { TORCH_CHECK_INDEX(false, "index 9 out of range"); }).code(), Code::kInvalidArgument);
  EXPECT_EQ(Caught([] { TORCH_CHECK_TYPE(false, "expected float"); }).code(), Code::kInvalidArgument);
  EXPECT_EQ(Caught([] { YAML::Load("a: [1, 2"); }).code(), Code::kInvalidArgument);
  EXPECT_EQ(Caught([] { throw std::invalid_argument("bad"); }).code(), Code::kInvalidArgument);
  EXPECT_EQ(Caught([] { throw std::out_of_range("far"); }).code(), Code::kInvalidArgument);
}

TEST(ExceptionStatusTest, RuntimeFailuresAreIoErrorsWithTheirMessage) {
  const ffr::Status s = Caught([] { TORCH_CHECK(false, "NCCL error: unhandled system error"); });
  EXPECT_EQ(s.code(), Code::kIOError);
  EXPECT_NE(s.message().find("NCCL error: unhandled system error"), std::string::npos) << s.message();
  EXPECT_EQ(Caught([] { throw std::runtime_error("x"); }).code(), Code::kIOError);
  EXPECT_EQ(Caught([] { throw 42; }).code(), Code::kIOError);
  EXPECT_EQ(Caught([] { TORCH_CHECK_NOT_IMPLEMENTED(false, "no kernel"); }).code(), Code::kNotSupported);
}

TEST(ExceptionStatusTest, ABodyThatReturnsKeepsItsStatus) {
  EXPECT_TRUE(StatusOrException([] { return ffr::Status::OK(); }).ok());
  EXPECT_TRUE(StatusOrException([] { return ffr::Status::NotFound("x"); }).IsNotFound());
}

}  // namespace
}  // namespace ffyolo
