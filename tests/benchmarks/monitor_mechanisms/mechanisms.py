"""The monitor's mechanisms on Python 3.11 and 3.12, same workload: student code (a code object
of its own) driving a pure-Python library. Modes: none; a no-op profile function; a profile
function with the monitor's fast paths (a dict lookup by module), in Python and in C (the
grading monitor's coursekit/grading/fast_profile.c); sys.monitoring (3.12 only)
with events on the student's code objects only (CALL: what it calls) and PY_START on one
target code object (the library's backward). See ../bench_monitor_mechanisms.py."""
import sys, time, os
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "site-packages"))
import minigrad

STUDENT = '''
import minigrad
def train(steps=60, n=40):
    ws = [minigrad.Value(0.01 * i) for i in range(n)]
    for _ in range(steps):
        loss = minigrad.Value(0.0)
        for i, w in enumerate(ws):
            loss = loss + (w * minigrad.Value(float(i % 7))).tanh() * (w * 0.5)
        for w in ws:
            w.grad = 0.0
        loss.backward()
        for w in ws:
            w.data -= 0.01 * w.grad
    return loss.data
'''
mode = sys.argv[1]
ns = {}
code = compile(STUDENT, "/home/student/cell.py", "exec")
exec(code, ns)
reported = []
if mode == "noop":
    sys.setprofile(lambda f, e, a: None)
elif mode == "fastpath":
    modules = {}
    target = minigrad.Value.backward.__code__
    def profile(frame, event, arg, modules=modules, _id=id, target=target, lib=minigrad.__dict__):
        if event == "c_return":
            return
        if event == "c_call":
            g = frame.f_globals
            k = modules.get(_id(g))
            if k is not None and not k & 2:
                return
            modules[_id(g)] = 0 if g is lib else 2
            return
        if event == "call":
            g = frame.f_globals
            k = modules.get(_id(g))
            if k is not None and not k & 1:
                return
            if frame.f_code is target:
                reported.append(1)
            modules[_id(g)] = 1 if g is lib else 2
    sys.setprofile(profile)
elif mode == "compiled":
    # The same fast path in C (coursekit/grading/fast_profile.c): CPython calls it for every
    # event; it calls this Python function only for what it does not return from at once.
    import _thread
    from coursekit.grading import _fast_profile
    modules, c_seen, returns = {}, {}, {}
    target = minigrad.Value.backward.__code__
    def learn(frame, event, arg, lib=minigrad.__dict__):
        g = frame.f_globals
        if event == "call":
            if frame.f_code is target:
                reported.append(1)
            modules[id(g)] = (g, 1 if g is lib else 2)
        elif event == "c_call" and id(g) not in modules:
            modules[id(g)] = (g, 0 if g is lib else 2)
    _fast_profile.install(modules, c_seen, returns, {}, (1, 2, 3, 4), None, _thread.start_new_thread, learn,
                          True)
elif mode == "monitoring":
    mon = sys.monitoring
    TOOL = mon.PROFILER_ID
    mon.use_tool_id(TOOL, "coursekit")
    target = minigrad.Value.backward.__code__
    def on_start(code, offset):
        reported.append(1)          # a target started: walk the stack for student code here
    def on_call(code, offset, callable, arg0):
        return None                 # what student code calls: match the callable here
    mon.register_callback(TOOL, mon.events.PY_START, on_start)
    mon.register_callback(TOOL, mon.events.CALL, on_call)
    for c in (code, ns["train"].__code__):
        mon.set_local_events(TOOL, c, mon.events.CALL)
    mon.set_local_events(TOOL, target, mon.events.PY_START)
fn = ns["train"]
fn(2)
best = 9
for _ in range(5):
    t = time.thread_time(); fn(); best = min(best, time.thread_time() - t)
print(sys.version.split()[0], mode, round(best, 4), "targets seen" if reported else "")
