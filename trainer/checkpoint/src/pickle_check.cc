#include "pickle_check.h"

#include <algorithm>
#include <initializer_list>
#include <memory>
#include <utility>

namespace ffyolo {
namespace {

// How deep containers may nest. LibTorch destroys what it unpickled recursively: a million
// nested tuples (a 1 MB pickle) overflow its stack. Python's own recursion limit.
constexpr int kMaxNesting = 1000;
// Tuples up to this depth keep their items for the checks (a tensor's arguments are 2 deep).
constexpr int kKeptTupleDepth = 3;

// What the check follows of a value on the unpickler's stack; everything else is kOther.
struct Value {
  enum Kind { kOther, kInt, kString, kTuple, kStorage } kind = kOther;
  int64_t number = 0;     // kInt: the value; kStorage: its element count
  std::string_view text;  // kString
  // kTuple: its items when it nests at most kKeptTupleDepth deep (shared: each memo read is a copy).
  std::shared_ptr<const std::vector<Value>> items;
  int tuple_depth = 0;  // kTuple: 1 + the deepest item tuple's
  int32_t node = -1;    // a container or object: its node in the graph of what holds what
};

Value Int(int64_t v) {
  Value out;
  out.kind = Value::kInt;
  out.number = v;
  return out;
}

// What a call (REDUCE, BUILD) of a function the pickle named does that this check must see.
enum class Function { kOther, kRebuildTensor };

uint64_t Little(std::string_view bytes) {
  uint64_t v = 0;
  for (size_t i = bytes.size(); i-- > 0;) v = (v << 8) | static_cast<uint8_t>(bytes[i]);
  return v;
}

class Checker {
 public:
  Checker(std::string_view pickle, const std::string& name, const RecordSize& record_size)
      : pickle_(pickle), name_(name), record_size_(record_size) {}

  ffr::Status Run() {
    std::string_view proto;
    if (!Take(2, &proto) || proto[0] != '\x80') return Bad("not a pickle (no PROTO opcode)");
    if (proto[1] != 2) return Bad("pickle protocol " + std::to_string(static_cast<uint8_t>(proto[1])) +
                                  "; LibTorch reads protocol 2");
    for (;;) {
      op_at_ = at_;
      std::string_view op;
      if (!Take(1, &op)) return Bad("the pickle ends before its STOP opcode");
      if (op[0] == '.') return CheckNesting();
      FFR_RETURN_IF_ERROR(Step(static_cast<uint8_t>(op[0])));
    }
  }

 private:
  ffr::Status Step(uint8_t op) {
    std::string_view arg;
    switch (op) {
      case ']':  // EMPTY_LIST
      case '}':  // EMPTY_DICT
        return Push(Container({}));
      case 'N':   // NONE
      case 0x88:  // NEWTRUE
      case 0x89:  // NEWFALSE
        return Push(Value());
      case 'G':  // BINFLOAT
        return Take(8, &arg) ? Push(Value()) : Truncated();
      case ')':  // EMPTY_TUPLE
        return Tuple(0);
      case 'K':  // BININT1
      case 'M':  // BININT2
        return Take(op == 'K' ? 1 : 2, &arg) ? Push(Int(static_cast<int64_t>(Little(arg)))) : Truncated();
      case 'J':  // BININT
        return Take(4, &arg) ? Push(Int(static_cast<int32_t>(Little(arg)))) : Truncated();
      case 0x8a: {  // LONG1
        if (!Take(1, &arg)) return Truncated();
        if (arg[0] != 8) return Bad("an integer of " + std::to_string(static_cast<uint8_t>(arg[0])) +
                                    " bytes; LibTorch reads 8");
        return Take(8, &arg) ? Push(Int(static_cast<int64_t>(Little(arg)))) : Truncated();
      }
      case 'X': {  // BINUNICODE
        if (!Take(4, &arg)) return Truncated();
        const uint64_t length = Little(arg);
        Value s;
        s.kind = Value::kString;
        if (!Take(length, &s.text))
          return Bad("a string of " + std::to_string(length) + " bytes runs past the end of the pickle");
        return Push(std::move(s));
      }
      case 'c':  // GLOBAL
        return Global();
      case '(':  // MARK
        marks_.push_back(stack_.size());
        return ffr::Status::OK();
      case 't':  // TUPLE
        if (marks_.empty()) return Bad("a tuple without its MARK");
        return Tuple(stack_.size() - PopMark());
      case 0x85:  // TUPLE1
      case 0x86:  // TUPLE2
      case 0x87:  // TUPLE3
        return Tuple(op - 0x84);
      case 'l':  // LIST
      case 'd':  // DICT
      case 'e':  // APPENDS
      case 'u':  // SETITEMS
        return Items(op);
      case 's':  // SETITEM
        if (Above() < 3) return Bad("SETITEM without a dict, a key and a value");
        Hold(stack_[stack_.size() - 3], stack_.end() - 2, stack_.end());
        stack_.resize(stack_.size() - 2);
        return ffr::Status::OK();
      case 'q':  // BINPUT
      case 'r':  // LONG_BINPUT
        return Take(op == 'q' ? 1 : 4, &arg) ? Put(Little(arg)) : Truncated();
      case 'h':  // BINGET
      case 'j':  // LONG_BINGET
        if (!Take(op == 'h' ? 1 : 4, &arg)) return Truncated();
        if (Little(arg) >= memo_.size())
          return Bad("memo entry " + std::to_string(Little(arg)) + " read, of " + std::to_string(memo_.size()));
        return Push(memo_[Little(arg)]);
      case 0x81:  // NEWOBJ: LibTorch drops the (empty) arguments and keeps the class as the object
        if (Above() < 1) return Bad("NEWOBJ without arguments");
        stack_.pop_back();
        return ffr::Status::OK();
      case 'R':  // REDUCE
      case 'b':  // BUILD
        return Call();
      case 'Q':  // BINPERSID
        return Storage();
      default: {
        static const char kHex[] = "0123456789abcdef";
        return Bad(std::string("opcode 0x") + kHex[op >> 4] + kHex[op & 15] +
                   ", which LibTorch's unpickler does not read");
      }
    }
  }

  // A module and a name, each ended by a newline. LibTorch turns torch.<T>Storage into T's number
  // and every other name into a function, pushing its index in the functions named so far.
  ffr::Status Global() {
    std::string_view module, name;
    if (!Line(&module) || !Line(&name)) return Bad("a GLOBAL whose module and name do not end in newlines");
    const std::string global = std::string(module) + "." + std::string(name);
    if (module == "torch" && name != "device") {
      for (const StorageType& t : StorageTypes())
        if (name == t.class_name) return Push(Int(t.scalar_type));
      return Bad(global + ", which a checkpoint does not hold");
    }
    Function f = Function::kOther;
    if (module == "torch._utils" || module == "torch._tensor") {
      if (name != "_rebuild_tensor_v2") return Bad(global + ": a kind of tensor a checkpoint does not hold");
      f = Function::kRebuildTensor;
    }
    if (module == "torch.distributed.rpc") return Bad(global + ", which a checkpoint does not hold");
    functions_.push_back(f);
    return Push(Int(static_cast<int64_t>(functions_.size() - 1)));
  }

  ffr::Status Tuple(size_t n) {
    if (Above() < n) return Bad("a tuple of more items than the stack holds above its mark");
    const auto first = stack_.end() - static_cast<std::ptrdiff_t>(n);
    Value tuple = Container(first, stack_.end());
    tuple.kind = Value::kTuple;
    for (auto it = first; it != stack_.end(); ++it) tuple.tuple_depth = std::max(tuple.tuple_depth, it->tuple_depth);
    if (++tuple.tuple_depth <= kKeptTupleDepth) tuple.items = std::make_shared<std::vector<Value>>(first, stack_.end());
    stack_.erase(first, stack_.end());
    return Push(std::move(tuple));
  }

  // LIST and DICT make a container of the items above the mark; APPENDS and SETITEMS add them to the
  // container below it. LibTorch takes a dict's items two by two, past the stack when they are odd.
  ffr::Status Items(uint8_t op) {
    const bool dict = op == 'd' || op == 'u', added = op == 'e' || op == 'u';
    if (marks_.empty()) return Bad("a list or dict without its MARK");
    const size_t mark = PopMark();
    if (dict && (stack_.size() - mark) % 2 != 0) return Bad("a dict of an odd number of keys and values");
    if (added && mark == 0) return Bad("items added to no container");
    const auto first = stack_.begin() + static_cast<std::ptrdiff_t>(mark);
    Value made;
    if (added) Hold(stack_[mark - 1], first, stack_.end());
    else made = Container(first, stack_.end());
    stack_.resize(mark);
    return added ? ffr::Status::OK() : Push(std::move(made));
  }

  ffr::Status Put(uint64_t id) {
    if (stack_.empty()) return Bad("a memo entry made from an empty stack");
    // Picklers number memo entries in order; LibTorch fills any gap, so one index could make it allocate GBs.
    if (id > memo_.size())
      return Bad("memo entry " + std::to_string(id) + " made after " + std::to_string(memo_.size()));
    if (id == memo_.size()) memo_.push_back(stack_.back());
    else memo_[id] = stack_.back();
    return ffr::Status::OK();
  }

  ffr::Status Call() {
    if (Above() < 2) return Bad("a call without a function and its argument");
    const Value arg = Pop(), function = Pop();
    if (function.kind != Value::kInt || function.number < 0 ||
        static_cast<uint64_t>(function.number) >= functions_.size())
      return Bad("a call of something that is not a function the pickle named");
    if (functions_[function.number] == Function::kRebuildTensor) {
      FFR_RETURN_IF_ERROR(Tensor(arg));
      return Push(Value());  // a tensor holds its storage, not the arguments
    }
    return Push(Container(&arg, &arg + 1));  // an object may keep its argument
  }

  // _rebuild_tensor_v2(storage, offset, sizes, strides, ...): LibTorch sets these on the tensor
  // without comparing them with the storage.
  ffr::Status Tensor(const Value& arg) {
    const std::vector<Value>* a = arg.kind == Value::kTuple ? arg.items.get() : nullptr;
    if (a == nullptr || a->size() < 4 || (*a)[0].kind != Value::kStorage || (*a)[1].kind != Value::kInt ||
        (*a)[2].kind != Value::kTuple || (*a)[3].kind != Value::kTuple ||
        (*a)[2].items->size() != (*a)[3].items->size())
      return Bad("a tensor not made of a storage, an offset, sizes and strides");
    const int64_t elements = (*a)[0].number;
    int64_t last = (*a)[1].number;  // the highest element index the tensor reaches
    bool empty = false;
    for (size_t d = 0; d < (*a)[2].items->size(); ++d) {
      const Value& size = (*(*a)[2].items)[d];
      const Value& stride = (*(*a)[3].items)[d];
      if (size.kind != Value::kInt || stride.kind != Value::kInt || size.number < 0 || stride.number < 0)
        return Bad("a tensor size or stride that is not a whole number");
      empty = empty || size.number == 0;
      int64_t reach = 0;
      if (size.number > 0 && (__builtin_mul_overflow(size.number - 1, stride.number, &reach) ||
                              __builtin_add_overflow(last, reach, &last)))
        return Bad("a tensor past any storage");
    }
    if (last < 0) return Bad("a tensor at a negative offset");
    if (!empty && last >= elements)
      return Bad("a tensor reaching element " + std::to_string(last) + " of a storage of " + std::to_string(elements));
    return ffr::Status::OK();
  }

  // ('storage', element type, key, location, element count): LibTorch gives the storage the size the
  // count says and the bytes of record <stem>/<key>, without comparing the two.
  ffr::Status Storage() {
    if (Above() < 1) return Bad("BINPERSID without its argument");
    const Value id = Pop();
    const std::vector<Value>* a = id.kind == Value::kTuple ? id.items.get() : nullptr;
    if (a == nullptr || a->size() < 5 || (*a)[0].kind != Value::kString || (*a)[0].text != "storage" ||
        (*a)[1].kind != Value::kInt || (*a)[2].kind != Value::kString || (*a)[4].kind != Value::kInt)
      return Bad("a persistent id that is not ('storage', type, key, location, count)");
    const StorageType* type = nullptr;
    for (const StorageType& t : StorageTypes())
      if (t.scalar_type == (*a)[1].number) type = &t;
    if (type == nullptr) return Bad("a storage of element type " + std::to_string((*a)[1].number) +
                                    ", which a checkpoint does not hold");
    const int64_t elements = (*a)[4].number;
    const std::string record = Stem() + "/" + std::string((*a)[2].text);
    if (elements < 0) return Bad("storage '" + record + "' of " + std::to_string(elements) + " elements");
    if (elements > 0) {  // LibTorch reads no record for an empty storage
      const std::optional<uint64_t> bytes = record_size_(record);
      if (!bytes) return Bad("storage '" + record + "' has no record in the archive");
      if (static_cast<uint64_t>(elements) > *bytes / static_cast<uint64_t>(type->element_bytes))
        return Bad("storage '" + record + "' of " + std::to_string(elements) + " " + std::string(type->class_name) +
                   " elements, in a record of " + std::to_string(*bytes) + " bytes");
    }
    Value storage;
    storage.kind = Value::kStorage;
    storage.number = elements;
    return Push(std::move(storage));
  }

  // A new container or object holding the values [first, last).
  template <class It>
  Value Container(It first, It last) {
    Value v;
    v.node = static_cast<int32_t>(made_at_.size());
    made_at_.push_back(static_cast<uint32_t>(op_at_));
    Hold(v, first, last);
    return v;
  }
  Value Container(std::initializer_list<Value> none) { return Container(none.begin(), none.end()); }
  // `container` (a list, dict or object made earlier) now also holds the values [first, last).
  template <class It>
  void Hold(const Value& container, It first, It last) {
    if (container.node < 0) return;  // not a container: LibTorch refuses to add to it
    for (It it = first; it != last; ++it)
      if (it->node >= 0) holds_.emplace_back(container.node, it->node);
  }

  // How deep the containers nest, by the graph of what holds what (the memo lets a pickle put a
  // container into one made after it, so depths are known only at the end).
  ffr::Status CheckNesting() {
    // Each node's children: held[begin[n], begin[n + 1]).
    const size_t nodes = made_at_.size();
    std::sort(holds_.begin(), holds_.end());
    std::vector<size_t> begin(nodes + 1, 0);
    for (const auto& h : holds_) ++begin[h.first + 1];
    for (size_t n = 0; n < nodes; ++n) begin[n + 1] += begin[n];
    const auto children = [&](int32_t n) { return std::make_pair(begin[n], begin[n + 1]); };
    enum : int32_t { kUnseen = -1, kOnPath = -2 };
    std::vector<int32_t> depth(nodes, kUnseen);
    std::vector<std::pair<int32_t, size_t>> path;  // node, the index in holds_ of its next child to visit
    for (size_t root = 0; root < nodes; ++root) {
      if (depth[root] != kUnseen) continue;
      depth[root] = kOnPath;
      path.emplace_back(static_cast<int32_t>(root), children(static_cast<int32_t>(root)).first);
      while (!path.empty()) {
        const int32_t node = path.back().first;
        if (path.back().second < children(node).second) {
          const int32_t child = holds_[path.back().second++].second;
          op_at_ = made_at_[child];
          if (depth[child] == kOnPath) return Bad("a container that holds itself");
          if (depth[child] == kUnseen) {
            depth[child] = kOnPath;
            path.emplace_back(child, children(child).first);
          }
          continue;
        }
        int32_t d = 1;
        for (size_t h = children(node).first; h < children(node).second; ++h)
          d = std::max(d, depth[holds_[h].second] + 1);
        depth[node] = d;
        op_at_ = made_at_[node];
        if (d > kMaxNesting)
          return Bad("containers nested over " + std::to_string(kMaxNesting) +
                     " deep (LibTorch's recursion through them would overflow its stack)");
        path.pop_back();
      }
    }
    return ffr::Status::OK();
  }

  std::string Stem() const {
    const bool pkl = name_.size() >= 4 && name_.compare(name_.size() - 4, 4, ".pkl") == 0;
    return pkl ? name_.substr(0, name_.size() - 4) : name_;
  }

  // The stack above the innermost mark: what an opcode other than the mark's own may take.
  size_t Above() const { return stack_.size() - (marks_.empty() ? 0 : marks_.back()); }
  size_t PopMark() {
    const size_t mark = marks_.back();
    marks_.pop_back();
    return mark;
  }
  Value Pop() {
    Value v = std::move(stack_.back());
    stack_.pop_back();
    return v;
  }
  ffr::Status Push(Value v) {
    stack_.push_back(std::move(v));
    return ffr::Status::OK();
  }

  bool Take(uint64_t n, std::string_view* out) {
    if (n > pickle_.size() - at_) return false;
    *out = pickle_.substr(at_, n);
    at_ += n;
    return true;
  }
  bool Line(std::string_view* out) {
    const size_t end = pickle_.find('\n', at_);
    if (end == std::string_view::npos) return false;
    *out = pickle_.substr(at_, end - at_);
    at_ = end + 1;
    return true;
  }

  ffr::Status Truncated() { return Bad("an opcode whose argument runs past the end of the pickle"); }
  ffr::Status Bad(const std::string& what) const {
    return ffr::Status::Corruption("'" + name_ + "', byte " + std::to_string(op_at_) + ": " + what);
  }

  std::string_view pickle_;
  const std::string& name_;
  const RecordSize& record_size_;
  size_t at_ = 0, op_at_ = 0;
  std::vector<Value> stack_, memo_;
  std::vector<size_t> marks_;  // stack sizes at each MARK
  std::vector<Function> functions_;
  // The containers and objects made: the byte of the opcode that made each (its node number is its
  // index), and which holds which.
  std::vector<uint32_t> made_at_;
  std::vector<std::pair<int32_t, int32_t>> holds_;  // container node, node it holds
};

}  // namespace

const std::vector<StorageType>& StorageTypes() {
  static const std::vector<StorageType> types = {
      {"ByteStorage", 0, 1},  {"CharStorage", 1, 1},   {"ShortStorage", 2, 2}, {"IntStorage", 3, 4},
      {"LongStorage", 4, 8},  {"HalfStorage", 5, 2},   {"FloatStorage", 6, 4}, {"DoubleStorage", 7, 8},
      {"BoolStorage", 11, 1}, {"BFloat16Storage", 15, 2},
  };
  return types;
}

ffr::Status CheckPickle(std::string_view pickle, const std::string& name, const RecordSize& record_size) {
  return Checker(pickle, name, record_size).Run();
}

}  // namespace ffyolo
