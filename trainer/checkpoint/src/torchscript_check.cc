#include "torchscript_check.h"

#include <cctype>
#include <string>

namespace ffyolo {

namespace {

// Consumes `prefix` from the front of *s.
bool Take(std::string_view* s, std::string_view prefix) {
  if (s->substr(0, prefix.size()) != prefix) return false;
  s->remove_prefix(prefix.size());
  return true;
}

bool IsNameChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.'; }

// An attribute name, or a dotted type path.
bool TakeName(std::string_view* s) {
  size_t n = 0;
  while (n < s->size() && IsNameChar((*s)[n])) ++n;
  s->remove_prefix(n);
  return n > 0;
}

// A string literal's contents ("param_groups/size"): up to its closing quote, no escapes.
bool TakeQuoted(std::string_view* s) {
  const size_t end = s->find_first_of("\"\\");
  if (end == 0 || end == std::string_view::npos || (*s)[end] != '"') return false;
  s->remove_prefix(end);
  return true;
}

bool IsScalarType(std::string_view t) {
  return t == "Tensor" || t == "int" || t == "float" || t == "str" || t == "bool";
}

// One level of List, Optional, Tuple or Dict over scalar types ("Tuple[float, float]": Adam's betas).
bool IsType(std::string_view t) {
  if (IsScalarType(t)) return true;
  for (std::string_view wrapper : {"List[", "Optional[", "Tuple[", "Dict["}) {
    if (!Take(&t, wrapper)) continue;
    if (t.empty() || t.back() != ']') return false;
    t.remove_suffix(1);
    for (size_t comma; (comma = t.find(", ")) != std::string_view::npos; t.remove_prefix(comma + 2))
      if (!IsScalarType(t.substr(0, comma))) return false;
    return IsScalarType(t);
  }
  return Take(&t, "__torch__.") && TakeName(&t) && t.empty();
}

// ` = [` has been consumed: `"name", ` repeated, then `]`.
bool IsNameList(std::string_view s) {
  while (Take(&s, "\"")) {
    if (!TakeQuoted(&s) || !Take(&s, "\", ")) return false;
  }
  return s == "]";
}

bool IsLine(std::string_view line) {
  if (line.empty() || line == "class Module(Module):") return true;
  if (!Take(&line, "  ")) return false;
  for (std::string_view list : {"__parameters__ = [", "__buffers__ = [", "__annotations__ = ["})
    if (Take(&line, list)) return IsNameList(line);
  if (Take(&line, "__annotations__[\"")) return TakeQuoted(&line) && Take(&line, "\"] = ") && IsType(line);
  return TakeName(&line) && Take(&line, " : ") && IsType(line);
}

}  // namespace

bool IsAttributeOnlyCode(std::string_view code, std::string_view* bad_line) {
  while (!code.empty()) {
    const size_t end = code.find('\n');
    if (!IsLine(code.substr(0, end))) {
      if (bad_line) *bad_line = code.substr(0, end);
      return false;
    }
    if (end == std::string_view::npos) break;
    code.remove_prefix(end + 1);
  }
  return true;
}

}  // namespace ffyolo
