// Copyright (c) 2026 PaddlePaddle Authors. All Rights Reserved.
//
// Licensed under the Apache License, Version 2.0 (the "License");
// you may not use this file except in compliance with the License.
// You may obtain a copy of the License at
//
//     http://www.apache.org/licenses/LICENSE-2.0
//
// Unless required by applicable law or agreed to in writing, software
// distributed under the License is distributed on an "AS IS" BASIS,
// WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
// See the License for the specific language governing permissions and
// limitations under the License.

// run_tensor_hooks: calls Python gradient hooks when a backward program runs.
//
//   out = run_tensor_hooks(grad, captured, hooks_id)
//
// `captured` is None when the hooks read no traced value.
// The kernel takes the GIL and calls
// paddle.autograd.run_time_hooks.dispatch(hooks_id, grad, captured) with the
// run-time Tensors. dispatch returns the new gradient (a Tensor of grad's
// shape and dtype), or a str: the error the hooks raised, thrown here.
// `captured` are the program values the hooks read (a closure cell holding a
// traced tensor), given to them as the Tensors of this run.

#include <Python.h>

#include <string>
#include <vector>

#include "paddle/common/enforce.h"
#include "paddle/extension.h"
#include "paddle/phi/core/dense_tensor.h"
#include "paddle/utils/pybind.h"

namespace {

constexpr const char* kDispatchModule = "paddle.autograd.run_time_hooks";

// Owns one reference.
struct PyRef {
  PyObject* ptr;
  explicit PyRef(PyObject* p) : ptr(p) {}
  PyRef(const PyRef&) = delete;
  PyRef& operator=(const PyRef&) = delete;
  ~PyRef() { Py_XDECREF(ptr); }
};

std::string FetchPythonError() {
  PyObject *type = nullptr, *value = nullptr, *traceback = nullptr;
  PyErr_Fetch(&type, &value, &traceback);
  std::string message = "unknown Python error";
  if (value != nullptr) {
    PyRef text(PyObject_Str(value));
    if (text.ptr != nullptr && PyUnicode_Check(text.ptr)) {
      message = PyUnicode_AsUTF8(text.ptr);
    }
  }
  Py_XDECREF(type);
  Py_XDECREF(value);
  Py_XDECREF(traceback);
  PyErr_Clear();
  return message;
}

// A Tensor of its own that shares `tensor`'s memory: the executor clears the
// DenseTensor of a variable it is done with, and a hook may keep the traced
// Tensors it reads (seen.append(w)).
paddle::Tensor OwnTensor(const paddle::Tensor& tensor) {
  auto* dense = dynamic_cast<phi::DenseTensor*>(tensor.impl().get());
  if (dense == nullptr) return tensor;
  auto own = std::make_shared<phi::DenseTensor>();
  own->ShareDataWith(*dense);
  return paddle::Tensor(std::shared_ptr<phi::TensorBase>(own));
}

// Calls dispatch with the GIL held; returns an error message or "".
std::string CallHooks(const paddle::Tensor& grad,
                      const std::vector<paddle::Tensor>& captured,
                      int64_t hooks_id,
                      paddle::Tensor* out) {
  // The dispatch function, looked up once (with the GIL held).
  static PyObject* dispatch = nullptr;
  if (dispatch == nullptr) {
    PyRef module(PyImport_ImportModule(kDispatchModule));
    if (module.ptr == nullptr) return FetchPythonError();
    dispatch = PyObject_GetAttrString(module.ptr, "dispatch");
    if (dispatch == nullptr) return FetchPythonError();
  }
  // The hooks get a copy of the gradient, and the program goes on with a
  // copy of their result: the executor may later write a buffer in place,
  // and a hook may keep its Tensor (grads.append(g)) or change it in place
  // (g.detach().scale_(2)), as it may in eager.
  PyRef py_grad(
      paddle::pybind::ToPyObject(grad.copy_to(grad.place(), true), false));
  PyRef py_captured(PyList_New(static_cast<Py_ssize_t>(captured.size())));
  if (py_grad.ptr == nullptr || py_captured.ptr == nullptr) {
    return FetchPythonError();
  }
  for (size_t i = 0; i < captured.size(); ++i) {
    PyObject* item =
        paddle::pybind::ToPyObject(OwnTensor(captured[i]), false);
    if (item == nullptr) return FetchPythonError();
    PyList_SET_ITEM(py_captured.ptr, static_cast<Py_ssize_t>(i), item);
  }
  PyRef result(PyObject_CallFunction(dispatch,
                                     "LOO",
                                     static_cast<long long>(hooks_id),
                                     py_grad.ptr,
                                     py_captured.ptr));
  if (result.ptr == nullptr) return FetchPythonError();
  if (PyUnicode_Check(result.ptr)) return PyUnicode_AsUTF8(result.ptr);
  try {
    const paddle::Tensor& new_grad =
        paddle::pybind::CastPyArg2Tensor(result.ptr, 0);
    *out = new_grad.copy_to(new_grad.place(), true);
  } catch (const std::exception& e) {
    PyErr_Clear();
    return std::string("run_tensor_hooks: dispatch returned no Tensor: ") +
           e.what();
  }
  return "";
}

}  // namespace

std::vector<paddle::Tensor> RunTensorHooks(
    const paddle::Tensor& grad,
    const paddle::optional<std::vector<paddle::Tensor>>& captured,
    int64_t hooks_id) {
  paddle::Tensor out;
  std::string error;
  {
    // An executor thread keeps one Python thread state for its life: a
    // thread state made and dropped at every call would start the
    // thread's threading.local data (Paddle's mode state) anew each time.
    static thread_local bool has_thread_state = false;
    if (!has_thread_state) {
      if (PyGILState_GetThisThreadState() == nullptr) {
        PyGILState_Ensure();
        PyEval_SaveThread();
      }
      has_thread_state = true;
    }
    PyGILState_STATE gil = PyGILState_Ensure();
    error = CallHooks(grad,
                      captured ? *captured : std::vector<paddle::Tensor>(),
                      hooks_id,
                      &out);
    PyGILState_Release(gil);
  }
  if (!error.empty()) {
    // An EnforceNotMet, which the executor carries to the Python caller of
    // the backward from any of its threads, as the Python error of its code.
    auto raised = [&error](const char* type) {
      return error.rfind(std::string(type) + ": ", 0) == 0;
    };
    if (raised("ValueError")) {
      PADDLE_THROW(common::errors::InvalidArgument("%s", error));
    } else if (raised("TypeError")) {
      PADDLE_THROW(common::errors::InvalidType("%s", error));
    } else if (raised("IndexError")) {
      PADDLE_THROW(common::errors::OutOfRange("%s", error));
    } else if (raised("NotImplementedError")) {
      PADDLE_THROW(common::errors::Unimplemented("%s", error));
    }
    PADDLE_THROW(common::errors::PreconditionNotMet("%s", error));
  }
  return {out};
}

std::vector<std::vector<int64_t>> RunTensorHooksInferShape(
    const std::vector<int64_t>& grad_shape,
    const paddle::optional<std::vector<std::vector<int64_t>>>& captured_shapes,
    int64_t hooks_id) {
  return {grad_shape};
}

std::vector<paddle::DataType> RunTensorHooksInferDtype(
    const paddle::DataType& grad_dtype,
    const paddle::optional<std::vector<paddle::DataType>>& captured_dtypes) {
  return {grad_dtype};
}

PD_BUILD_OP(run_tensor_hooks)
    .Inputs({"Grad", paddle::Optional(paddle::Vec("Captured"))})
    .Outputs({"Out"})
    .Attrs({"hooks_id: int64_t"})
    .SetKernelFn(PD_KERNEL(RunTensorHooks))
    .SetInferShapeFn(PD_INFER_SHAPE(RunTensorHooksInferShape))
    .SetInferDtypeFn(PD_INFER_DTYPE(RunTensorHooksInferDtype));
