"""Runs COMMAND with its standard error into a pipe of one page, and can
hold it there: once the file DIR/hold exists, fills what is left of the
pipe (with lines of its own, "held_stderr: filler"), so that COMMAND
blocks at its next write to standard error, and writes DIR/full; once
DIR/release exists (or COMMAND ends), copies the pipe to DIR/log as
COMMAND writes it. COMMAND's pid is in DIR/pid; a SIGTERM is passed on
to it. Exits with COMMAND's status. Usage: held_stderr.py DIR COMMAND..."""
import array
import fcntl
import os
import signal
import subprocess
import sys
import termios
import time

F_SETPIPE_SZ = 1031             # fcntl.F_SETPIPE_SZ, Python 3.10 on
PAGE = 4096
FILLER = b"held_stderr: filler\n"

folder, command = sys.argv[1], sys.argv[2:]
r, w = os.pipe()
fcntl.fcntl(w, F_SETPIPE_SZ, PAGE)
child = subprocess.Popen(command, stderr=w)
with open(os.path.join(folder, "pid"), "w") as f:
    f.write("%d\n" % child.pid)
signal.signal(signal.SIGTERM, lambda *_: child.terminate())


def waiting():
    n = array.array("i", [0])
    fcntl.ioctl(r, termios.FIONREAD, n)
    return n[0]


def there(name):
    return os.path.exists(os.path.join(folder, name))


held = False
while not there("release") and child.poll() is None:
    if there("hold") and not held:
        # A description of the pipe's own, not blocking: COMMAND's, which
        # it shares with w, must go on blocking.
        fill = os.open("/proc/self/fd/%d" % w, os.O_WRONLY | os.O_NONBLOCK)
        try:
            while True:
                room = PAGE - waiting()
                if room <= 0:
                    break
                os.write(fill, (FILLER * (room // len(FILLER) + 1))[:room - 1] + b"\n")
        except BlockingIOError:
            pass
        os.close(fill)
        held = True
        open(os.path.join(folder, "full"), "w").close()
    time.sleep(0.05)
os.close(w)
with open(os.path.join(folder, "log"), "ab") as out:
    while True:
        chunk = os.read(r, 65536)
        if not chunk:
            break
        out.write(chunk)
        out.flush()
sys.exit(child.wait())
