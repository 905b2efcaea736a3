// fieldbrain._C.hrr: the HRR library (hrr/, docs/hrr.md) as Python functions on torch tensors
// [..., D] (float32/float64, any leading dims, CPU or CUDA: they run where the tensors are) and
// the Vocabulary / ItemMemory modules as torch.nn.Module subclasses. fieldbrain/hrr.py is the
// public face (names, docstrings, the loaders' module wrapping).
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <torch/extension.h>
#include <torch/python.h>

#include "hrr/algebra.h"
#include "hrr/item_memory.h"
#include "hrr/persistence.h"
#include "hrr/random_vectors.h"
#include "hrr/similarity.h"
#include "hrr/vocabulary.h"
#include "python/csrc/bindings.h"

namespace fieldbrain::python {
namespace {

// dtype=None | torch.float32 | torch.float64 | "float32" | "float64".
torch::Dtype dtype_argument(py::handle value) {
  if (value.is_none()) return torch::kFloat32;
  if (py::isinstance<py::str>(value)) {
    const auto name = value.cast<std::string>();
    if (name == "float32") return torch::kFloat32;
    if (name == "float64") return torch::kFloat64;
    throw py::value_error(fmt::format("dtype \"{}\" is not float32 or float64", name));
  }
  const torch::Dtype d = torch::python::detail::py_object_to_dtype(py::reinterpret_borrow<py::object>(value));
  if (d != torch::kFloat32 && d != torch::kFloat64) {
    throw py::type_error(fmt::format("dtype {} is not float32 or float64", c10::toString(d)));
  }
  return d;
}

// device=None (CPU) | torch.device | "cpu" | "cuda[:N]".
torch::Device device_argument(py::handle value) {
  if (value.is_none()) return torch::kCPU;
  if (py::isinstance<py::str>(value)) return torch::Device(value.cast<std::string>());
  return torch::python::detail::py_object_to_device(py::reinterpret_borrow<py::object>(value));
}

torch::TensorOptions options(py::handle dtype, py::handle device) {
  return torch::TensorOptions().dtype(dtype_argument(dtype)).device(device_argument(device));
}

hrr::SimilarityKind similarity_argument(const std::string& name) {
  if (name == "cosine") return hrr::SimilarityKind::kCosine;
  if (name == "dot") return hrr::SimilarityKind::kDot;
  throw py::value_error(fmt::format("similarity \"{}\" is not \"cosine\" or \"dot\"", name));
}

py::tuple query_tuple(const hrr::ItemQuery& q) { return py::make_tuple(q.scores, q.indices, q.matched); }

// The algebra: binding, inverses, bundling, permutations, similarity.
void bind_hrr_algebra(py::module& m) {
  using namespace fieldbrain::hrr;
  m.def("bind", &bind, py::arg("a"), py::arg("b"));
  m.def("unbind", &unbind, py::arg("c"), py::arg("b"));
  m.def("involution", &involution, py::arg("a"));
  m.def("inverse", &involution, py::arg("a"));
  m.def("exact_inverse", &exact_inverse, py::arg("b"), py::arg("relative_epsilon") = 1e-8);
  m.def("make_unitary", &make_unitary, py::arg("v"), py::arg("positive") = false);
  m.def(
      "identity",
      [](int64_t dim, py::object dtype, py::object device) {
        return identity(dim, options(dtype, device));
      },
      py::arg("dim"), py::kw_only(), py::arg("dtype") = py::none(), py::arg("device") = py::none());
  m.def(
      "bundle",
      [](const torch::Tensor& items, std::optional<torch::Tensor> weights, bool normalize) {
        return bundle(items, weights.value_or(torch::Tensor()), normalize);
      },
      py::arg("items"), py::arg("weights") = py::none(), py::arg("normalize") = false);
  m.def("permute", py::overload_cast<const torch::Tensor&, int64_t>(&permute), py::arg("v"),
        py::arg("shifts") = 1);
  m.def("inverse_permute", py::overload_cast<const torch::Tensor&, int64_t>(&inverse_permute),
        py::arg("v"), py::arg("shifts") = 1);
  m.def("permute_by",
        py::overload_cast<const torch::Tensor&, const torch::Tensor&>(&permute), py::arg("v"),
        py::arg("permutation"));
  m.def("inverse_permute_by",
        py::overload_cast<const torch::Tensor&, const torch::Tensor&>(&inverse_permute),
        py::arg("v"), py::arg("permutation"));
  m.def("power", &power, py::arg("v"), py::arg("exponent"));
  m.def("normalize", &normalize, py::arg("v"));
  m.def("dot", &dot, py::arg("a"), py::arg("b"));
  m.def("cosine", &cosine, py::arg("a"), py::arg("b"));
  m.def("cosine_matrix", &cosine_matrix, py::arg("queries"), py::arg("keys"));
}

// Seeded random vectors and the named vectors a vocabulary is made of.
void bind_hrr_random_vectors(py::module& m) {
  using namespace fieldbrain::hrr;
  m.def(
      "random",
      [](std::vector<int64_t> shape, uint64_t seed, py::object dtype, py::object device) {
        torch::Generator g = make_generator(seed);
        return random(shape, g, options(dtype, device));
      },
      py::arg("shape"), py::kw_only(), py::arg("seed") = 0, py::arg("dtype") = py::none(),
      py::arg("device") = py::none());
  m.def(
      "random_unitary",
      [](std::vector<int64_t> shape, uint64_t seed, py::object dtype, py::object device) {
        torch::Generator g = make_generator(seed);
        return random_unitary(shape, g, options(dtype, device));
      },
      py::arg("shape"), py::kw_only(), py::arg("seed") = 0, py::arg("dtype") = py::none(),
      py::arg("device") = py::none());
  m.def(
      "random_permutation",
      [](int64_t dim, uint64_t seed) {
        torch::Generator g = make_generator(seed);
        return random_permutation(dim, g);
      },
      py::arg("dim"), py::kw_only(), py::arg("seed") = 0);
  m.def(
      "named_vector",
      [](uint64_t seed, const std::string& name, int64_t dim, bool unitary, py::object dtype,
         py::object device) {
        return named_vector(seed, name, dim, unitary, options(dtype, device));
      },
      py::arg("seed"), py::arg("name"), py::arg("dim"), py::kw_only(), py::arg("unitary") = false,
      py::arg("dtype") = py::none(), py::arg("device") = py::none());
}

void bind_hrr_vocabulary(py::module& m) {
  using namespace fieldbrain::hrr;
  // The vectors are the buffer "vectors" (vocabulary.vectors, a tensor [N, D]); no method of
  // that name, which torch.nn.Module would take for an assignment to the buffer.
  torch::python::bind_module<VocabularyImpl>(m, "Vocabulary")
      .def(py::init([](int64_t dim, uint64_t seed, bool unitary, py::object dtype) {
             return std::make_shared<VocabularyImpl>(
                 VocabularyOptions(dim).seed(seed).unitary(unitary).dtype(dtype_argument(dtype)));
           }),
           py::arg("dim"), py::kw_only(), py::arg("seed") = 0, py::arg("unitary") = false,
           py::arg("dtype") = py::none())
      .def("get", &VocabularyImpl::get, py::arg("name"))
      .def("add", &VocabularyImpl::add, py::arg("names"))
      .def("contains", &VocabularyImpl::contains, py::arg("name"))
      .def("index_of", &VocabularyImpl::index_of, py::arg("name"))
      .def("names", [](const VocabularyImpl& v) { return v.names(); })
      .def("size", &VocabularyImpl::size)
      .def("dim", [](const VocabularyImpl& v) { return v.options().dim(); })
      .def("seed", [](const VocabularyImpl& v) { return v.options().seed(); })
      .def("unitary", [](const VocabularyImpl& v) { return v.options().unitary(); });
}

void bind_hrr_item_memory(py::module& m) {
  using namespace fieldbrain::hrr;
  torch::python::bind_module<ItemMemoryImpl>(m, "ItemMemory")
      .def(py::init([](int64_t dim, const std::string& similarity, double threshold,
                       py::object dtype) {
             return std::make_shared<ItemMemoryImpl>(ItemMemoryOptions(dim)
                                                         .similarity(similarity_argument(similarity))
                                                         .threshold(threshold)
                                                         .dtype(dtype_argument(dtype)));
           }),
           py::arg("dim"), py::kw_only(), py::arg("similarity") = "cosine",
           py::arg("threshold") = -std::numeric_limits<double>::infinity(),
           py::arg("dtype") = py::none())
      .def("add", &ItemMemoryImpl::add, py::arg("labels"), py::arg("vectors"))
      .def("add_item", &ItemMemoryImpl::add_item, py::arg("label"), py::arg("vector"))
      .def("remove", &ItemMemoryImpl::remove, py::arg("label"))
      .def(
          "query",
          [](const ItemMemoryImpl& mem, const torch::Tensor& q, int64_t k) {
            return query_tuple(mem.query(q, k));
          },
          py::arg("queries"), py::arg("k") = 1)
      .def(
          "cleanup",
          [](const ItemMemoryImpl& mem, const torch::Tensor& q) { return query_tuple(mem.cleanup(q)); },
          py::arg("queries"))
      .def("contains", &ItemMemoryImpl::contains, py::arg("label"))
      .def("index_of", &ItemMemoryImpl::index_of, py::arg("label"))
      .def("label", &ItemMemoryImpl::label, py::arg("index"))
      .def("labels", [](const ItemMemoryImpl& mem) { return mem.labels(); })
      .def("size", &ItemMemoryImpl::size)
      .def("dim", [](const ItemMemoryImpl& mem) { return mem.options().dim(); })
      .def("threshold", [](const ItemMemoryImpl& mem) { return mem.options().threshold(); });
}

// Saving and loading run without the GIL (file I/O and the archive checks).
void bind_hrr_persistence(py::module& m) {
  using namespace fieldbrain::hrr;
  m.def(
      "save_vocabulary",
      [](std::shared_ptr<VocabularyImpl> v, const std::string& path) {
        py::gil_scoped_release no_gil;
        save_vocabulary(Vocabulary(std::move(v)), path);
      },
      py::arg("vocabulary"), py::arg("path"));
  m.def(
      "load_vocabulary",
      [](const std::string& path) {
        py::gil_scoped_release no_gil;
        return load_vocabulary(path).ptr();
      },
      py::arg("path"));
  m.def(
      "save_item_memory",
      [](std::shared_ptr<ItemMemoryImpl> mem, const std::string& path) {
        py::gil_scoped_release no_gil;
        save_item_memory(ItemMemory(std::move(mem)), path);
      },
      py::arg("memory"), py::arg("path"));
  m.def(
      "load_item_memory",
      [](const std::string& path) {
        py::gil_scoped_release no_gil;
        return load_item_memory(path).ptr();
      },
      py::arg("path"));
}

}  // namespace

void bind_hrr(py::module& m) {
  bind_hrr_algebra(m);
  bind_hrr_random_vectors(m);
  bind_hrr_vocabulary(m);
  bind_hrr_item_memory(m);
  bind_hrr_persistence(m);
}

}  // namespace fieldbrain::python
