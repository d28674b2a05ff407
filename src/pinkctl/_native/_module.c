/*
 * The CPython extension module pinkctl._native._kernel: the kernel's entry points (_native.h)
 * as module functions.
 *
 * Arguments are what the C functions take: the addresses of the caller's structures and
 * arrays as Python ints (the caller owns them and keeps them alive; a null address is
 * refused), ints and floats. The calls are METH_FASTCALL, so one costs about as much as any
 * builtin call; the IK loop, which may run for milliseconds, releases the GIL.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>
#include <string.h>

#include "_native.h"

/* args[0 .. count) as addresses into out; 0 on success, -1 with an exception set. */
static int addresses(const char *name, PyObject *const *args, Py_ssize_t count, void **out) {
    for (Py_ssize_t i = 0; i < count; ++i) {
        out[i] = PyLong_AsVoidPtr(args[i]);
        if (out[i] == NULL) {
            if (!PyErr_Occurred())
                PyErr_Format(PyExc_ValueError, "%s(): argument %zd is a null address", name,
                             i + 1);
            return -1;
        }
    }
    return 0;
}

static int exactly(const char *name, Py_ssize_t nargs, Py_ssize_t expected) {
    if (nargs == expected) return 0;
    PyErr_Format(PyExc_TypeError, "%s() takes %zd arguments (%zd given)", name, expected, nargs);
    return -1;
}

static PyObject *kernel_size(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
    if (exactly("kernel_size", nargs, 0)) return NULL;
    return PyLong_FromUnsignedLong(pk_kernel_size());
}

static PyObject *reset(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
    void *p[4];
    if (exactly("reset", nargs, 4) || addresses("reset", args, 4, p)) return NULL;
    pk_reset(p[0], p[1], p[2], p[3]);
    Py_RETURN_NONE;
}

static PyObject *update(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
    void *p[2];
    if (exactly("update", nargs, 2) || addresses("update", args, 2, p)) return NULL;
    pk_update(p[0], p[1]);
    Py_RETURN_NONE;
}

static PyObject *bounds(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
    void *p[3];
    if (exactly("bounds", nargs, 3) || addresses("bounds", args, 3, p)) return NULL;
    return PyBool_FromLong(pk_bounds(p[0], p[1], p[2]));
}

static PyObject *commit(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
    void *p[2];
    if (exactly("commit", nargs, 2) || addresses("commit", args, 2, p)) return NULL;
    pk_commit(p[0], p[1]);
    Py_RETURN_NONE;
}

/* follow(kernel, wanted, at_rest, gain) */
static PyObject *follow(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
    void *p[2];
    if (exactly("follow", nargs, 4) || addresses("follow", args, 2, p)) return NULL;
    int at_rest = PyObject_IsTrue(args[2]);
    double gain = PyFloat_AsDouble(args[3]);
    if (at_rest < 0 || (gain == -1.0 && PyErr_Occurred())) return NULL;
    pk_follow(p[0], p[1], at_rest, gain);
    Py_RETURN_NONE;
}

/* box_qp(n, H, c, lb, ub, x, state, work) -> factorisations (0: the caller falls back) */
static PyObject *box_qp(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
    void *p[7];
    if (exactly("box_qp", nargs, 8)) return NULL;
    int overflow = 0;
    long n = PyLong_AsLongAndOverflow(args[0], &overflow);
    if (n == -1 && PyErr_Occurred()) return NULL;
    if (overflow || n < 0 || n > INT_MAX) {
        PyErr_SetString(PyExc_ValueError, "box_qp(): n must be a non-negative int");
        return NULL;
    }
    if (addresses("box_qp", args + 1, 7, p)) return NULL;
    return PyLong_FromLong(pk_box_qp((int)n, p[0], p[1], p[2], p[3], p[4], p[5], p[6]));
}

static PyObject *ik_problem_size(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
    if (exactly("ik_problem_size", nargs, 0)) return NULL;
    return PyLong_FromUnsignedLong(pk_ik_problem_size());
}

/* ik_local(problem) -> 1 on success, 0 otherwise (the outputs are in the structure) */
static PyObject *ik_local(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
    void *p[1];
    if (exactly("ik_local", nargs, 1) || addresses("ik_local", args, 1, p)) return NULL;
    int success;
    Py_BEGIN_ALLOW_THREADS
    success = pk_ik_local(p[0]);
    Py_END_ALLOW_THREADS
    return PyBool_FromLong(success);
}

static PyObject *ik_query_size(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
    if (exactly("ik_query_size", nargs, 0)) return NULL;
    return PyLong_FromUnsignedLong(pk_ik_query_size());
}

/* Copies a float64 array of the given shape (cols 0: a vector of rows entries) into out,
 * row-major, whatever its strides; 0 when obj is not such an array (no exception left). */
static int read_doubles(PyObject *obj, Py_ssize_t rows, Py_ssize_t cols, double *out) {
    Py_buffer view;
    if (PyObject_GetBuffer(obj, &view, PyBUF_STRIDES | PyBUF_FORMAT) != 0) {
        PyErr_Clear();
        return 0;
    }
    const int ndim = cols > 0 ? 2 : 1;
    const char *f = view.format != NULL ? view.format : "B";
    if (*f == '<' || *f == '=' || *f == '@') ++f;
    int ok = view.itemsize == 8 && f[0] == 'd' && f[1] == 0 && view.ndim == ndim &&
             view.shape[0] == rows && (ndim == 1 || view.shape[1] == cols);
    if (ok) {
        const char *base = view.buf;
        for (Py_ssize_t i = 0; i < rows; ++i) {
            if (ndim == 1) {
                memcpy(out + i, base + i * view.strides[0], sizeof(double));
                continue;
            }
            for (Py_ssize_t j = 0; j < cols; ++j)
                memcpy(out + i * cols + j, base + i * view.strides[0] + j * view.strides[1],
                       sizeof(double));
        }
    }
    PyBuffer_Release(&view);
    return ok;
}

/* ik_query(query, position, rotation_or_None, seed) -> reason, or -4: an argument is not a
 * float64 array of its shape (the caller then takes its general path) */
static PyObject *ik_query(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
    void *p[1];
    if (exactly("ik_query", nargs, 4) || addresses("ik_query", args, 1, p)) return NULL;
    double position[3], rotation[9];
    int nq;
    double *seed = pk_ik_query_seed(p[0], &nq);
    if (!read_doubles(args[1], 3, 0, position) ||
        (args[2] != Py_None && !read_doubles(args[2], 3, 3, rotation)) ||
        !read_doubles(args[3], nq, 0, seed))
        return PyLong_FromLong(-4);
    int reason;
    Py_BEGIN_ALLOW_THREADS
    reason = pk_ik_query(p[0], position, args[2] == Py_None ? NULL : rotation);
    Py_END_ALLOW_THREADS
    return PyLong_FromLong(reason);
}

/* ik_resume(query) -> reason: a search that asked for more starts goes on */
static PyObject *ik_resume(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
    void *p[1];
    if (exactly("ik_resume", nargs, 1) || addresses("ik_resume", args, 1, p)) return NULL;
    int reason;
    Py_BEGIN_ALLOW_THREADS
    reason = pk_ik_query(p[0], NULL, NULL);
    Py_END_ALLOW_THREADS
    return PyLong_FromLong(reason);
}

static PyObject *capsule_problem_size(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
    if (exactly("capsule_problem_size", nargs, 0)) return NULL;
    return PyLong_FromUnsignedLong(pk_capsule_problem_size());
}

/* capsule_near(problem) -> pairs below the margin (their indices and bounds in the structure) */
static PyObject *capsule_near(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
    void *p[1];
    if (exactly("capsule_near", nargs, 1) || addresses("capsule_near", args, 1, p)) return NULL;
    return PyLong_FromLong(pk_capsule_near(p[0]));
}

static PyObject *collision_tick_size(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
    if (exactly("collision_tick_size", nargs, 0)) return NULL;
    return PyLong_FromUnsignedLong(pk_collision_tick_size());
}

/* whether a buffer holds float64 values */
static int is_double(const Py_buffer *view) {
    const char *f = view->format != NULL ? view->format : "B";
    if (*f == '<' || *f == '=' || *f == '@') ++f;
    return view->itemsize == 8 && f[0] == 'd' && f[1] == 0;
}

/* collision_quiet(tick, measured, space, position) -> pairs that may have a row (0: a quiet
 * tick), or -1: an array is not a C-contiguous float64 vector of its length */
static PyObject *collision_quiet(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
    void *p[1];
    if (exactly("collision_quiet", nargs, 4) || addresses("collision_quiet", args, 1, p))
        return NULL;
    int space = PyObject_IsTrue(args[2]);
    if (space < 0) return NULL;
    Py_buffer measured, position;
    const int flags = PyBUF_C_CONTIGUOUS | PyBUF_FORMAT;
    if (PyObject_GetBuffer(args[1], &measured, flags) != 0) {
        PyErr_Clear();
        return PyLong_FromLong(-1);
    }
    if (PyObject_GetBuffer(args[3], &position, flags) != 0) {
        PyErr_Clear();
        PyBuffer_Release(&measured);
        return PyLong_FromLong(-1);
    }
    long count = -1;
    if (measured.ndim == 1 && position.ndim == 1 && is_double(&measured) && is_double(&position))
        count = pk_collision_quiet(p[0], measured.buf, (long)measured.shape[0], space,
                                   position.buf, (long)position.shape[0]);
    PyBuffer_Release(&measured);
    PyBuffer_Release(&position);
    return PyLong_FromLong(count);
}

/* capsule_free(problem, q) -> 1 every pair keeps its threshold, 0 not, -1 undecided */
static PyObject *capsule_free(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
    void *p[2];
    if (exactly("capsule_free", nargs, 2) || addresses("capsule_free", args, 2, p)) return NULL;
    return PyLong_FromLong(pk_capsule_free(p[0], p[1]));
}

/*
 * The value checks of the states' fast path (pinkctl.core.state.spaces): whether an object is
 * a numpy.ndarray (exactly) of float64 values of a given shape, every value finite, and (for
 * quaternions) no row whose entries are all smaller than a bound in size. 0 for anything
 * else, no exception set: the Python path then converts the value or says what is wrong.
 */
static int state_array(PyObject *object, Py_ssize_t rows, Py_ssize_t columns, double zero) {
    if (strcmp(Py_TYPE(object)->tp_name, "numpy.ndarray") != 0) return 0;
    Py_buffer view;
    if (PyObject_GetBuffer(object, &view, PyBUF_STRIDES | PyBUF_FORMAT) != 0) {
        PyErr_Clear();
        return 0;
    }
    int ok = is_double(&view) && view.ndim == (columns > 0 ? 2 : 1) && view.shape[0] == rows &&
             (columns == 0 || view.shape[1] == columns);
    const Py_ssize_t width = columns > 0 ? columns : 1;
    for (Py_ssize_t i = 0; ok && i < rows; ++i) {
        const char *row = (const char *)view.buf + i * view.strides[0];
        int small = 1;
        for (Py_ssize_t j = 0; j < width; ++j) {
            const double x = *(const double *)(row + (columns > 0 ? j * view.strides[1] : 0));
            if (!isfinite(x)) ok = 0;
            if (!(fabs(x) < zero)) small = 0;
        }
        if (small) ok = 0;  /* (zero = 0: never small) */
    }
    PyBuffer_Release(&view);
    return ok;
}

/* state_rows(positions, velocities or None, n) -> whether both are float64 arrays (n,) of
 * finite values (JointSpace.state) */
static PyObject *state_rows(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
    if (exactly("state_rows", nargs, 3)) return NULL;
    const Py_ssize_t n = PyLong_AsSsize_t(args[2]);
    if (n < 0) return PyErr_Occurred() ? NULL : PyBool_FromLong(0);
    const int ok = state_array(args[0], n, 0, 0.0) &&
                   (args[1] == Py_None || state_array(args[1], n, 0, 0.0));
    return PyBool_FromLong(ok);
}

/* state_pose(positions, orientations or None, m, zero) -> whether they are float64 arrays
 * (m, 3) and (m, 4) of finite values, no quaternion with every entry below zero in size
 * (SiteSpace.state) */
static PyObject *state_pose(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
    if (exactly("state_pose", nargs, 4)) return NULL;
    const Py_ssize_t m = PyLong_AsSsize_t(args[2]);
    const double zero = PyFloat_AsDouble(args[3]);
    if ((m < 0 || zero == -1.0) && PyErr_Occurred()) return NULL;
    if (m < 0) return PyBool_FromLong(0);
    const int ok = state_array(args[0], m, 3, 0.0) &&
                   (args[1] == Py_None || state_array(args[1], m, 4, zero));
    return PyBool_FromLong(ok);
}

/* state_fill(out, data, missing) -> whether out (a float64 array (n,), C-contiguous, writable,
 * holding the fill values) now holds row 0 of data (float64 (3, n)) but where the list
 * missing (ascending indices in [0, n)) says, the fill values left there all finite
 * (JointSpace.positions). 0 for anything else, out then possibly part-written, no exception
 * set: the Python path names the fault. */
static PyObject *state_fill(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
    if (exactly("state_fill", nargs, 3)) return NULL;
    if (!PyList_CheckExact(args[2])) return PyBool_FromLong(0);
    Py_buffer out, data;
    if (PyObject_GetBuffer(args[0], &out, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT | PyBUF_WRITABLE)) {
        PyErr_Clear();
        return PyBool_FromLong(0);
    }
    if (PyObject_GetBuffer(args[1], &data, PyBUF_STRIDES | PyBUF_FORMAT)) {
        PyErr_Clear();
        PyBuffer_Release(&out);
        return PyBool_FromLong(0);
    }
    const Py_ssize_t n = out.ndim == 1 ? out.shape[0] : -1;
    int ok = n >= 0 && is_double(&out) && is_double(&data) && data.ndim == 2 &&
             data.shape[0] >= 1 && data.shape[1] == n;
    double *target = (double *)out.buf;
    const Py_ssize_t count = PyList_GET_SIZE(args[2]);
    Py_ssize_t next = -1, k = 0, j = 0;  /* the next missing index, and its place in the list */
    for (; ok && j < n; ++j) {
        if (next < j && k < count) {
            next = PyLong_AsSsize_t(PyList_GET_ITEM(args[2], k++));
            if (next < j) ok = 0;  /* not ascending, not an int, or negative */
        }
        if (j != next)
            target[j] = *(const double *)((const char *)data.buf + j * data.strides[1]);
        else if (!isfinite(target[j]))
            ok = 0;
    }
    if (ok && (k < count || next >= n)) ok = 0;  /* an index past the row */
    if (PyErr_Occurred()) PyErr_Clear();
    PyBuffer_Release(&out);
    PyBuffer_Release(&data);
    return PyBool_FromLong(ok);
}

#define FAST(name, doc) {#name, (PyCFunction)(void (*)(void))name, METH_FASTCALL, doc}

static PyMethodDef methods[] = {
    FAST(kernel_size, "kernel_size() -> sizeof(Kernel) in bytes (the layout check)."),
    FAST(reset, "reset(kernel, q, v, a): set the filter's state (addresses)."),
    FAST(update, "update(kernel, v): record the velocity command sent on this tick."),
    FAST(bounds, "bounds(kernel, lower, upper) -> recovering: write the velocity box."),
    FAST(commit, "commit(kernel, v): v clipped into the box, recorded as the command."),
    FAST(follow, "follow(kernel, wanted, at_rest, gain): the shaper's approach."),
    FAST(box_qp, "box_qp(n, H, c, lb, ub, x, state, work) -> factorisations, 0 to fall back."),
    FAST(ik_problem_size, "ik_problem_size() -> sizeof(IKProblem) in bytes."),
    FAST(ik_local, "ik_local(problem) -> success: one local IK solve (releases the GIL)."),
    FAST(ik_query_size, "ik_query_size() -> sizeof(IKQuery) in bytes."),
    FAST(ik_query, "ik_query(query, position, rotation, seed) -> reason: a whole IK query."),
    FAST(ik_resume, "ik_resume(query) -> reason: a search given more starts goes on."),
    FAST(capsule_problem_size, "capsule_problem_size() -> sizeof(CapsuleProblem) in bytes."),
    FAST(collision_tick_size, "collision_tick_size() -> sizeof(CollisionTick) in bytes."),
    FAST(collision_quiet, "collision_quiet(tick, measured, space, position) -> count."),
    FAST(capsule_near, "capsule_near(problem) -> count: the IK collision check's broad phase."),
    FAST(capsule_free, "capsule_free(problem, q) -> 1, 0 or -1: the IK collision check."),
    FAST(state_rows, "state_rows(positions, velocities, n) -> whether both are finite (n,)."),
    FAST(state_pose, "state_pose(positions, quaternions, m, zero) -> whether the pose is good."),
    FAST(state_fill, "state_fill(out, data, missing) -> whether a command's row 0 filled out."),
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module_definition = {
    PyModuleDef_HEAD_INIT,
    "pinkctl._native._kernel",
    "pinkctl's native kernel (motion shaper, box QP, IK loop); see pinkctl._native.",
    0,
    methods,
    NULL,
    NULL,
    NULL,
    NULL,
};

PyMODINIT_FUNC PyInit__kernel(void) { return PyModule_Create(&module_definition); }
