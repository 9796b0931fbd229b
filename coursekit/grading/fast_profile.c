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
   C function. resume() sets the C one again.

   The cyclic garbage collector is paused while the monitor's Python code runs (guard(): the
   monitor hands CPython and install() its functions guarded): a collection there
   would run a student object's __del__ or weakref callback on top of the monitor's frames,
   where nothing is profiled and sys._getframe(1).f_back reaches locals that hold the
   monitor's state. Allocation starts a collection in Python 3.11, so a pause taken before the
   first Python instruction runs leaves none in between. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <frameobject.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>

/* Kinds of module globals, as bits: monitor.py's WATCHED and CELLS. */
#define WATCHED 1
#define CELLS 2

static PyObject *modules;       /* id(globals) -> (globals, kind) */
static PyObject *c_seen;        /* id(C function) -> the function: no target, nor special */
static PyObject *returns;       /* id(frame) -> what waits for the frame's return */
static PyObject *infos;         /* id(code) -> (code, kind, patterns, special) */
static PyObject *covered;       /* id(patterns) -> (patterns, drive): reported in that drive */
static unsigned long long drive = 1;   /* which drive of the grader's runs (new_drive) */
/* Set in a process forked from the kernel (a worker a library starts): the grader's drives
   run in the kernel and number drives there only, so nothing is covered in a child, whose
   copy of ``covered`` would otherwise hold forever (red team 18). */
static volatile int forked_child;

static void in_forked_child(void) {
    forked_child = 1;
}
static PyObject *library, *grading, *open_grading, *reference;   /* kinds of code (monitor.py) */
static PyObject *fork_exec;     /* C functions the Python profile function always sees */
static PyObject *start_thread;
static PyObject *slow;          /* the Python profile function, guarded (see above) */
static Py_tracefunc set_function;  /* the profile function install() left set, and its object */
static PyObject *set_object;
static PyObject *call_event, *return_event, *c_call_event;
static PyCFunction signal_setter;  /* _signal.signal's C function, in any copy of the module */

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

/* ``table[id(obj)]``, borrowed, when it is a tuple of ``size`` items whose first is ``obj``
   itself (an id is reused once its object is freed); else NULL. */
static PyObject *entry_for(PyObject *table, void *obj, Py_ssize_t size) {
    if (table == NULL)
        return NULL;
    PyObject *key = PyLong_FromVoidPtr(obj);
    PyObject *known = NULL;
    if (key != NULL) {
        known = PyDict_GetItemWithError(table, key);
        Py_DECREF(key);
    }
    PyErr_Clear();
    if (known != NULL && PyTuple_CheckExact(known) && PyTuple_GET_SIZE(known) == size
            && PyTuple_GET_ITEM(known, 0) == (PyObject *)obj)
        return known;
    return NULL;
}

/* What is known of the module ``frame`` runs in: UNKNOWN, QUIET (none of the ``bit`` events
   there are watched) or KNOWN_WATCHED. */
static int module_state(PyFrameObject *frame, long bit) {
    PyObject *globals = frame_globals(frame);
    PyObject *known = entry_for(modules, globals, 2);
    int state = UNKNOWN;
    if (known != NULL && PyLong_CheckExact(PyTuple_GET_ITEM(known, 1))) {
        long kind = PyLong_AsLong(PyTuple_GET_ITEM(known, 1));
        if (kind != -1)
            state = kind & bit ? KNOWN_WATCHED : QUIET;
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
    return entry_for(infos, code, 4);
}

/* The walk kept for ``frame`` found no student code above it. */
static int walked_to_no_student(PyFrameObject *frame) {
    PyObject *known = entry_for(returns, frame, 3);
    return known != NULL && PyUnicode_CheckExact(PyTuple_GET_ITEM(known, 1))
        && PyUnicode_GET_LENGTH(PyTuple_GET_ITEM(known, 1)) == 0;
}

/* Whether every pattern of ``patterns`` was reported during the drive that runs now
   (monitor.py, NOTE [Cost]): the grader charges a check once per pattern, so a call of the
   same targets in the same drive would only be reported again. */
static int covered_now(PyObject *patterns) {
    if (forked_child)
        return 0;
    PyObject *known = entry_for(covered, patterns, 2);
    if (known == NULL || !PyLong_CheckExact(PyTuple_GET_ITEM(known, 1)))
        return 0;
    unsigned long long when = PyLong_AsUnsignedLongLong(PyTuple_GET_ITEM(known, 1));
    if (when == (unsigned long long)-1 && PyErr_Occurred()) {
        PyErr_Clear();
        return 0;
    }
    return when == drive;
}

/* monitor._nothing_to_do: a call in a watched module, known, that _on_call would only learn
   again; or a call of targets reported in this drive already (covered_now). */
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
            } else if (covered_now(patterns)) {
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

/* NOTE [Signals] in monitor.py. Every Python signal handler is wrapped in a Delivery, which
   calls it only where no code of the monitor's runs: not inside a profile function or an
   audit hook (this thread is "tracing"), and with none of the monitor's frames under the one
   interrupted. Otherwise the signal is deferred, and tripped again when the outermost call
   into the monitor's Python code has returned (call_monitor), so that the handler runs in
   the code that was interrupted. */
static int running;             /* calls into the monitor's Python code under way */
static char deferred[NSIG];
static int any_deferred;
static PyObject *own_codes;     /* frozenset: ids of the monitor's code objects */
static PyObject *signal_getter; /* _signal.getsignal */
static PyObject *kept;          /* what the monitor let go of, freed after it returns (keep) */
static PyObject *signal_set;    /* _signal.signal */

/* keep(obj): ``obj`` is freed when the outermost call into the monitor's Python code has
   returned, not now. The monitor lets go of what it learnt (a module's globals, a code
   object, a frame); if that was the last reference, a student object's __del__ or weakref
   callback would run on top of the monitor's frames, whose locals are its state. */
static PyObject *keep(PyObject *module, PyObject *obj) {
    if (kept == NULL && (kept = PyList_New(0)) == NULL)
        return NULL;
    if (PyList_Append(kept, obj) < 0)
        return NULL;
    Py_RETURN_NONE;
}

static void release_deferred(void) {
    if (running != 0)
        return;
    if (kept != NULL) {   /* no frame of the monitor's is under what __del__ runs now */
        PyObject *error_type, *error, *traceback;
        PyErr_Fetch(&error_type, &error, &traceback);
        Py_CLEAR(kept);
        PyErr_Restore(error_type, error, traceback);
    }
    if (!any_deferred)
        return;
    any_deferred = 0;
    for (int signum = 1; signum < NSIG; signum++) {
        if (deferred[signum]) {
            deferred[signum] = 0;
            PyErr_SetInterruptEx(signum);
        }
    }
}

/* Whether ``frame`` or a frame under it runs one of the monitor's code objects. */
static int under_monitor(PyObject *frame) {
    if (!PyFrame_Check(frame))
        return 0;
    PyFrameObject *below = (PyFrameObject *)frame;
    Py_INCREF(below);
    while (below != NULL) {
        PyCodeObject *code = PyFrame_GetCode(below);
        PyObject *key = PyLong_FromVoidPtr(code);
        Py_DECREF(code);
        int found = key == NULL ? 1 : PySet_Contains(own_codes, key);   /* in doubt: under */
        Py_XDECREF(key);
        if (found != 0) {
            PyErr_Clear();
            Py_DECREF(below);
            return 1;
        }
        PyFrameObject *next = PyFrame_GetBack(below);
        Py_DECREF(below);
        below = next;
    }
    return 0;
}

typedef struct {
    PyObject_HEAD
    PyObject *handler;
    vectorcallfunc vectorcall;
} Delivery;

static PyObject *deliver(PyObject *self, PyObject *const *args, size_t nargsf,
                         PyObject *kwnames) {
    Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
    if (nargs == 2 && kwnames == NULL && PyLong_Check(args[0])) {
        long signum = PyLong_AsLong(args[0]);
        if (signum >= 1 && signum < NSIG
                && (PyThreadState_Get()->tracing > 0 || under_monitor(args[1]))) {
            deferred[signum] = 1;
            any_deferred = 1;
            Py_RETURN_NONE;
        }
        PyErr_Clear();
    }
    return PyObject_Vectorcall(((Delivery *)self)->handler, args, nargsf, kwnames);
}

static void delivery_dealloc(PyObject *self) {
    Py_XDECREF(((Delivery *)self)->handler);
    Py_TYPE(self)->tp_free(self);
}

static PyTypeObject DeliveryType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "coursekit.grading._fast_profile.Delivery",
    .tp_basicsize = sizeof(Delivery),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_VECTORCALL,
    .tp_vectorcall_offset = offsetof(Delivery, vectorcall),
    .tp_call = PyVectorcall_Call,
    .tp_dealloc = delivery_dealloc,
};

/* Every Python handler that is not a Delivery yet becomes one: a C function too (a bound
   ``list.insert`` keeps the frame it is handed; ``signal.default_int_handler`` would raise
   KeyboardInterrupt inside the monitor's code). An error of setting one (a
   signal that cannot be caught) is passed over; any other (a pending handler that raised
   while _signal.signal checked for them) goes on. */
static int wrap_all(void) {
    for (int signum = 1; signum < NSIG; signum++) {
        PyObject *handler = PyObject_CallFunction(signal_getter, "i", signum);
        if (handler == NULL) {
            PyErr_Clear();
            continue;
        }
        if (!PyCallable_Check(handler) || Py_IS_TYPE(handler, &DeliveryType)) {
            Py_DECREF(handler);
            continue;
        }
        Delivery *delivery = PyObject_New(Delivery, &DeliveryType);
        if (delivery == NULL) {
            Py_DECREF(handler);
            return -1;
        }
        delivery->handler = handler;   /* the reference from getsignal */
        delivery->vectorcall = deliver;
        PyObject *old = PyObject_CallFunction(signal_set, "iO", signum, (PyObject *)delivery);
        Py_DECREF(delivery);
        if (old == NULL) {
            if (!PyErr_ExceptionMatches(PyExc_OSError) && !PyErr_ExceptionMatches(PyExc_ValueError))
                return -1;
            PyErr_Clear();
            continue;
        }
        Py_DECREF(old);
    }
    return 0;
}

/* getsignal(signum): _signal.getsignal, with the handler a Delivery wraps (an honest
   ``signal.getsignal(SIGALRM) is on_alarm`` stays true; asyncio asks the same of
   signal.default_int_handler). */
static PyObject *getsignal(PyObject *module, PyObject *signum) {
    if (signal_getter == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "signals are not watched");
        return NULL;
    }
    PyObject *handler = PyObject_CallOneArg(signal_getter, signum);
    if (handler != NULL && Py_IS_TYPE(handler, &DeliveryType)) {
        PyObject *inner = Py_NewRef(((Delivery *)handler)->handler);
        Py_DECREF(handler);
        return inner;
    }
    return handler;
}

static int signals_were_set(void) {
    running++;
    int failed = wrap_all();
    running--;
    release_deferred();
    return failed;
}

/* wrap_handlers(): what the Python profile function calls after a C function named signal
   returned. */
static PyObject *wrap_handlers(PyObject *module, PyObject *unused) {
    if (own_codes == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "signals are not watched");
        return NULL;
    }
    if (signals_were_set() < 0)
        return NULL;
    Py_RETURN_NONE;
}

/* Call ``function`` as the monitor's Python code: collector paused, deferred signals tripped
   again after the outermost call. */
static PyObject *call_monitor(PyObject *function, PyObject *const *args, size_t nargsf,
                              PyObject *kwnames) {
    int collecting = PyGC_Disable();
    running++;
    PyObject *result = PyObject_Vectorcall(function, args, nargsf, kwnames);
    running--;
    if (collecting)
        PyGC_Enable();
    release_deferred();
    return result;
}

/* Switched off as CPython does when a Python profile function raises (see pass_on). */
static int switch_off(void) {
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

/* The Python profile function decides. If it raises (an interrupt, a MemoryError), the
   profile is switched off as CPython does for a Python profile function, and the audit hook
   puts it back at the next audited event. The exception goes on as it came (an interrupt
   stays one): switching off raises an audit event, and a refusal is dropped here, not handed
   to sys.unraisablehook (student code may have replaced it, and it would run here, where
   nothing is profiled). */
static int pass_on(PyFrameObject *frame, PyObject *event, PyObject *arg) {
    PyObject *args[3] = {(PyObject *)frame, event, arg != NULL ? arg : Py_None};
    PyObject *result = call_monitor(slow, args, 3, NULL);
    if (result == NULL)
        return switch_off();
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
    case PyTrace_C_RETURN:   /* a signal handler was set: made one the monitor delivers */
        if (signal_setter != NULL && PyCFunction_Check(arg)
                && PyCFunction_GET_FUNCTION(arg) == signal_setter && signals_were_set() < 0)
            return switch_off();
        return 0;
    default:    /* c_exception: the Python profile function ignores it too */
        return 0;
    }
}

/* Whether this thread's profile function is the one install() left set. */
static int is_set_here(void) {
    PyThreadState *thread = PyThreadState_Get();
    return set_function != NULL && thread->c_profilefunc == set_function
        && thread->c_profileobj == set_object;
}

/* new_drive(): a drive of the grader's starts; what was reported before is covered no more.
   Harmless to call from anywhere: it only sends more calls to the Python profile function. */
static PyObject *new_drive(PyObject *module, PyObject *unused) {
    drive++;
    Py_RETURN_NONE;
}

/* current_drive(): the number of the drive that runs now, for monitor._on_call's entries in
   ``covered`` (an entry of an earlier drive covers nothing). */
static PyObject *current_drive(PyObject *module, PyObject *unused) {
    return PyLong_FromUnsignedLongLong(drive);
}

/* install(modules, c_seen, returns, infos, covered, kinds, fork_exec, start_thread, profile,
   compiled): once per
   process. compiled: set this C function, with ``profile`` as its object; otherwise the
   caller has set ``profile`` with sys.setprofile, and it is remembered as it is. */
static PyObject *install(PyObject *module, PyObject *args) {
    PyObject *m, *c, *r, *i, *v, *l, *f, *t, *p;
    int compiled;
    if (slow != NULL) {
        PyErr_SetString(PyExc_RuntimeError, "the monitor's profile function is set already");
        return NULL;
    }
    if (!PyArg_ParseTuple(args, "O!O!O!O!O!O!OOOp:install", &PyDict_Type, &m, &PyDict_Type,
                          &c, &PyDict_Type, &r, &PyDict_Type, &i, &PyDict_Type, &v,
                          &PyTuple_Type, &l, &f, &t, &p, &compiled))
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
        Py_INCREF(m); Py_INCREF(c); Py_INCREF(r); Py_INCREF(i); Py_INCREF(v); Py_INCREF(l);
        Py_INCREF(f); Py_INCREF(t); Py_INCREF(p);
        modules = m; c_seen = c; returns = r; infos = i; covered = v; fork_exec = f;
        start_thread = t;
        if (pthread_atfork(NULL, NULL, in_forked_child) != 0) {
            covered = NULL;   /* nothing is ever covered: slower, never blind */
        }
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

/* watch_signals(setter, getter, codes): once. Wrap every Python signal handler now, and
   again after each call of a C function whose C code is ``setter``'s (_signal.signal, from
   any copy of the module). ``codes``: the ids of the monitor's code objects. */
static PyObject *watch_signals(PyObject *module, PyObject *args) {
    PyObject *setter, *getter, *codes;
    if (own_codes != NULL) {
        PyErr_SetString(PyExc_RuntimeError, "signals are watched already");
        return NULL;
    }
    if (!PyArg_ParseTuple(args, "OOO!:watch_signals", &setter, &getter, &PyFrozenSet_Type,
                          &codes))
        return NULL;
    if (!PyCFunction_Check(setter) || !PyCallable_Check(getter)) {
        PyErr_SetString(PyExc_TypeError, "watch_signals(C function, callable, frozenset)");
        return NULL;
    }
    Py_INCREF(setter); Py_INCREF(getter); Py_INCREF(codes);
    signal_set = setter;
    signal_getter = getter;
    own_codes = codes;
    signal_setter = PyCFunction_GET_FUNCTION(setter);
    if (signals_were_set() < 0)
        return NULL;
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

/* guard(function): a callable that calls ``function`` as call_monitor() does. It exposes
   nothing: no attribute leads to ``function``. */
typedef struct {
    PyObject_HEAD
    PyObject *function;
    vectorcallfunc vectorcall;
} Guarded;

static PyObject *guarded_call(PyObject *self, PyObject *const *args, size_t nargsf,
                              PyObject *kwnames) {
    /* CPython calls a profile function and an audit hook with this thread "tracing"; code
       that calls one itself (sys.getprofile()(...)) could hand it frames and objects of its
       own making. */
    if (PyThreadState_Get()->tracing == 0) {
        PyErr_SetString(PyExc_RuntimeError, "coursekit: the grading monitor cannot be called");
        return NULL;
    }
    return call_monitor(((Guarded *)self)->function, args, nargsf, kwnames);
}

static void guarded_dealloc(PyObject *self) {
    Py_XDECREF(((Guarded *)self)->function);
    Py_TYPE(self)->tp_free(self);
}

static PyTypeObject GuardedType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "coursekit.grading._fast_profile.Guarded",
    .tp_basicsize = sizeof(Guarded),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_VECTORCALL,
    .tp_vectorcall_offset = offsetof(Guarded, vectorcall),
    .tp_call = PyVectorcall_Call,
    .tp_dealloc = guarded_dealloc,
};

static PyObject *guard(PyObject *module, PyObject *function) {
    if (!PyCallable_Check(function)) {
        PyErr_SetString(PyExc_TypeError, "guard() needs a callable");
        return NULL;
    }
    Guarded *guarded = PyObject_New(Guarded, &GuardedType);
    if (guarded == NULL)
        return NULL;
    Py_INCREF(function);
    guarded->function = function;
    guarded->vectorcall = guarded_call;
    return (PyObject *)guarded;
}

static PyMethodDef methods[] = {
    {"install", install, METH_VARARGS,
     "install(modules, c_seen, returns, infos, covered, kinds, fork_exec, start_thread, "
     "profile, compiled): once."},
    {"new_drive", new_drive, METH_NOARGS, "A drive of the grader's starts."},
    {"current_drive", current_drive, METH_NOARGS, "The number of the drive that runs now."},
    {"is_set", is_set, METH_NOARGS, "Whether this thread's profile function is the installed one."},
    {"resume", resume, METH_NOARGS, "Set the installed C profile function again."},
    {"watch_signals", watch_signals, METH_VARARGS,
     "watch_signals(setter, getter, codes): deliver Python signal handlers (NOTE [Signals])."},
    {"wrap_handlers", wrap_handlers, METH_NOARGS,
     "Wrap the Python signal handlers set since (NOTE [Signals])."},
    {"getsignal", getsignal, METH_O,
     "getsignal(signum): _signal.getsignal, with the handler a Delivery wraps."},
    {"keep", keep, METH_O, "keep(obj): free obj after the monitor's Python code returns."},
    {"guard", guard, METH_O, "guard(function): function, called with the garbage collector paused."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef definition = {
    PyModuleDef_HEAD_INIT, "_fast_profile",
    "The grading monitor's fast paths in C (see monitor.py, NOTE [Cost]).", -1, methods,
};

PyMODINIT_FUNC PyInit__fast_profile(void) {
    if (PyType_Ready(&GuardedType) < 0 || PyType_Ready(&DeliveryType) < 0)
        return NULL;
    if (call_event != NULL)   /* loaded again under another name: the same library's statics */
        return PyModule_Create(&definition);
    call_event = PyUnicode_InternFromString("call");
    return_event = PyUnicode_InternFromString("return");
    c_call_event = PyUnicode_InternFromString("c_call");
    if (call_event == NULL || return_event == NULL || c_call_event == NULL)
        return NULL;
    return PyModule_Create(&definition);
}
