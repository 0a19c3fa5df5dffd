// Empty: the translation unit of ffyolo_torch_pch, which owns LibTorch's precompiled header
// (trainer/CMakeLists.txt).
