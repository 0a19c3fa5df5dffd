// The TorchScript code inside an ffyolo checkpoint.
//
// A LibTorch archive carries TorchScript source (code/*.py) that LibTorch
// compiles when it opens the archive, and its compiler crashes on some crafted
// code (checkpoint_fuzz: a SEGV in ScriptTypeParser::parseClassConstant) that
// correct CRCs let through. An ffyolo checkpoint's code only declares modules
// of attributes, so the reader lets nothing else reach the compiler.
#pragma once

#include <string_view>

namespace ffyolo {

// Whether `code` holds only what LibTorch writes for modules of attributes:
// `class Module(Module):` headers, their __parameters__, __buffers__ and
// __annotations__ lists, `__annotations__["name"] = Type` and `name : Type`
// lines, where a Type is Tensor, int, float, str or bool, such types in one
// List, Optional, Tuple or Dict, or another such module (__torch__.<path>).
// Else *bad_line (when given) is the first line that is not.
bool IsAttributeOnlyCode(std::string_view code, std::string_view* bad_line = nullptr);

}  // namespace ffyolo
