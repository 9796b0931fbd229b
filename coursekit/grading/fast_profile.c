/* The grading monitor's fast paths in C (coursekit.grading._fast_profile).

   The monitor's profile function (monitor._profile) decides almost every event from one
   dictionary lookup and returns. Called from CPython's C, a Python function costs a call of
   the interpreter for each of those events; this C function makes the same lookups in the
   same dictionaries and calls the Python profile function only for the events it would not
   return from at once. It decides nothing else: whatever it passes on, the Python profile
   function decides again, in full (NOTE [Cost] in monitor.py).

   State is set once per process (install) and never handed out: student code that imports
   this module can neither read it nor replace it. resume() puts the same profile back after
   CPython switched it off (an exception left the profile function). Both set a profile
   function, which the audit hook judges ("sys.setprofile"): from student code, refused. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <frameobject.h>

/* Kinds of module globals, as bits: monitor.py's WATCHED and CELLS. */
#define WATCHED 1
#define CELLS 2

static PyObject *modules;       /* id(globals) -> (globals, kind) */
static PyObject *c_seen;        /* id(C function) -> the function: no target, nor special */
static PyObject *returns;       /* id(frame) -> what waits for the frame's return */
static PyObject *fork_exec;     /* C functions the Python profile function always sees */
static PyObject *start_thread;
static PyObject *slow;          /* the Python profile function */
static PyObject *shown;         /* what sys.getprofile() answers: the Python profile function */
static PyObject *call_event, *return_event, *c_call_event;

static PyObject *frame_globals(PyFrameObject *frame) {
#if PY_VERSION_HEX >= 0x030B0000
    return PyFrame_GetGlobals(frame);   /* a new reference */
#else
    Py_INCREF(frame->f_globals);
    return frame->f_globals;
#endif
}

/* The module ``frame`` runs in is known, and none of the ``bit`` events there are watched. */
static int quiet_module(PyFrameObject *frame, long bit) {
    PyObject *globals = frame_globals(frame);
    PyObject *key = PyLong_FromVoidPtr(globals);
    int quiet = 0;
    if (key != NULL) {
        PyObject *known = PyDict_GetItemWithError(modules, key);   /* borrowed */
        Py_DECREF(key);
        if (known != NULL && PyTuple_CheckExact(known) && PyTuple_GET_SIZE(known) == 2
                && PyTuple_GET_ITEM(known, 0) == globals
                && PyLong_CheckExact(PyTuple_GET_ITEM(known, 1))) {
            long kind = PyLong_AsLong(PyTuple_GET_ITEM(known, 1));
            quiet = kind != -1 && !(kind & bit);
        }
    }
    PyErr_Clear();
    Py_DECREF(globals);
    return quiet;
}

/* The Python profile function decides. If it raises (an interrupt, a MemoryError), the
   profile is switched off as CPython does for a Python profile function, and the audit hook
   puts it back at the next audited event. The exception goes on as it came: switching off
   raises an audit event, whose refusal CPython only reports. */
static int pass_on(PyFrameObject *frame, PyObject *event, PyObject *arg) {
    PyObject *result = PyObject_CallFunctionObjArgs(slow, (PyObject *)frame, event,
                                                    arg != NULL ? arg : Py_None, NULL);
    if (result == NULL) {
        PyObject *type, *value, *traceback;
        PyErr_Fetch(&type, &value, &traceback);
        PyEval_SetProfile(NULL, NULL);
        PyErr_Restore(type, value, traceback);
        return -1;
    }
    Py_DECREF(result);
    return 0;
}

/* monitor._profile's first lines, for each event it receives. */
static int fast_profile(PyObject *obj, PyFrameObject *frame, int what, PyObject *arg) {
    switch (what) {
    case PyTrace_C_CALL: {
        PyObject *key = PyLong_FromVoidPtr(arg);
        if (key != NULL) {
            PyObject *seen = PyDict_GetItemWithError(c_seen, key);
            Py_DECREF(key);
            if (seen == arg)
                return 0;
        }
        PyErr_Clear();
        if (arg == fork_exec || arg == start_thread || !quiet_module(frame, CELLS))
            return pass_on(frame, c_call_event, arg);
        return 0;
    }
    case PyTrace_CALL:
        if (quiet_module(frame, WATCHED))
            return 0;
        return pass_on(frame, call_event, arg);
    case PyTrace_RETURN: {
        PyObject *key = PyLong_FromVoidPtr(frame);
        int waits = 0;
        if (key != NULL) {
            waits = PyDict_Contains(returns, key);
            Py_DECREF(key);
        }
        PyErr_Clear();
        return waits == 1 ? pass_on(frame, return_event, arg) : 0;
    }
    default:    /* c_return, c_exception: the Python profile function ignores them too */
        return 0;
    }
}

static PyObject *install(PyObject *module, PyObject *args) {
    PyObject *m, *c, *r, *f, *t, *p, *s;
    if (slow != NULL) {
        PyErr_SetString(PyExc_RuntimeError, "the monitor's profile function is set already");
        return NULL;
    }
    if (!PyArg_ParseTuple(args, "O!O!O!OOOO:install", &PyDict_Type, &m, &PyDict_Type, &c,
                          &PyDict_Type, &r, &f, &t, &p, &s))
        return NULL;
    if (!PyCallable_Check(p)) {
        PyErr_SetString(PyExc_TypeError, "the Python profile function is not callable");
        return NULL;
    }
    Py_INCREF(m); Py_INCREF(c); Py_INCREF(r); Py_INCREF(f); Py_INCREF(t); Py_INCREF(p);
    Py_INCREF(s);
    modules = m; c_seen = c; returns = r; fork_exec = f; start_thread = t; slow = p; shown = s;
    PyEval_SetProfile(fast_profile, shown);
    if (PyErr_Occurred())
        return NULL;
    Py_RETURN_NONE;
}

static PyObject *resume(PyObject *module, PyObject *unused) {
    if (slow == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "the monitor's profile function was never set");
        return NULL;
    }
    PyEval_SetProfile(fast_profile, shown);
    if (PyErr_Occurred())
        return NULL;
    Py_RETURN_NONE;
}

static PyMethodDef methods[] = {
    {"install", install, METH_VARARGS,
     "install(modules, c_seen, returns, fork_exec, start_thread, profile, shown): once."},
    {"resume", resume, METH_NOARGS, "Set the installed profile function again."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef definition = {
    PyModuleDef_HEAD_INIT, "_fast_profile",
    "The grading monitor's fast paths in C (see monitor.py, NOTE [Cost]).", -1, methods,
};

PyMODINIT_FUNC PyInit__fast_profile(void) {
    call_event = PyUnicode_InternFromString("call");
    return_event = PyUnicode_InternFromString("return");
    c_call_event = PyUnicode_InternFromString("c_call");
    if (call_event == NULL || return_event == NULL || c_call_event == NULL)
        return NULL;
    return PyModule_Create(&definition);
}
