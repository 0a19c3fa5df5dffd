#include "reader.h"

#include <unistd.h>

#include <Python.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include "errors.h"
#include "ffyolo/dataset.h"
#include "gil.h"
#include "path_arg.h"

namespace nb = nanobind;

namespace ffyolo::python {
namespace {

ffr::IoBackend ParseBackend(const std::string& name) {
  for (ffr::IoBackend b : {ffr::IoBackend::kAuto, ffr::IoBackend::kIoUring, ffr::IoBackend::kPread,
                           ffr::IoBackend::kMmap}) {
    if (name == ffr::IoBackendName(b)) return b;
  }
  throw nb::value_error(("backend='" + name + "': use 'auto', 'io_uring', 'pread' or 'mmap'").c_str());
}

// The packed dataset of a split's Reader; when `manifest_crc` is given (an unpickled Reader's), the one
// it was made from: a dataset packed again since then is refused, as its samples are others.
std::shared_ptr<const Dataset> OpenDataset(const PyReader::Source& source, const std::string& manifest_crc) {
  std::unique_ptr<Dataset> dataset;
  ffr::Status s;
  {
    ReleasedGil released;
    s = Dataset::Open(source.path, &dataset);
  }
  ThrowIfError(s);
  if (!manifest_crc.empty() && dataset->ManifestCrc() != manifest_crc)
    Raise(PyExc_ValueError, source.path + ": packed again since this Reader of split '" + source.split +
                                "' was made (its manifest's CRC-32 was " + manifest_crc + ", it is " +
                                dataset->ManifestCrc() + " now): open the split again");
  return dataset;
}

// Python's indexing: -1 is the last sample.
int64_t Normalize(int64_t index, int64_t size) {
  int64_t i = index < 0 ? index + size : index;
  if (i < 0 || i >= size) {
    throw nb::index_error(("sample index " + std::to_string(index) + " out of range for " +
                           std::to_string(size) + " samples").c_str());
  }
  return i;
}

// A pickled Reader: what it was opened from, its options, and its dataset's identity ("" for shards).
using State = std::tuple<PathArg, std::string, std::string, bool, bool, std::string>;

}  // namespace

PyReader::PyReader(Source source, Options options, const std::string& manifest_crc)
    : source_(std::move(source)), options_(std::move(options)), pid_(getpid()) {
  if (!source_.split.empty()) dataset_ = OpenDataset(source_, manifest_crc);
  Open();
}

PyReader::PyReader(std::shared_ptr<const Dataset> dataset, Source source, Options options)
    : source_(std::move(source)), options_(std::move(options)), pid_(getpid()), dataset_(std::move(dataset)) {
  Open();
}

void PyReader::Open() {
  ffr::ReaderOptions o;
  o.backend = ParseBackend(options_.backend);
  o.direct_io = options_.direct_io;
  o.verify_checksums = options_.verify_checksums;
  std::unique_ptr<ffr::Reader> reader;
  ffr::Status s;
  {
    // Opening reads every shard's header (and with mmap populates the mappings): other threads run.
    ReleasedGil released;
    s = dataset_ ? dataset_->OpenReader(source_.split, o, &reader) : ffr::Reader::Open(source_.path, o, &reader);
  }
  ThrowIfError(s);
  if (dataset_) manifest_crc_ = dataset_->ManifestCrc();
  reader_ = std::move(reader);
}

std::shared_ptr<const ffr::Reader> PyReader::Get() const {
  if (getpid() != pid_) {
    Raise(PyExc_RuntimeError, "this ffyolo.Reader of " + source_.path + " was opened in process " +
                                  std::to_string(pid_) + " and cannot be used in process " + std::to_string(getpid()) +
                                  " after fork(): open a new Reader in the child, or pickle it (it reopens by path)");
  }
  if (reader_ == nullptr) Raise(PyExc_ValueError, "the ffyolo.Reader of " + source_.path + " is closed");
  return reader_;
}

int64_t PyReader::size() const { return Get()->size(); }

std::string PyReader::backend() const { return ffr::IoBackendName(Get()->backend()); }

nb::bytes PyReader::Read(int64_t index) const {
  return nb::borrow<nb::bytes>(ReadBatch({index})[0]);
}

nb::typed<nb::list, nb::bytes> PyReader::ReadBatch(const std::vector<int64_t>& indices) const {
  std::shared_ptr<const ffr::Reader> reader = Get();
  // Each sample is read straight into the bytes object Python gets (allocated, not yet shared), so
  // there is no copy beyond the read itself.
  std::vector<int64_t> at(indices.size());
  std::vector<uint8_t*> dsts(indices.size());
  nb::typed<nb::list, nb::bytes> out;
  for (size_t k = 0; k < indices.size(); ++k) {
    at[k] = Normalize(indices[k], reader->size());
    PyObject* bytes = PyBytes_FromStringAndSize(nullptr, static_cast<Py_ssize_t>(reader->sample_size(at[k])));
    if (bytes == nullptr) throw nb::python_error();
    out.append(nb::steal(bytes));
    dsts[k] = reinterpret_cast<uint8_t*>(PyBytes_AS_STRING(bytes));
  }
  ffr::Status s;
  {
    ReleasedGil released;
    s = reader->ReadBatchInto(at.data(), at.size(), dsts.data());
  }
  ThrowIfError(s);
  return out;
}

void BindReader(nb::module_& m) {
  nb::class_<PyReader>(m, "Reader", R"(The samples of FFRecord shards, read by index.

Reader(path, *, backend="auto", direct_io=False, verify_checksums=True)

path is one shard (.ffr file) or a folder whose *.ffr files, in name order, are read as one
sequence. backend is "auto" (io_uring when the kernel allows it, else pread), "io_uring", "pread"
or "mmap"; all give the same bytes. direct_io reads with O_DIRECT (not with mmap);
verify_checksums checks each sample's CRC-32 and raises CorruptionError on a mismatch.

Reads release the GIL, so several threads may read at once. A Reader pickles by its path and
options and reopens when unpickled (a split's Reader refuses a dataset packed again since: ValueError);
after os.fork() it raises RuntimeError in the child.)")
      .def(
          "__init__",
          [](PyReader* self, const PathArg& path, const std::string& backend, bool direct_io,
             bool verify_checksums) {
            new (self) PyReader({path.path, "", path.bytes}, {backend, direct_io, verify_checksums});
          },
          nb::arg("path"), nb::kw_only(), nb::arg("backend") = "auto", nb::arg("direct_io") = false,
          nb::arg("verify_checksums") = true, nb::call_guard<InCall>())
      .def("__len__", &PyReader::size, "The number of samples.")
      .def("read", &PyReader::Read, nb::arg("index"), nb::call_guard<InCall>(), "Sample `index` (negative counts from the end).")
      .def("read_batch", &PyReader::ReadBatch, nb::arg("indices"), nb::call_guard<InCall>(),
           "The samples at `indices`, in order (repeats allowed), read with one submission.")
      .def("__getitem__", &PyReader::Read, nb::arg("index"), nb::call_guard<InCall>())
      .def_prop_ro("backend", &PyReader::backend, "The backend in use: 'io_uring', 'pread' or 'mmap'.")
      .def_prop_ro(
          "path", [](const PyReader& r) { return PathArg{r.source().path, r.source().bytes}; },
          "What the reader was opened on: a shard, a folder of shards, or a packed dataset; bytes when given as "
          "bytes, else a str (os.fsdecode's, for a name that is not UTF-8).")
      .def_prop_ro(
          "split",
          [](const PyReader& r) {
            return r.source().split.empty() ? std::nullopt : std::optional<std::string>(r.source().split);
          },
          "The split of the packed dataset `path` read, or None.")
      .def_prop_ro("closed", &PyReader::closed, "Whether close() was called.")
      .def("close", &PyReader::Close, "Closes the shards; reads under way finish first.")
      .def("__enter__", [](nb::handle self) { return self; })
      .def("__exit__", [](PyReader& r, nb::args) { r.Close(); })
      .def("__getstate__",
           [](const PyReader& r) {
             return State(PathArg{r.source().path, r.source().bytes}, r.source().split, r.options().backend,
                          r.options().direct_io, r.options().verify_checksums, r.manifest_crc());
           })
      .def("__setstate__",
           [](PyReader* self, const State& s) {
             const PathArg& path = std::get<0>(s);
             new (self) PyReader({path.path, std::get<1>(s), path.bytes},
                                 {std::get<2>(s), std::get<3>(s), std::get<4>(s)}, std::get<5>(s));
           },
           nb::call_guard<InCall>())
      .def("__repr__", [](const PyReader& r) {
        std::string where = r.source().split.empty() ? r.source().path : r.source().path + ", split=" + r.source().split;
        if (r.closed()) return Text("<ffyolo.Reader " + where + " (closed)>");
        return Text("<ffyolo.Reader " + where + ": " + std::to_string(r.size()) + " samples, " + r.backend() + ">");
      });
}

}  // namespace ffyolo::python
