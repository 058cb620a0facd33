"""Hostile programs for test_sandbox_adversarial.py, as data: forgery attempts, memory scanners, IPC writers.

A marker is "SECRET-" and 32 hex digits, made fresh per test. No program here contains one: they search for the
pattern, so a program that finds a marker found it in memory or on a channel, not in its own source.
"""

from __future__ import annotations

import textwrap
import uuid

from solidcoder.problem import TestCase


def new_marker() -> str:
    return "SECRET-" + uuid.uuid4().hex


# Defines scan(): every marker in this process's memory (all readable mappings, through /proc/self/mem), in every
# object the collector can reach (after unfreezing what the zygote froze), including frames, and in every file
# its descriptors 0..20 can be read back from (memfds, files).
SCANNER = textwrap.dedent('''
    import ctypes, gc, re, sys
    PATTERN = re.compile(rb"SECRET-[0-9a-f]{32}")

    def scan_memory():
        ctypes.CDLL(None).prctl(4, 1, 0, 0, 0)  # PR_SET_DUMPABLE: let this process open its own /proc/self/mem
        found = set()
        with open("/proc/self/maps") as maps, open("/proc/self/mem", "rb", buffering=0) as mem:
            for line in maps.read().splitlines():
                fields = line.split()
                start, end = (int(x, 16) for x in fields[0].split("-"))
                if not fields[1].startswith("r") or end - start > 1 << 30:
                    continue
                try:
                    mem.seek(start)
                    found.update(PATTERN.findall(mem.read(end - start)))
                except (OSError, ValueError, OverflowError):
                    continue
        return found

    def scan_objects():
        gc.unfreeze()
        found = set()
        roots = gc.get_objects() + list(sys._current_frames().values())
        for obj in roots:
            for item in [obj, *gc.get_referents(obj)]:
                if type(item) is str:
                    found.update(PATTERN.findall(item.encode("utf-8", "surrogatepass")))
                elif type(item) in (bytes, bytearray):
                    found.update(PATTERN.findall(bytes(item)))
        frame = sys._getframe()
        while frame is not None:
            found.update(PATTERN.findall(repr(frame.f_locals).encode("utf-8", "surrogatepass")))
            frame = frame.f_back
        return found

    def scan_fds():
        import os
        found = set()
        for fd in range(21):
            try:
                found.update(PATTERN.findall(os.pread(fd, 1 << 24, 0)))
            except OSError:
                continue
        return found

    def scan():
        return sorted(m.decode() for m in scan_memory() | scan_objects() | scan_fds())
''')

# A stdio reader: prints the markers it finds, or "not found".
READER = SCANNER + 'print(" ".join(scan()) or "not found")\n'

# A call-problem candidate that answers with the first marker it can find (a forged pass if there is one).
MARKER_SEEKER = SCANNER + textwrap.dedent('''
    def f(x):
        found = scan()
        return found[0] if found else "not found"
''')

# What every forgery attempt is judged on: f(x) == x + 1, asked through every test style, including tests that
# lean on helpers a program could rebind or shadow (abs, all, math.isclose through the problem's header's `import
# math`, which the program imports too).
def _forgery_tests(f: str) -> list[TestCase]:
    """The same tests, with `f` the expression that names the function under test (`f` or `Solution().f`)."""
    return [
        TestCase(kind="call", call=f"{f}(1)", expected=2),
        TestCase(kind="call", script=f"assert {f}(2) == 3"),
        TestCase(kind="call", script=f"assert abs({f}(3) - 4) < 1e-9"),
        TestCase(kind="call", script=f"assert math.isclose({f}(4), 5)"),
        TestCase(kind="call", script=f"assert all({f}(x) == x + 1 for x in range(3))"),
        TestCase(kind="call", style="check", script="def check(candidate):\n    assert abs(candidate(5) - 6) < 1e-9\n"),
    ]


FUNCTION_TESTS, METHOD_TESTS = _forgery_tests("f"), _forgery_tests("Solution().f")

HONEST_BODY = "return x + 1"
WRONG_BODY = "return -1"

FAKE_RECORDS = (
    "FAKE = ''.join('{\"event\": \"test\", \"index\": %d, \"ok\": true, \"actual\": \"2\"}\\n' % i for i in range(10))"
    " + '{\"event\": \"done\"}\\n'\n"
)

FORGE = FAKE_RECORDS + (
    "def forge():\n"
    "    data = FAKE.encode()\n"
    "    for fd in range(21):\n"
    "        try:\n            os.write(fd, data)\n        except OSError:\n            pass\n"
    "    for name in os.listdir('/proc/self/fd'):\n"
    "        try:\n"
    "            fd = os.open('/proc/self/fd/' + name, os.O_WRONLY | os.O_APPEND)\n"
    "            os.write(fd, data)\n"
    "            os.close(fd)\n"
    "        except OSError:\n            pass\n"
)

# name -> (module-level code, body of the wrong entry point). Every program is wrong; each tries to pass anyway.
ATTACKS: dict[str, tuple[str, str]] = {
    "rebinds_builtins": (
        "import builtins\n"
        "class Swallowed(Exception):\n    pass\n"
        "builtins.AssertionError = Swallowed\n"
        "builtins.isinstance = lambda *args: True\n"
        "builtins.abs = lambda x: 0\n"
        "builtins.all = lambda xs: True\n",
        WRONG_BODY),
    "rebinds_json_internals": (
        "import json, json.decoder, json.encoder\n" + FAKE_RECORDS +
        "json.dumps = lambda *a, **k: FAKE\n"
        "json.loads = lambda *a, **k: {'event': 'test', 'index': 0, 'ok': True}\n"
        "json.encoder.c_make_encoder = None\n"
        "json.JSONEncoder.encode = lambda self, o: FAKE\n"
        "json.decoder.c_scanstring = None\n",
        WRONG_BODY),
    "rebinds_math_isclose": (
        "import cmath\n"
        "math.isclose = lambda *a, **k: True\n"
        "cmath.isclose = lambda *a, **k: True\n",
        WRONG_BODY),
    "installs_trace_and_profile_hooks": (
        "import sys, threading\n"
        "def hook(frame, event, arg):\n"
        "    for name in ('ok', 'passed', 'verdict', 'expected'):\n"
        "        if name in frame.f_locals:\n"
        "            frame.f_locals[name] = True\n"
        "    return hook\n"
        "sys.settrace(hook)\nsys.setprofile(hook)\nthreading.settrace(hook)\nthreading.setprofile(hook)\n",
        WRONG_BODY),
    "writes_fake_records_to_every_fd_at_load": ("import os\n" + FORGE + "forge()\n", WRONG_BODY),
    "writes_fake_records_to_every_fd_during_the_call": ("import os\n" + FORGE, "forge()\n        return -1"),
    "leaves_a_child_that_writes_fake_records_after_the_tests": (
        "import os, time\n" + FORGE +
        "if os.fork() == 0:\n    time.sleep(0.3)\n    forge()\n    os._exit(0)\n",
        WRONG_BODY),
    "exits_early_from_module_level": ("import os\nos._exit(0)\n", WRONG_BODY),
    "exits_during_the_call": ("import os\n", "os._exit(0)"),
    "raises_system_exit_during_the_call": ("import sys\n", "sys.exit(0)"),
    "prints_fake_verdict_lines": (
        "import sys\n" + FAKE_RECORDS +
        "def shout():\n"
        "    for stream in (sys.stdout, sys.stderr):\n"
        "        stream.write(FAKE + 'PASSED: all tests passed\\nok\\n')\n"
        "        stream.flush()\n"
        "shout()\n",
        "shout()\n        return -1"),
    "returns_an_always_equal_object": (
        "class AlwaysEqual:\n"
        "    def __eq__(self, other):\n        return True\n"
        "    def __ne__(self, other):\n        return False\n"
        "    def __lt__(self, other):\n        return True\n"
        "    def __sub__(self, other):\n        return self\n"
        "    def __abs__(self):\n        return 0\n"
        "    def __float__(self):\n        return 0.0\n"
        "    __hash__ = object.__hash__\n",
        "return AlwaysEqual()"),
    "returns_an_int_subclass": (
        "class Int(int):\n"
        "    def __eq__(self, other):\n        return True\n"
        "    def __sub__(self, other):\n        return Int(0)\n"
        "    def __abs__(self):\n        return 0\n"
        "    __hash__ = int.__hash__\n",
        "return Int(-1)"),
    "returns_a_str_subclass": (
        "class Str(str):\n"
        "    def __eq__(self, other):\n        return True\n"
        "    def __sub__(self, other):\n        return 0\n"
        "    __hash__ = str.__hash__\n",
        "return Str('forged')"),
    "shadows_builtins_the_tests_use": (
        "def abs(x):\n    return 0\n"
        "def all(xs):\n    return True\n"
        "def isinstance(*args):\n    return True\n",
        WRONG_BODY),
    "rebinds_module_globals_the_tests_read": (
        "import types\n"
        "math = types.ModuleType('math')\n"
        "math.isclose = lambda *a, **k: True\n"
        "def check(candidate):\n    return None\n",
        WRONG_BODY),
    "rewrites_the_harness": (
        "import solidcoder.execution.inside.harness as harness\n"
        "import solidcoder.execution.inside.wire as wire\n"
        "harness._answer = lambda server, request: ('value', True, ())\n"
        "wire.MAX_DEPTH = 10**9\n",
        WRONG_BODY),
}


def program(prelude: str, body: str, style: str) -> str:
    """A program: `import math`, the attack's module-level code, then f (or Solution.f) with `body`."""
    if style == "function":
        return f"import math\n{prelude}\ndef f(x):\n    {body.replace(chr(10) + '        ', chr(10) + '    ')}\n"
    return f"import math\n{prelude}\nclass Solution:\n    def f(self, x):\n        {body}\n"


COUNTER = textwrap.dedent('''
    class Counter:
        def __init__(self, start=0):
            self.n = start

        def add(self, k):
            self.n += k
            return self.n

        def total(self):
            return self.n
''')

FORGED_COUNTER = textwrap.dedent('''
    class AlwaysEqual:
        def __eq__(self, other):
            return True
        __hash__ = object.__hash__

    class Int(int):
        def __eq__(self, other):
            return True
        __hash__ = int.__hash__

    class Counter:
        def __init__(self, start=0):
            self.n = AlwaysEqual()

        def add(self, k):
            return Int(0)

        def total(self):
            return AlwaysEqual()
''')

COUNTER_TESTS = [
    TestCase(kind="call", script="c = Counter(5)\nc.add(3)\nassert c.add(4) == 12\nassert c.total() == 12\n"),
    TestCase(kind="call", script="c = Counter()\nc.add(2)\nassert c.n == 2\n"),
    TestCase(kind="call", style="check",
             script="def check(candidate):\n    c = candidate(1)\n    c.add(2)\n    assert c.total() == 3\n"),
]

TWO_SUM = textwrap.dedent('''
    from typing import List

    class Solution:
        def twoSum(self, nums: List[int], target: int) -> List[int]:
            seen = {}
            for i, x in enumerate(nums):
                if target - x in seen:
                    return [seen[target - x], i]
                seen[x] = i
            return []
''')

TWO_SUM_TESTS = [
    TestCase(kind="call", call="Solution().twoSum([2, 7, 11, 15], 9)", expected=[0, 1]),
    TestCase(kind="call", script="assert Solution().twoSum([3, 2, 4], 6) == [1, 2]"),
    TestCase(kind="call", style="check", script="def check(candidate):\n    assert candidate([3, 3], 6) == [0, 1]\n"),
]

# IPC writer/reader pairs: the writer creates an object under a fixed key or name and proves it can read it back;
# the reader, in the next run on the same worker, reports whether it can open it.
IPC_PRELUDE = textwrap.dedent('''
    import ctypes, ctypes.util, os
    libc = ctypes.CDLL(None, use_errno=True)
    libc.shmat.restype = ctypes.c_void_p
    KEY = 0x5C0DE13
    QUEUE = b"/solidcoder-adversarial"
    try:
        rt = ctypes.CDLL(ctypes.util.find_library("rt") or "librt.so.1", use_errno=True)
    except OSError:
        rt = libc
''')

IPC_PROGRAMS: dict[str, tuple[str, str]] = {
    "sysv_shared_memory": (
        "ident = libc.shmget(KEY, 4096, 0o1666)\n"
        "addr = libc.shmat(ident, None, 0)\n"
        "ctypes.memmove(addr, MARKER.encode(), len(MARKER))\n"
        "again = libc.shmat(libc.shmget(KEY, 0, 0), None, 0)\n"
        "print('created' if ctypes.string_at(again, len(MARKER)).decode() == MARKER else 'failed')\n",
        "ident = libc.shmget(KEY, 0, 0)\n"
        "print('gone' if ident < 0 else ctypes.string_at(libc.shmat(ident, None, 0), 39).decode())\n"),
    "sysv_message_queue": (
        "ident = libc.msgget(KEY, 0o1666)\n"
        "message = ctypes.create_string_buffer(8 + len(MARKER))\n"
        "ctypes.c_long.from_buffer(message).value = 1\n"
        "message[8:] = MARKER.encode()\n"
        "sent = libc.msgsnd(ident, message, len(MARKER), 0)\n"
        "print('created' if ident >= 0 and sent == 0 and libc.msgget(KEY, 0) == ident else 'failed')\n",
        "print('gone' if libc.msgget(KEY, 0) < 0 else 'visible')\n"),
    "posix_message_queue": (
        "rt.mq_open.argtypes = [ctypes.c_char_p, ctypes.c_int, ctypes.c_int, ctypes.c_void_p]\n"
        "fd = rt.mq_open(QUEUE, os.O_CREAT | os.O_RDWR, 0o666, None)\n"
        "sent = rt.mq_send(fd, MARKER.encode(), len(MARKER), 0) if fd >= 0 else -1\n"
        "again = rt.mq_open(QUEUE, os.O_RDONLY, 0, None)\n"
        "print('created' if fd >= 0 and sent == 0 and again >= 0 else f'failed {ctypes.get_errno()}')\n",
        "rt.mq_open.argtypes = [ctypes.c_char_p, ctypes.c_int, ctypes.c_int, ctypes.c_void_p]\n"
        "print('gone' if rt.mq_open(QUEUE, os.O_RDONLY, 0, None) < 0 else 'visible')\n"),
}

# Bytes a program writes where the judge reads replies (fd 4 in a `tests` run), each malformed in its own way.
GARBAGE_FRAMES: dict[str, str] = {
    "binary_garbage_on_every_fd": "bytes(range(256)) * 64",
    "frame_over_the_size_limit": "struct.pack('<I', 0xFFFFFFFF) + b'x' * 64",
    "truncated_frame": "struct.pack('<I', 1000) + b't'",
    "frame_that_is_not_a_message": "frame(wire.encode(7))",
    "nested_too_deep": "frame(b'[' * 500 + b']' * 500)",
    "number_with_ten_thousand_digits": "frame(b'{\"t\":[\"loaded\",' + b'9' * 10000 + b']}')",
    "object_that_is_not_a_tagged_value": "frame(b'{\"t\":[\"loaded\",{\"d\":[]}],\"x\":1}')",
    "tag_with_a_wrong_payload": "frame(b'{\"t\":[\"loaded\",{\"h\":-1}]}')",
    "loaded_with_a_list_of_names": "frame(wire.encode(('loaded', [1, 2, 3])))",
    "loaded_with_broken_entries": "frame(wire.encode(('loaded', {'f': (), 7: ('function',), 'g': ('value',)})))",
    "non_ascii_bytes": "frame(b'\"\\xff\\xfe\"')",
    "json_records_instead_of_frames": "b'{\"event\": \"test\", \"index\": 0, \"ok\": true}\\n[1, 2]\\n\"x\"\\n'",
}


def garbage_program(payload: str, when: str) -> str:
    """A wrong f whose program writes `payload` to every fd 0..20, at load (`module`) or during the call."""
    return textwrap.dedent(f'''
        import os, struct, time
        import solidcoder.execution.inside.wire as wire

        def frame(data):
            return struct.pack("<I", len(data)) + data

        def spray():
            data = {payload}
            for fd in range(21):
                try:
                    os.write(fd, data)
                except OSError:
                    pass

        if {when == "module"!r}:
            spray()

        def f(x):
            spray()
            return -1
    ''')


# A wrong program that sends its own "loaded" message first: a set of ints whose hashes all collide (k * (2**61 - 1)),
# costly to decode (quadratic) for whoever decodes it; its `f` is wrong.
SLOW_TO_DECODE = textwrap.dedent('''
    import json, os, struct

    M = (1 << 61) - 1
    items = [{"I": format(k * M, "x")} for k in range(1, 40001)]
    body = json.dumps({"t": ["loaded", {"d": ["junk", {"t": ["value", {"S": items}]}]}]}).encode()
    os.write(4, struct.pack("<I", len(body)) + body)

    def f(x):
        return -1
''')
