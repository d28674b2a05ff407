/*
 * The compiled control tick: the CPython extension module pinkctl._native._tick.
 *
 * One call per tick runs what PinkIKController's Python path spreads over a hundred small
 * calls when its QP is the fused arm problem (pinkctl/qp/fused.py: a frame task, an optional
 * posture task, the joint box): forward kinematics and the frame Jacobian (Pinocchio's C++
 * API, into the pink configuration's own pinocchio::Data), the log6 error and its Jlog6, the
 * QP H, c, lb, ub (written into the compiled QP's workspace), the exact box QP (_kernel.c,
 * warm-started from the same active set as the Python path's), and the motion shaper's step
 * (follow with motion limits: _kernel.c; commit without: MotionShaper.commit's clip).
 *
 * The Python side (pinkctl/controllers/compiled_tick.py) decides once which controllers this
 * covers and owns every array; the task parameters (costs, gains, targets, limit gain,
 * velocity limits) are read from the pink objects on every tick, so that a change made at run
 * time is seen as the Python path sees it. A tick this code does not cover (a parameter out of
 * the fused case, a box the box QP hands to DAQP) returns 0 before the shaper is touched, and
 * the caller runs the Python path for that tick.
 *
 * Build: hatch_build.py, against Pinocchio's headers and libraries from the cmeel prefix
 * (libpinocchio_default, libboost_python to find the C++ objects behind pin.Model, pin.Data
 * and pin.SE3); the module is optional: without it the Python path runs.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#include <numpy/arrayobject.h>

#include <boost/python/converter/registered.hpp>
#include <boost/python/converter/from_python.hpp>
#include <pinocchio/spatial.hpp>
#include <pinocchio/multibody.hpp>
#include <pinocchio/algorithm/frames.hpp>
#include <pinocchio/algorithm/jacobian.hpp>
#include <pinocchio/algorithm/joint-configuration.hpp>

#include <cmath>
#include <vector>

extern "C" {
#include "_native.h"
}

namespace {

using Matrix6x = Eigen::Matrix<double, 6, Eigen::Dynamic>;
using RowMatrix = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using Vector = Eigen::VectorXd;
namespace bpc = boost::python::converter;

template <typename T>
T *cxx_object(PyObject *object) {
    return static_cast<T *>(bpc::get_lvalue_from_python(object, bpc::registered<T>::converters));
}

/* A C-contiguous float64 buffer of n entries (n < 0: any length); nullptr without an error
 * set when the object is not one (the caller falls back). */
struct Doubles {
    Py_buffer view{};
    bool held = false;
    const double *data = nullptr;
    Py_ssize_t size = 0;
    Doubles(PyObject *object, Py_ssize_t n) {
        if (PyObject_GetBuffer(object, &view, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) != 0) {
            PyErr_Clear();
            return;
        }
        held = true;
        if (view.itemsize != 8 || view.format == nullptr || view.format[0] != 'd' ||
            view.format[1] != '\0' || (n >= 0 && view.len != n * 8))
            return;
        data = static_cast<const double *>(view.buf);
        size = view.len / 8;
    }
    ~Doubles() {
        if (held) PyBuffer_Release(&view);
    }
    Doubles(const Doubles &) = delete;
    Doubles &operator=(const Doubles &) = delete;
};

/* A Python float attribute (int accepted as pink allows); false without an error set when the
 * attribute is not a real number. */
bool attribute_double(PyObject *object, PyObject *name, double *out) {
    PyObject *value = PyObject_GetAttr(object, name);
    if (value == nullptr) return false;
    bool ok = PyFloat_Check(value) || PyLong_Check(value);
    if (ok) *out = PyFloat_AsDouble(value);
    Py_DECREF(value);
    if (ok && *out == -1.0 && PyErr_Occurred()) ok = false;
    return ok;
}

PyObject *s_cost, *s_gain, *s_lm_damping, *s_target, *s_target_q, *s_limit_gain,
    *s_velocity_limit;

enum Mode { PLAIN = 0, APPROACH = 1 };

struct TickObject {
    PyObject_HEAD
    PyObject *model_object, *data_object, *frame_task, *posture_task, *configuration_limit,
        *velocity_limit;
    const pinocchio::Model *model;
    pinocchio::Data *data;
    pinocchio::FrameIndex frame_id;
    std::vector<std::pair<pinocchio::FrameIndex, PyObject *>> *frames;  // every frame task
    int n, mode;
    double dt, damping;
    std::vector<Eigen::Index> tangent;   // the QP variables' tangent indices
    std::vector<Eigen::Index> q_index;   // their configuration indices (1-coordinate joints)
    std::vector<Eigen::Index> space_q;   // per joint-space entry: its configuration index or -1
    std::vector<Eigen::Index> space_column;  // per QP variable: its joint-space entry or -1
    double min_quaternion, max_distance_squared;  // what a target must meet (aim)
    double *q;                           // the configuration (nq), owned by the caller
    const double *q_home;                // the configuration of joints the estimate omits
    double *H, *c, *lb, *ub;             // the QP workspace (n x n, n, n, n)
    double *x, *work;                    // the box QP's solution and work
    int *state;                          // the box QP's active set (the warm start)
    struct Kernel *kernel;               // the shaper's kernel (APPROACH)
    const double *kernel_q, *kernel_v;   // its command
    const double *velocity_max, *lower, *upper;  // MotionShaper.commit's limits (PLAIN)
    Matrix6x *jacobian;
    RowMatrix *R;
    Vector *velocity;
};

void tick_dealloc(TickObject *self) {
    Py_XDECREF(self->model_object);
    Py_XDECREF(self->data_object);
    Py_XDECREF(self->frame_task);
    Py_XDECREF(self->posture_task);
    Py_XDECREF(self->configuration_limit);
    Py_XDECREF(self->velocity_limit);
    if (self->frames != nullptr)
        for (auto &frame : *self->frames) Py_DECREF(frame.second);
    delete self->frames;
    delete self->jacobian;
    delete self->R;
    delete self->velocity;
    self->tangent.~vector();
    self->q_index.~vector();
    self->space_q.~vector();
    self->space_column.~vector();
    Py_TYPE(self)->tp_free(reinterpret_cast<PyObject *>(self));
}

bool index_list(PyObject *list, std::vector<Eigen::Index> &out, Eigen::Index low,
                Eigen::Index high, const char *what) {
    PyObject *sequence = PySequence_Fast(list, what);
    if (sequence == nullptr) return false;
    Py_ssize_t size = PySequence_Fast_GET_SIZE(sequence);
    out.resize(size);
    for (Py_ssize_t i = 0; i < size; ++i) {
        long value = PyLong_AsLong(PySequence_Fast_GET_ITEM(sequence, i));
        if (value == -1 && PyErr_Occurred()) {
            Py_DECREF(sequence);
            return false;
        }
        if (value < low || value >= high) {
            Py_DECREF(sequence);
            PyErr_Format(PyExc_ValueError, "%s: index %ld out of range", what, value);
            return false;
        }
        out[i] = value;
    }
    Py_DECREF(sequence);
    return true;
}

void *address(PyObject *object) {
    if (object == Py_None) return nullptr;
    return PyLong_AsVoidPtr(object);
}

/*
 * Tick(model, data, frame_id, frame_task, posture_task, configuration_limit, velocity_limit,
 *      tangent, q_index, space_q, dt, damping, mode, addresses, min_quaternion, max_distance,
 *      extra_frames)
 * extra_frames: ((frame_id, frame_task), ...) of the frame tasks beside the tool's.
 * addresses: (q, q_home, H, c, lb, ub, x, state, work, kernel, kernel_q, kernel_v,
 *             velocity_max, lower, upper), None where a mode does not use one.
 */
PyObject *tick_new(PyTypeObject *type, PyObject *args, PyObject *kwargs) {
    PyObject *model, *data, *frame_task, *posture, *limit, *velocity, *tangent, *q_index,
        *space_q, *addresses, *extra_frames;
    unsigned long frame_id;
    double dt, damping, min_quaternion, max_distance;
    int mode;
    if (!PyArg_ParseTuple(args, "OOkOOOOOOOddiO!ddO!", &model, &data, &frame_id, &frame_task,
                          &posture, &limit, &velocity, &tangent, &q_index, &space_q, &dt,
                          &damping, &mode, &PyTuple_Type, &addresses, &min_quaternion,
                          &max_distance, &PyTuple_Type, &extra_frames))
        return nullptr;
    const pinocchio::Model *m = cxx_object<pinocchio::Model>(model);
    pinocchio::Data *d = cxx_object<pinocchio::Data>(data);
    if (m == nullptr || d == nullptr) {
        PyErr_SetString(PyExc_TypeError, "Tick(): expected a pinocchio.Model and its Data");
        return nullptr;
    }
    if (frame_id >= m->frames.size() || PyTuple_GET_SIZE(addresses) != 15 ||
        (mode != PLAIN && mode != APPROACH) || !(dt > 0.0)) {
        PyErr_SetString(PyExc_ValueError, "Tick(): bad frame, addresses, mode or dt");
        return nullptr;
    }
    TickObject *self = reinterpret_cast<TickObject *>(type->tp_alloc(type, 0));
    if (self == nullptr) return nullptr;
    new (&self->tangent) std::vector<Eigen::Index>();
    new (&self->q_index) std::vector<Eigen::Index>();
    new (&self->space_q) std::vector<Eigen::Index>();
    new (&self->space_column) std::vector<Eigen::Index>();
    PyObject *owned[] = {model, data, frame_task, posture, limit, velocity};
    for (PyObject *o : owned) Py_INCREF(o);
    self->model_object = model;
    self->data_object = data;
    self->frame_task = frame_task;
    self->posture_task = posture;
    self->configuration_limit = limit;
    self->velocity_limit = velocity;
    self->model = m;
    self->data = d;
    self->frame_id = frame_id;
    self->dt = dt;
    self->damping = damping;
    self->mode = mode;
    if (!index_list(tangent, self->tangent, 0, m->nv, "tangent") ||
        !index_list(q_index, self->q_index, 0, m->nq, "q_index") ||
        !index_list(space_q, self->space_q, -1, m->nq, "space_q") ||
        self->tangent.size() != self->q_index.size() || self->tangent.empty()) {
        if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "Tick(): bad indices");
        Py_DECREF(self);
        return nullptr;
    }
    self->n = static_cast<int>(self->tangent.size());
    self->min_quaternion = min_quaternion;
    self->max_distance_squared = max_distance * max_distance;
    self->space_column.assign(self->n, -1);
    for (int k = 0; k < self->n; ++k)
        for (size_t j = 0; j < self->space_q.size(); ++j)
            if (self->space_q[j] == self->q_index[k]) self->space_column[k] = j;
    void *p[15];
    for (int i = 0; i < 15; ++i) {
        p[i] = address(PyTuple_GET_ITEM(addresses, i));
        if (PyErr_Occurred()) {
            Py_DECREF(self);
            return nullptr;
        }
    }
    self->q = static_cast<double *>(p[0]);
    self->q_home = static_cast<const double *>(p[1]);
    self->H = static_cast<double *>(p[2]);
    self->c = static_cast<double *>(p[3]);
    self->lb = static_cast<double *>(p[4]);
    self->ub = static_cast<double *>(p[5]);
    self->x = static_cast<double *>(p[6]);
    self->state = static_cast<int *>(p[7]);
    self->work = static_cast<double *>(p[8]);
    self->kernel = static_cast<struct Kernel *>(p[9]);
    self->kernel_q = static_cast<const double *>(p[10]);
    self->kernel_v = static_cast<const double *>(p[11]);
    self->velocity_max = static_cast<const double *>(p[12]);
    self->lower = static_cast<const double *>(p[13]);
    self->upper = static_cast<const double *>(p[14]);
    bool approach_ready = self->kernel && self->kernel_q && self->kernel_v;
    bool plain_ready = self->velocity_max && self->lower && self->upper;
    if (!self->q || !self->q_home || !self->H || !self->c || !self->lb || !self->ub ||
        !self->x || !self->state || !self->work ||
        (mode == APPROACH ? !approach_ready : !plain_ready)) {
        PyErr_SetString(PyExc_ValueError, "Tick(): a null address");
        Py_DECREF(self);
        return nullptr;
    }
    self->frames = new std::vector<std::pair<pinocchio::FrameIndex, PyObject *>>();
    Py_INCREF(frame_task);
    self->frames->emplace_back(frame_id, frame_task);
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(extra_frames); ++i) {
        unsigned long id;
        PyObject *task;
        if (!PyArg_ParseTuple(PyTuple_GET_ITEM(extra_frames, i), "kO", &id, &task) ||
            id >= m->frames.size()) {
            if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "Tick(): bad extra frame");
            Py_DECREF(self);
            return nullptr;
        }
        Py_INCREF(task);
        self->frames->emplace_back(id, task);
    }
    self->jacobian = new Matrix6x(Matrix6x::Zero(6, m->nv));
    self->R = new RowMatrix(6, self->n);
    self->velocity = new Vector(self->n);
    return reinterpret_cast<PyObject *>(self);
}

/* The uniform weight of a posture cost (float, or an array of equal entries); false when the
 * fused case does not cover it. */
bool uniform_cost(PyObject *cost, double *out) {
    if (PyFloat_Check(cost)) {
        *out = PyFloat_AS_DOUBLE(cost);
        return true;
    }
    Doubles values(cost, -1);
    if (values.data == nullptr || values.size == 0) return false;
    for (Py_ssize_t i = 1; i < values.size; ++i)
        if (!(values.data[i] == values.data[0])) return false;
    *out = values.data[0];
    return true;
}

/* H, c, lb, ub of the fused problem (qp/fused.py) at self->q; false when a parameter takes
 * the tick out of the fused case. */
bool assemble(TickObject *self) {
    const pinocchio::Model &model = *self->model;
    pinocchio::Data &data = *self->data;
    const int n = self->n;
    const size_t n_frames = self->frames->size();
    std::vector<pinocchio::SE3 *> targets(n_frames);
    std::vector<Eigen::Matrix<double, 6, 1>> weights(n_frames);
    std::vector<double> gains(n_frames);
    for (size_t f = 0; f < n_frames; ++f) {
        PyObject *task = (*self->frames)[f].second;
        double lm;
        PyObject *target_object = PyObject_GetAttr(task, s_target);
        if (target_object == nullptr) return false;
        targets[f] = target_object == Py_None ? nullptr
                                              : cxx_object<pinocchio::SE3>(target_object);
        Py_DECREF(target_object);  // the task keeps it alive
        if (targets[f] == nullptr || !attribute_double(task, s_lm_damping, &lm) || lm != 0.0 ||
            !attribute_double(task, s_gain, &gains[f]))
            return false;
        PyObject *cost = PyObject_GetAttr(task, s_cost);
        if (cost == nullptr) return false;
        Doubles values(cost, 6);
        Py_DECREF(cost);
        if (values.data == nullptr) return false;
        for (int i = 0; i < 6; ++i) weights[f][i] = values.data[i];
    }
    double diagonal = self->damping, posture_scale = 0.0;
    Vector posture_error;
    Eigen::Map<const Vector> q(self->q, model.nq);
    if (self->posture_task != Py_None) {
        double posture_lm, posture_gain, w;
        PyObject *cost = PyObject_GetAttr(self->posture_task, s_cost);
        if (cost == nullptr) return false;
        bool ok = uniform_cost(cost, &w);
        Py_DECREF(cost);
        if (!ok || !attribute_double(self->posture_task, s_lm_damping, &posture_lm) ||
            posture_lm != 0.0 || !attribute_double(self->posture_task, s_gain, &posture_gain))
            return false;
        PyObject *target_q = PyObject_GetAttr(self->posture_task, s_target_q);
        if (target_q == nullptr) return false;
        Doubles posture_target(target_q, model.nq);
        Py_DECREF(target_q);
        if (posture_target.data == nullptr) return false;
        posture_error = pinocchio::difference(
            model, Eigen::Map<const Vector>(posture_target.data, model.nq), q);
        diagonal += w * w;
        posture_scale = posture_gain * (w * w);
    }
    double limit_gain;
    if (!attribute_double(self->configuration_limit, s_limit_gain, &limit_gain)) return false;
    Vector velocity_max;
    if (self->velocity_limit != Py_None) {
        PyObject *limit = PyObject_GetAttr(self->velocity_limit, s_velocity_limit);
        if (limit == nullptr) return false;
        Doubles values(limit, model.nv);
        Py_DECREF(limit);
        if (values.data == nullptr) return false;
        velocity_max = Eigen::Map<const Vector>(values.data, model.nv);
    }
    // phase 2: joint Jacobians (with forward kinematics) and frame placements
    pinocchio::computeJointJacobians(model, data, q);
    pinocchio::updateFramePlacements(model, data);
    Eigen::Map<RowMatrix> H(self->H, n, n);
    Eigen::Map<Vector> c(self->c, n);
    H.setZero();
    c.setZero();
    Matrix6x &J = *self->jacobian;
    RowMatrix &R = *self->R;
    for (size_t f = 0; f < n_frames; ++f) {
        const pinocchio::FrameIndex id = (*self->frames)[f].first;
        // the frame's pose in its target frame: log6 gives s (up to W and the gain), Jlog6
        // maps the frame's Jacobian J_b
        const pinocchio::SE3 frame_to_target = targets[f]->actInv(data.oMf[id]);
        Eigen::Matrix<double, 6, 6> jlog;
        pinocchio::Jlog6(frame_to_target, jlog);
        Eigen::Matrix<double, 6, 1> s = pinocchio::log6(frame_to_target).toVector();
        for (int i = 0; i < 6; ++i) {
            jlog.row(i) *= weights[f][i];
            s[i] = s[i] * weights[f][i] * gains[f];
        }
        J.setZero();
        pinocchio::getFrameJacobian(model, data, id, pinocchio::LOCAL, J);
        for (int k = 0; k < n; ++k) R.col(k).noalias() = jlog * J.col(self->tangent[k]);
        H.noalias() += R.transpose() * R;
        c.noalias() += R.transpose() * s;
    }
    H.diagonal().array() += diagonal;
    if (self->posture_task != Py_None)
        for (int k = 0; k < n; ++k) c[k] += posture_error[self->tangent[k]] * posture_scale;
    // the box: the configuration limit (within dt v_max with the velocity limit)
    const Vector to_upper = pinocchio::difference(model, q, model.upperPositionLimit);
    const Vector to_lower = pinocchio::difference(model, q, model.lowerPositionLimit);
    for (int k = 0; k < n; ++k) {
        const Eigen::Index t = self->tangent[k];
        double upper = to_upper[t] * limit_gain, lower = to_lower[t] * limit_gain;
        if (self->velocity_limit != Py_None) {
            const double step = velocity_max[t] * self->dt;
            upper = step < upper ? step : upper;
            lower = -step > lower ? -step : lower;
        }
        self->ub[k] = upper;
        self->lb[k] = lower;
    }
    return true;
}

/* A new read-only float64 array of n entries. */
PyObject *new_array(npy_intp n, double **data) {
    PyObject *array = PyArray_SimpleNew(1, &n, NPY_DOUBLE);
    if (array != nullptr) *data = static_cast<double *>(PyArray_DATA((PyArrayObject *)array));
    return array;
}

/*
 * run(q, from_space, from_command, previous, held, held_copy, follows, output)
 *     -> (positions, velocities, q[, over the joint space]), or None when the tick is not
 *     covered (the shaper is untouched: run the Python path); q: the configuration the tick
 *     linearised at (a new array, for the pink configuration)
 *
 * q: the configuration (nq), or with from_space the measured positions over the joint space.
 * output: 0 no third output; 1 the measured positions (from_space) with the command written
 * over the controlled joints; 2 a (3, joint space) state matrix, the command's positions and
 * velocities on the controlled joints' columns and zeros elsewhere.
 * previous: the last command (the shaper's position). held: the frame target of the previous
 * solved tick or None; held_copy: an SE3 that receives this tick's target. follows: whether
 * the last command came from a follow (MotionShaper).
 */
PyObject *tick_run(TickObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 8) {
        PyErr_Format(PyExc_TypeError, "run() takes 8 arguments (%zd given)", nargs);
        return nullptr;
    }
    const long output = PyLong_AsLong(args[7]);
    if (output < 0 || output > 2) {
        if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "run(): output is 0, 1 or 2");
        return nullptr;
    }
    const pinocchio::Model &model = *self->model;
    const int n = self->n;
    const bool from_space = args[1] == Py_True;
    if (output == 1 && !from_space) {
        PyErr_SetString(PyExc_ValueError, "run(): output 1 needs from_space");
        return nullptr;
    }
    const bool from_command = args[2] == Py_True;
    const Py_ssize_t size = static_cast<Py_ssize_t>(self->space_q.size());
    Doubles previous(args[3], n);
    if (previous.data == nullptr) Py_RETURN_NONE;
    const double *measured = nullptr;
    Doubles input(args[0], from_space ? size : model.nq);
    if (input.data == nullptr) Py_RETURN_NONE;
    if (from_space) {
        measured = input.data;
        double sum = 0.0;  // not finite: the Python path raises
        for (Py_ssize_t j = 0; j < size; ++j) sum += measured[j] * 0.0;
        if (!(sum == 0.0)) Py_RETURN_NONE;
        std::copy_n(self->q_home, model.nq, self->q);
        for (Py_ssize_t j = 0; j < size; ++j)
            if (self->space_q[j] >= 0) self->q[self->space_q[j]] = measured[j];
    } else {
        std::copy_n(input.data, model.nq, self->q);
    }
    if (from_command)
        for (int k = 0; k < n; ++k) self->q[self->q_index[k]] = previous.data[k];
    if (!assemble(self)) {
        if (PyErr_Occurred()) return nullptr;
        Py_RETURN_NONE;
    }
    if (pk_box_qp(n, self->H, self->c, self->lb, self->ub, self->x, self->state, self->work) ==
        0) {
        std::fill_n(self->state, n, 0);  // no warm start from a failed solve
        Py_RETURN_NONE;
    }
    double norm = 0.0;
    for (int k = 0; k < n; ++k) norm += self->x[k] * self->x[k];
    if (!std::isfinite(norm)) Py_RETURN_NONE;
    Vector &v = *self->velocity;
    for (int k = 0; k < n; ++k) v[k] = self->x[k] / self->dt;
    bool at_rest = false;
    double gain = 0.0;
    if (self->mode == APPROACH) {
        // the target holds when it is the one of the previous solved tick
        PyObject *target_object = PyObject_GetAttr(self->frame_task, s_target);
        if (target_object == nullptr) return nullptr;
        pinocchio::SE3 *target = cxx_object<pinocchio::SE3>(target_object);
        Py_DECREF(target_object);  // the task keeps it alive
        pinocchio::SE3 *held =
            args[4] == Py_None ? nullptr : cxx_object<pinocchio::SE3>(args[4]);
        pinocchio::SE3 *copy = cxx_object<pinocchio::SE3>(args[5]);
        if (target == nullptr || copy == nullptr ||
            !attribute_double(self->frame_task, s_gain, &gain)) {
            if (!PyErr_Occurred())
                PyErr_SetString(PyExc_TypeError, "run(): bad target, held_copy or gain");
            return nullptr;
        }
        const bool holding = held != nullptr && target->isApprox(*held, 1e-14);
        *copy = *target;
        at_rest = holding || args[6] != Py_True;
    }
    double *out_q, *out_v, *out_space = nullptr;
    PyObject *positions = new_array(n, &out_q);
    PyObject *velocities = new_array(n, &out_v);
    double *out_configuration;
    PyObject *configuration = new_array(model.nq, &out_configuration);
    PyObject *space = nullptr;
    if (output == 1) {
        space = new_array(size, &out_space);
    } else if (output == 2) {
        npy_intp shape[2] = {3, size};
        space = PyArray_ZEROS(2, shape, NPY_DOUBLE, 0);
        if (space != nullptr) out_space = static_cast<double *>(PyArray_DATA((PyArrayObject *)space));
    }
    if (positions == nullptr || velocities == nullptr || configuration == nullptr ||
        (output && space == nullptr)) {
        Py_XDECREF(positions);
        Py_XDECREF(velocities);
        Py_XDECREF(configuration);
        Py_XDECREF(space);
        return nullptr;
    }
    if (self->mode == APPROACH) {
        pk_follow(self->kernel, v.data(), at_rest ? 1 : 0, gain);
        std::copy_n(self->kernel_q, n, out_q);
        std::copy_n(self->kernel_v, n, out_v);
    } else {
        // MotionShaper.commit without motion limits
        const double *q0 = previous.data, *vmax = self->velocity_max;
        bool outside = false;
        for (int k = 0; k < n; ++k) {
            double vk = v[k] < vmax[k] ? v[k] : vmax[k];
            vk = vk > -vmax[k] ? vk : -vmax[k];
            out_v[k] = vk;
            out_q[k] = vk * self->dt + q0[k];
            outside = outside || out_q[k] > self->upper[k] || out_q[k] < self->lower[k];
        }
        if (outside)
            for (int k = 0; k < n; ++k) {
                const double high = self->upper[k] > q0[k] ? self->upper[k] : q0[k];
                const double low = self->lower[k] < q0[k] ? self->lower[k] : q0[k];
                double p = out_q[k] < high ? out_q[k] : high;
                p = p > low ? p : low;
                out_q[k] = p;
                out_v[k] = (p - q0[k]) / self->dt;
            }
    }
    PyArray_CLEARFLAGS((PyArrayObject *)positions, NPY_ARRAY_WRITEABLE);
    PyArray_CLEARFLAGS((PyArrayObject *)velocities, NPY_ARRAY_WRITEABLE);
    std::copy_n(self->q, model.nq, out_configuration);  // the configuration's q of this tick
    PyArray_CLEARFLAGS((PyArrayObject *)configuration, NPY_ARRAY_WRITEABLE);
    if (output == 1) {
        std::copy_n(measured, size, out_space);
        for (int k = 0; k < n; ++k)
            if (self->space_column[k] >= 0) out_space[self->space_column[k]] = out_q[k];
    } else if (output == 2) {
        for (int k = 0; k < n; ++k)
            if (self->space_column[k] >= 0) {
                out_space[self->space_column[k]] = out_q[k];
                out_space[size + self->space_column[k]] = out_v[k];
            }
    }
    PyObject *result = output ? PyTuple_Pack(4, positions, velocities, configuration, space)
                              : PyTuple_Pack(3, positions, velocities, configuration);
    Py_DECREF(positions);
    Py_DECREF(velocities);
    Py_DECREF(configuration);
    Py_XDECREF(space);
    return result;
}

/* Set the frame task's target to (t, the quaternion w, x, y, z normalised) as the Python path
 * reads a pose; false (no error) for a non-finite pose, a zero quaternion or a target beyond
 * the distance the controller accepts: the Python path then says why. */
int set_target(TickObject *self, const Eigen::Vector3d &t, double w, double x, double y,
               double z) {
    const double squared = w * w + x * x + y * y + z * z;
    const double distance = t.squaredNorm();
    const double largest = std::max(std::max(std::fabs(w), std::fabs(x)),
                                    std::max(std::fabs(y), std::fabs(z)));
    if (!std::isfinite(squared + distance) || !(squared > 1e-200 && squared < 1e200) ||
        largest < self->min_quaternion || distance > self->max_distance_squared)
        return 0;
    const double scale = 1.0 / std::sqrt(squared);
    const Eigen::Quaterniond unit(w * scale, x * scale, y * scale, z * scale);
    const pinocchio::SE3 target(unit.toRotationMatrix(), t);
    PyObject *object = bpc::registered<pinocchio::SE3>::converters.to_python(&target);
    if (object == nullptr) return -1;
    const int failed = PyObject_SetAttr(self->frame_task, s_target, object);
    Py_DECREF(object);
    return failed ? -1 : 1;
}

PyObject *target_result(int result) {
    if (result < 0) return nullptr;
    return PyBool_FromLong(result);
}

/* aim(pose) -> whether pose (a pin.SE3, read through its quaternion) became the target. */
PyObject *tick_aim(TickObject *self, PyObject *pose) {
    pinocchio::SE3 *given = cxx_object<pinocchio::SE3>(pose);
    if (given == nullptr) Py_RETURN_FALSE;
    const Eigen::Quaterniond quaternion(given->rotation());
    return target_result(set_target(self, given->translation(), quaternion.w(), quaternion.x(),
                                    quaternion.y(), quaternion.z()));
}

/* aim_pose(position (3,), quaternion (4,) w, x, y, z) -> whether it became the target. */
PyObject *tick_aim_pose(TickObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 2) {
        PyErr_SetString(PyExc_TypeError, "aim_pose() takes 2 arguments");
        return nullptr;
    }
    Doubles position(args[0], 3), quaternion(args[1], 4);
    if (position.data == nullptr || quaternion.data == nullptr) Py_RETURN_FALSE;
    const double *p = position.data, *q = quaternion.data;
    return target_result(set_target(self, Eigen::Vector3d(p[0], p[1], p[2]), q[0], q[1], q[2], q[3]));
}

/* kernel_size() -> sizeof(Kernel) of the _kernel.c linked here (the shaper's layout check). */
PyObject *kernel_size(PyObject *, PyObject *) { return PyLong_FromUnsignedLong(pk_kernel_size()); }

PyMethodDef module_methods[] = {
    {"kernel_size", kernel_size, METH_NOARGS,
     "kernel_size() -> sizeof(Kernel) of the linked kernel (the layout check)."},
    {nullptr, nullptr, 0, nullptr},
};

PyMethodDef tick_methods[] = {
    {"run", (PyCFunction)(void (*)(void))tick_run, METH_FASTCALL,
     "run(q, from_space, from_command, previous, held, held_copy, follows, output) -> the "
     "command, "
     "or None when the Python path must run the tick."},
    {"aim", (PyCFunction)tick_aim, METH_O,
     "aim(pose) -> whether the SE3 pose became the frame task's target."},
    {"aim_pose", (PyCFunction)(void (*)(void))tick_aim_pose, METH_FASTCALL,
     "aim_pose(position, quaternion_wxyz) -> whether the pose became the frame task's target."},
    {nullptr, nullptr, 0, nullptr},
};

PyTypeObject TickType = {PyVarObject_HEAD_INIT(nullptr, 0)};

PyModuleDef module_definition = {
    PyModuleDef_HEAD_INIT, "pinkctl._native._tick",
    "pinkctl's compiled control tick (Pinocchio C++); see pinkctl.controllers.compiled_tick.",
    -1, module_methods,
};

}  // namespace

PyMODINIT_FUNC PyInit__tick(void) {
    TickType.tp_name = "pinkctl._native._tick.Tick";
    TickType.tp_basicsize = sizeof(TickObject);
    TickType.tp_flags = Py_TPFLAGS_DEFAULT;
    TickType.tp_doc = "One controller's compiled tick (see the module's source).";
    TickType.tp_new = tick_new;
    TickType.tp_dealloc = reinterpret_cast<destructor>(tick_dealloc);
    TickType.tp_methods = tick_methods;
    import_array();
    if (PyType_Ready(&TickType) < 0) return nullptr;
    s_cost = PyUnicode_InternFromString("cost");
    s_gain = PyUnicode_InternFromString("gain");
    s_lm_damping = PyUnicode_InternFromString("lm_damping");
    s_target = PyUnicode_InternFromString("transform_target_to_world");
    s_target_q = PyUnicode_InternFromString("target_q");
    s_limit_gain = PyUnicode_InternFromString("config_limit_gain");
    s_velocity_limit = PyUnicode_InternFromString("velocity_limit");
    if (!s_cost || !s_gain || !s_lm_damping || !s_target || !s_target_q || !s_limit_gain ||
        !s_velocity_limit)
        return nullptr;
    PyObject *module = PyModule_Create(&module_definition);
    if (module == nullptr) return nullptr;
    Py_INCREF(&TickType);
    if (PyModule_AddObject(module, "Tick", reinterpret_cast<PyObject *>(&TickType)) < 0) {
        Py_DECREF(&TickType);
        Py_DECREF(module);
        return nullptr;
    }
    return module;
}
