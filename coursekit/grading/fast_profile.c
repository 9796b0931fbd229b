/* The grading monitor's fast paths in C (coursekit.grading._fast_profile).

   The monitor's profile function (monitor._profile) decides almost every event from one
   dictionary lookup and returns. Called from CPython's C, a Python function costs a call of
   the interpreter for each of those events; this C function makes the same lookups in the
   same dictionaries and calls the Python profile function only for the events it would not
   return from at once. It decides nothing else: whatever it passes on, the Python profile
   function decides again, in full (NOTE [Cost] in monitor.py).

   State is set once per process (install) and never handed out: student code that imports
   this module can neither read it nor replace it. install() also remembers which profile
   function it leaves set, C or Python, and is_set() says whether that one is still this
   thread's: sys.getprofile() cannot tell, since it answers the object a profile function was
   set with, and a copy of this module loaded from another file has its own state and its own
   C function. resume() sets the C one again. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <frameobject.h>

/* Kinds of module globals, as bits: monitor.py's WATCHED and CELLS. */
#define WATCHED 1
#define CELLS 2

static PyObject *modules;       /* id(globals) -> (globals, kind) */
static PyObject *c_seen;        /* id(C function) -> the function: no target, nor special */
static PyObject *returns;       /* id(frame) -> what waits for the frame's return */
static PyObject *infos;         /* id(code) -> (code, kind, patterns, special) */
static PyObject *library, *grading, *open_grading, *reference;   /* kinds of code (monitor.py) */
static PyObject *fork_exec;     /* C functions the Python profile function always sees */
static PyObject *start_thread;
static PyObject *slow;          /* the Python profile function */
static Py_tracefunc set_function;  /* the profile function install() left set, and its object */
static PyObject *set_object;
static PyObject *call_event, *return_event, *c_call_event;

static PyObject *frame_globals(PyFrameObject *frame) {
#if PY_VERSION_HEX >= 0x030B0000
    return PyFrame_GetGlobals(frame);   /* a new reference */
#else
    Py_INCREF(frame->f_globals);
    return frame->f_globals;
#endif
}

#define UNKNOWN 0
#define QUIET 1
#define KNOWN_WATCHED 2

/* What is known of the module ``frame`` runs in: UNKNOWN, QUIET (none of the ``bit`` events
   there are watched) or KNOWN_WATCHED. */
static int module_state(PyFrameObject *frame, long bit) {
    PyObject *globals = frame_globals(frame);
    PyObject *key = PyLong_FromVoidPtr(globals);
    int state = UNKNOWN;
    if (key != NULL) {
        PyObject *known = PyDict_GetItemWithError(modules, key);   /* borrowed */
        Py_DECREF(key);
        if (known != NULL && PyTuple_CheckExact(known) && PyTuple_GET_SIZE(known) == 2
                && PyTuple_GET_ITEM(known, 0) == globals
                && PyLong_CheckExact(PyTuple_GET_ITEM(known, 1))) {
            long kind = PyLong_AsLong(PyTuple_GET_ITEM(known, 1));
            if (kind != -1)
                state = kind & bit ? KNOWN_WATCHED : QUIET;
        }
    }
    PyErr_Clear();
    Py_DECREF(globals);
    return state;
}

static int quiet_module(PyFrameObject *frame, long bit) {
    return module_state(frame, bit) == QUIET;
}

/* What the monitor knows of ``code``: its (code, kind, patterns, special), borrowed, or NULL. */
static PyObject *code_info(PyCodeObject *code) {
    PyObject *key = PyLong_FromVoidPtr(code);
    PyObject *info = NULL;
    if (key != NULL) {
        info = PyDict_GetItemWithError(infos, key);
        Py_DECREF(key);
    }
    PyErr_Clear();
    if (info != NULL && PyTuple_CheckExact(info) && PyTuple_GET_SIZE(info) == 4
            && PyTuple_GET_ITEM(info, 0) == (PyObject *)code)
        return info;
    return NULL;
}

/* The walk kept for ``frame`` found no student code above it. */
static int walked_to_no_student(PyFrameObject *frame) {
    PyObject *key = PyLong_FromVoidPtr(frame);
    PyObject *known = NULL;
    if (key != NULL) {
        known = PyDict_GetItemWithError(returns, key);
        Py_DECREF(key);
    }
    PyErr_Clear();
    return known != NULL && PyTuple_CheckExact(known) && PyTuple_GET_SIZE(known) == 3
        && PyTuple_GET_ITEM(known, 0) == (PyObject *)frame
        && PyUnicode_CheckExact(PyTuple_GET_ITEM(known, 1))
        && PyUnicode_GET_LENGTH(PyTuple_GET_ITEM(known, 1)) == 0;
}

/* monitor._nothing_to_do: a call in a watched module, known, that _on_call would only learn
   again. */
static int nothing_to_do(PyFrameObject *frame) {
    PyCodeObject *code = PyFrame_GetCode(frame);   /* a new reference */
    PyObject *info = code_info(code);
    int nothing = 0;
    if (info != NULL && PyTuple_GET_ITEM(info, 3) == Py_None) {
        PyObject *kind = PyTuple_GET_ITEM(info, 1);
        PyObject *patterns = PyTuple_GET_ITEM(info, 2);
        if (kind == library) {
            if (PyTuple_CheckExact(patterns) && PyTuple_GET_SIZE(patterns) == 0) {
                nothing = 1;
            } else {
                PyFrameObject *back = PyFrame_GetBack(frame);   /* a new reference, or NULL */
                nothing = back != NULL && walked_to_no_student(back);
                Py_XDECREF(back);
            }
        } else if (kind == grading) {
            PyFrameObject *back = PyFrame_GetBack(frame);
            if (back == NULL) {
                nothing = 1;
            } else {
                PyCodeObject *caller = PyFrame_GetCode(back);
                PyObject *known = code_info(caller);
                if (known != NULL) {
                    PyObject *by = PyTuple_GET_ITEM(known, 1);
                    nothing = by == grading || by == open_grading || by == reference;
                }
                Py_DECREF(caller);
                Py_DECREF(back);
            }
        }
    }
    Py_DECREF(code);
    return nothing;
}

/* The Python profile function decides. If it raises (an interrupt, a MemoryError), the
   profile is switched off as CPython does for a Python profile function, and the audit hook
   puts it back at the next audited event. The exception goes on as it came (an interrupt
   stays one): switching off raises an audit event, and a refusal is dropped here, not handed
   to sys.unraisablehook (student code may have replaced it, and it would run here, where
   nothing is profiled). */
static int pass_on(PyFrameObject *frame, PyObject *event, PyObject *arg) {
    PyObject *result = PyObject_CallFunctionObjArgs(slow, (PyObject *)frame, event,
                                                    arg != NULL ? arg : Py_None, NULL);
    if (result == NULL) {
        PyObject *type, *value, *traceback;
        PyErr_Fetch(&type, &value, &traceback);
#if PY_VERSION_HEX < 0x030C0000
        if (_PyEval_SetProfile(PyThreadState_Get(), NULL, NULL) < 0)
            PyErr_Clear();
#else
        PyEval_SetProfile(NULL, NULL);
#endif
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
        switch (module_state(frame, WATCHED)) {
        case QUIET:
            return 0;
        case KNOWN_WATCHED:
            if (nothing_to_do(frame))
                return 0;
        }
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

/* Whether this thread's profile function is the one install() left set. */
static int is_set_here(void) {
    PyThreadState *thread = PyThreadState_Get();
    return set_function != NULL && thread->c_profilefunc == set_function
        && thread->c_profileobj == set_object;
}

/* install(modules, c_seen, returns, infos, kinds, fork_exec, start_thread, profile,
   compiled): once per
   process. compiled: set this C function, with ``profile`` as its object; otherwise the
   caller has set ``profile`` with sys.setprofile, and it is remembered as it is. */
static PyObject *install(PyObject *module, PyObject *args) {
    PyObject *m, *c, *r, *i, *l, *f, *t, *p;
    int compiled;
    if (slow != NULL) {
        PyErr_SetString(PyExc_RuntimeError, "the monitor's profile function is set already");
        return NULL;
    }
    if (!PyArg_ParseTuple(args, "O!O!O!O!O!OOOp:install", &PyDict_Type, &m, &PyDict_Type, &c,
                          &PyDict_Type, &r, &PyDict_Type, &i, &PyTuple_Type, &l, &f, &t, &p,
                          &compiled))
        return NULL;
    if (PyTuple_GET_SIZE(l) != 4) {
        PyErr_SetString(PyExc_TypeError, "kinds: (library, grading, open, reference)");
        return NULL;
    }
    if (!PyCallable_Check(p)) {
        PyErr_SetString(PyExc_TypeError, "the Python profile function is not callable");
        return NULL;
    }
    if (compiled) {
        /* Before the state: until it is set, the C function must never run. CPython reports
           a refusal by the audit hook and raises nothing: is the function set? */
        Py_INCREF(m); Py_INCREF(c); Py_INCREF(r); Py_INCREF(i); Py_INCREF(l); Py_INCREF(f);
        Py_INCREF(t); Py_INCREF(p);
        modules = m; c_seen = c; returns = r; infos = i; fork_exec = f; start_thread = t;
        slow = p;
        library = PyTuple_GET_ITEM(l, 0); grading = PyTuple_GET_ITEM(l, 1);
        open_grading = PyTuple_GET_ITEM(l, 2); reference = PyTuple_GET_ITEM(l, 3);   /* l kept */
        PyEval_SetProfile(fast_profile, p);
    }
    PyThreadState *thread = PyThreadState_Get();
    if (compiled ? thread->c_profilefunc != fast_profile : thread->c_profileobj != p) {
        PyErr_SetString(PyExc_RuntimeError, "the monitor's profile function could not be set");
        return NULL;   /* the state stays: this module is spent either way */
    }
    if (!compiled) {
        Py_INCREF(p);
        slow = p;
    }
    set_function = thread->c_profilefunc;
    set_object = p;
    Py_RETURN_NONE;
}

static PyObject *is_set(PyObject *module, PyObject *unused) {
    return PyBool_FromLong(is_set_here());
}

static PyObject *resume(PyObject *module, PyObject *unused) {
    if (set_function != fast_profile) {
        PyErr_SetString(PyExc_RuntimeError, "the monitor's C profile function was never set");
        return NULL;
    }
    PyEval_SetProfile(fast_profile, set_object);
    if (!is_set_here()) {
        PyErr_SetString(PyExc_RuntimeError, "the monitor's profile function could not be set");
        return NULL;
    }
    Py_RETURN_NONE;
}

static PyMethodDef methods[] = {
    {"install", install, METH_VARARGS,
     "install(modules, c_seen, returns, infos, kinds, fork_exec, start_thread, profile, "
     "compiled): once."},
    {"is_set", is_set, METH_NOARGS, "Whether this thread's profile function is the installed one."},
    {"resume", resume, METH_NOARGS, "Set the installed C profile function again."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef definition = {
    PyModuleDef_HEAD_INIT, "_fast_profile",
    "The grading monitor's fast paths in C (see monitor.py, NOTE [Cost]).", -1, methods,
};

PyMODINIT_FUNC PyInit__fast_profile(void) {
    if (call_event != NULL)   /* loaded again under another name: the same library's statics */
        return PyModule_Create(&definition);
    call_event = PyUnicode_InternFromString("call");
    return_event = PyUnicode_InternFromString("return");
    c_call_event = PyUnicode_InternFromString("c_call");
    if (call_event == NULL || return_event == NULL || c_call_event == NULL)
        return NULL;
    return PyModule_Create(&definition);
}
