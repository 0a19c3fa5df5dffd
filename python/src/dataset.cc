#include "dataset.h"

#include <algorithm>
#include <memory>
#include <string>

#include <nanobind/ndarray.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "errors.h"
#include "ffyolo/dataset.h"
#include "gil.h"
#include "path_arg.h"
#include "reader.h"

namespace nb = nanobind;

namespace ffyolo::python {
namespace {

// A numpy array of `shape` owning `count` elements, which `fill` writes.
template <class T, class Fill>
nb::object NewArray(std::initializer_list<size_t> shape, Fill fill) {
  size_t count = 1;
  for (size_t d : shape) count *= d;
  T* data = new T[std::max<size_t>(count, 1)];  // never null, also for an image without boxes
  nb::capsule owner(data, [](void* p) noexcept { delete[] static_cast<T*>(p); });
  fill(data);
  return nb::cast(nb::ndarray<nb::numpy, T>(data, shape.size(), shape.begin(), owner));
}

// One split of an open dataset: its label index turned into Python objects once, at open. It holds the
// dataset open, and so its lock, while it lives: no pack replaces the shards its labels describe (nor
// those of the Readers it opens, which hold the dataset too).
class PySplit {
 public:
  PySplit(std::shared_ptr<const Dataset> dataset, std::string name, bool bytes)
      : dataset_(std::move(dataset)), name_(std::move(name)), bytes_(bytes) {
    LabelIndex index;
    ffr::Status s;
    {
      ReleasedGil released;
      s = dataset_->LoadLabelIndex(name_, &index);
    }
    ThrowIfError(s);
    size_ = index.size();
    for (size_t i = 0; i < index.size(); ++i) {
      // Crowd regions are never training targets (the loader drops them too): Ultralytics' labels.
      std::vector<const Box*> kept;
      for (size_t b = 0; b < index.box_count(i); ++b) {
        if (!index.boxes(i)[b].iscrowd) kept.push_back(&index.boxes(i)[b]);
      }
      labels_.append(NewArray<float>({kept.size(), 5}, [&](float* row) {
        for (const Box* b : kept) {
          *row++ = b->class_index, *row++ = b->cx, *row++ = b->cy, *row++ = b->w, *row++ = b->h;
        }
      }));
      files_.append(PathObject(std::string(index.file_name(i)), bytes_));
    }
    image_ids_ = NewArray<int64_t>({size_}, [&](int64_t* id) {
      for (size_t i = 0; i < size_; ++i) id[i] = index.image_id(i);
    });
    shapes_ = NewArray<int64_t>({size_, 2}, [&](int64_t* wh) {
      for (size_t i = 0; i < size_; ++i) *wh++ = index.width(i), *wh++ = index.height(i);
    });
  }

  const std::string& name() const { return name_; }
  size_t size() const { return size_; }
  const nb::list& labels() const { return labels_; }
  const nb::object& image_ids() const { return image_ids_; }
  const nb::object& shapes() const { return shapes_; }
  const nb::list& files() const { return files_; }
  PyReader OpenReader(PyReader::Options options) const {
    return PyReader(dataset_, {dataset_->path(), name_, bytes_}, std::move(options));
  }

 private:
  std::shared_ptr<const Dataset> dataset_;
  std::string name_;
  bool bytes_;  // the dataset's path was given as bytes: file names are handed back as bytes too
  size_t size_ = 0;
  nb::list labels_, files_;
  nb::object image_ids_, shapes_;
};

// The Dataset holds the dataset's LOCK shared while it, or a Split of it, is open, so a repack waits.
class PyDataset {
 public:
  explicit PyDataset(const PathArg& path) : bytes_(path.bytes) {
    std::unique_ptr<Dataset> dataset;
    ThrowIfError(Dataset::Open(path.path, &dataset));
    dataset_ = std::move(dataset);
  }

  const Manifest& manifest() const { return dataset_->manifest(); }
  const std::string& path() const { return dataset_->path(); }
  PathArg path_arg() const { return {path(), bytes_}; }

  // A name the dataset holds: one split, or several joined by '+' or ',' and read as one, as the tools
  // read --split (Dataset::ResolveSplit).
  bool Has(const std::string& split) const {
    std::string resolved = split;
    return !split.empty() && dataset_->ResolveSplit(/*training=*/true, &resolved).ok();
  }

  PySplit Split(const std::string& name) const {
    // "" would be the default split to ResolveSplit: here it names none.
    if (name.empty()) RaiseSplitError(dataset_->CheckSplit(name));
    std::string resolved = name;
    const ffr::Status s = dataset_->ResolveSplit(/*training=*/true, &resolved);
    if (!s.ok()) RaiseSplitError(s);
    return PySplit(dataset_, resolved, bytes_);
  }

 private:
  std::shared_ptr<const Dataset> dataset_;
  bool bytes_;  // the path was given as bytes, and is handed back so
};

}  // namespace

void BindDataset(nb::module_& m) {
  nb::class_<PySplit>(m, "Split", R"(One split of a packed Dataset (or several joined by '+').

Its metadata comes from the split's label index, read once when the Split is made; the image
bytes stay in the shards, which reader() opens. Sample i of every property is sample i of the
reader. A Split, and each Reader it opens, holds the dataset's lock as the Dataset does, so that
`yolo-pack --force` into it waits while they live.)")
      .def_prop_ro("name", &PySplit::name, "The split's name, e.g. 'train2017'.")
      .def("__len__", &PySplit::size, "The number of samples.")
      .def_prop_ro("labels", &PySplit::labels, nb::rv_policy::reference_internal,
                   "Per sample an (n, 5) float32 array of class, x, y, w, h (box centre and size "
                   "normalized to the image), crowd regions left out: Ultralytics' dataset.labels.")
      .def_prop_ro("image_ids", &PySplit::image_ids, nb::rv_policy::reference_internal,
                   "The samples' image ids, int64 (COCO's, or numbered from the file names).")
      .def_prop_ro("shapes", &PySplit::shapes, nb::rv_policy::reference_internal,
                   "An (n, 2) int64 array of each stored image's width, height (Ultralytics' order).")
      .def_prop_ro("files", &PySplit::files, nb::rv_policy::reference_internal,
                   "The samples' file names as packed, e.g. '000000000009.jpg' (bytes if the dataset's path was).")
      .def(
          "reader",
          [](const PySplit& s, const std::string& backend, bool direct_io, bool verify_checksums) {
            return s.OpenReader({backend, direct_io, verify_checksums});
          },
          nb::kw_only(), nb::arg("backend") = "auto", nb::arg("direct_io") = false,
          nb::arg("verify_checksums") = true, nb::call_guard<InCall>(),
          "A Reader over the split's shards, each checked against the manifest; options as Reader's.")
      .def("__repr__", [](const PySplit& s) {
        return Text("<ffyolo.Split " + s.name() + ": " + std::to_string(s.size()) + " samples>");
      });

  nb::class_<PyDataset>(m, "Dataset", R"(A packed dataset folder (NAME.ffr, made by yolo-pack).

Dataset(path)

Opening reads the manifest (dataset.yaml) and holds the dataset's lock shared until the Dataset,
and every Split and split Reader made from it, is garbage collected, so that `yolo-pack --force`
into it waits. dataset[name] or dataset.split(name) gives a Split.)")
      .def(
          "__init__",
          [](PyDataset* self, const PathArg& path) { new (self) PyDataset(path); }, nb::arg("path"))
      .def_prop_ro("path", &PyDataset::path_arg,
                   "The dataset folder: bytes when given as bytes, else a str (os.fsdecode's for a name that is not "
                   "UTF-8).")
      .def_prop_ro(
          "splits",
          [](const PyDataset& d) {
            std::vector<std::string> names;
            for (const SplitInfo& s : d.manifest().splits) names.push_back(s.name);
            return names;
          },
          "The names of the splits, in the manifest's order.")
      .def_prop_ro(
          "names", [](const PyDataset& d) { return d.manifest().names; }, "Class index -> class name.")
      .def_prop_ro(
          "nc", [](const PyDataset& d) { return d.manifest().names.size(); }, "The number of classes.")
      .def("split", &PyDataset::Split, nb::arg("name"), nb::call_guard<InCall>(),
           "The split `name` (several joined by '+' or ',' read as one, named 'a+b'); KeyError when there is "
           "none, ValueError when it names a split twice.")
      .def("__getitem__", &PyDataset::Split, nb::arg("name"), nb::call_guard<InCall>())
      .def("__contains__", &PyDataset::Has, nb::arg("name"))
      .def("__repr__", [](const PyDataset& d) {
        return Text("<ffyolo.Dataset " + d.path() + ": " + std::to_string(d.manifest().splits.size()) + " splits, " +
                    std::to_string(d.manifest().names.size()) + " classes>");
      });
}

}  // namespace ffyolo::python
