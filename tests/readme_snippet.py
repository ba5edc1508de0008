"""Runs README.md's Python training loop as written (the first code block
of "Your own model" that makes a fasgd.Client), against a fasgd-server
on loopback: its HOST:5555 and HOST:5556 become the server's ports, and
the names it leaves to the reader (training, my_gradient, error, nll,
examples) are defined here. The fifth gradient holds a NaN, which the
server's guard refuses (422); at the 30th step the server is killed and
started again on the same ports. The loop must count the refusal, count
the lost server, join the new one and train on it.

With --torch, the PyTorch loop (the block with ParamBuffer) instead: a
torch.nn.Linear(784, 10) as the server's external model, its client c
made here, batches of random digits, the fifth holding a NaN.

Usage: readme_snippet.py [--torch] README.md SERVER DATA-DIR
Exit status 0 when it did all that, 1 otherwise (said why)."""

import ctypes
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time

import numpy as np

STEPS = 60
NAN_STEP = 5
KILL_STEP = 30


def snippet(readme, marker):
    """The first code block holding marker, dedented."""
    text = open(readme, encoding="utf-8").read()
    section = text[text.index("## Your own model"):]
    lines, block, inside = section.splitlines(), [], False
    for line in lines:
        if line.startswith("    ") or (inside and not line.strip()):
            block.append(line[4:])
            inside = True
        elif inside:
            if any(marker in b for b in block):
                break
            block, inside = [], False
    code = "\n".join(block).strip() + "\n"
    if marker not in code:
        sys.exit("readme_snippet: no code block with %s in %s" % (marker, readme))
    return code


def free_ports(n):
    socks = [socket.socket() for _ in range(n)]
    for s in socks:
        s.bind(("127.0.0.1", 0))
    ports = [s.getsockname()[1] for s in socks]
    for s in socks:
        s.close()
    return ports


def main():
    use_torch = sys.argv[1] == "--torch"
    readme, server, data = sys.argv[1 + use_torch:4 + use_torch]
    code = snippet(readme, "ParamBuffer(" if use_torch else "fasgd.Client(")
    push_port, fetch_port = free_ports(2)
    for host_ep, port in (("tcp://HOST:5555", push_port), ("tcp://HOST:5556", fetch_port)):
        if use_torch:
            break
        if host_ep not in code:
            sys.exit("readme_snippet: the snippet does not name %s" % host_ep)
        code = code.replace(host_ep, "tcp://127.0.0.1:%d" % port)
    tmp = tempfile.mkdtemp(prefix="fasgd-readme-")
    cfg = os.path.join(tmp, "server.yaml")
    with open(cfg, "w") as f:
        f.write("push_endpoint: tcp://127.0.0.1:%d\nfetch_endpoint: tcp://127.0.0.1:%d\n"
                "control_endpoint: \"\"\nrule: {name: fasgd, lr: 0.005}\ndata: {dir: \"%s\"}\n"
                "log: {level: warn}\n" % (push_port, fetch_port, data))
        if use_torch:
            f.write("external: {tensors: \"weight:10x784,bias:10\"}\n")
    log = open(os.path.join(tmp, "server.log"), "a")
    procs = []

    # The server dies with this interpreter (PR_SET_PDEATHSIG), so that
    # even a hard crash of the snippet (an abort in the library) leaves no
    # daemon behind; the finally below stops it in every other case.
    libc = ctypes.CDLL(None, use_errno=True)

    def start():
        p = subprocess.Popen([server, "-c", cfg], stdout=log, stderr=log,
                             preexec_fn=lambda: libc.prctl(1, signal.SIGTERM))  # 1: PR_SET_PDEATHSIG
        procs.append(p)
        return p

    state = {"step": 0, "server": start(), "T_after_restart": 0}
    time.sleep(1.0)

    def training():
        c = ns.get("c")
        if state["step"] > KILL_STEP and c is not None and c.joined:
            state["T_after_restart"] = c.server_timestamp
        state["step"] += 1
        if state["step"] == KILL_STEP:
            state["server"].send_signal(signal.SIGKILL)
            state["server"].wait()
            time.sleep(0.5)
            state["server"] = start()
        return state["step"] <= STEPS

    def my_gradient(theta):
        g = (1e-3 * theta).astype(np.float32)
        if state["step"] == NAN_STEP:
            g[0] = np.nan
        return g

    ns = {"training": training, "my_gradient": my_gradient, "error": 0.5, "nll": 1.0,
          "examples": 100, "__name__": "readme"}
    if use_torch:
        import fasgd
        import torch
        torch.manual_seed(1)
        rng = np.random.default_rng(1)

        def batches():
            while training():
                x = rng.random((32, 784), dtype=np.float32)
                if state["step"] == NAN_STEP:
                    x[0, 0] = np.nan
                yield torch.from_numpy(x), torch.from_numpy(rng.integers(0, 10, 32))

        c = fasgd.Client(push="tcp://127.0.0.1:%d" % push_port, fetch="tcp://127.0.0.1:%d" % fetch_port)
        ns.update({"fasgd": fasgd, "torch": torch, "time": time, "c": c, "refused": 0, "lost": 0,
                   "model": torch.nn.Linear(784, 10), "batches": batches()})
    rc = 0
    try:
        t0 = time.monotonic()
        exec(compile(code, "README.md snippet", "exec"), ns)
        if use_torch:
            ns["c"].close()
        secs = time.monotonic() - t0
        print("# %d steps in %.1f s, refused %d, lost %d, T %d on the restarted server"
              % (state["step"] - 1, secs, ns["refused"], ns["lost"], state["T_after_restart"]))
        if ns["refused"] != 1:
            print("readme_snippet: refused %d gradients, expected 1" % ns["refused"])
            rc = 1
        if ns["lost"] < 1:
            print("readme_snippet: the lost server was not noticed")
            rc = 1
        # The snippet's gradient (1e-3·θ) is no honest gradient: past its
        # probation (16 pushes) the guard applies the pushes its record
        # does not find predicting ascent (14 of the last 30 in a run).
        if state["T_after_restart"] < 2:
            print("readme_snippet: the restarted server applied %d updates" % state["T_after_restart"])
            rc = 1
    finally:
        for p in procs:
            if p.poll() is None:
                p.terminate()
                try:
                    p.wait(10)
                except subprocess.TimeoutExpired:
                    p.kill()
        log.close()
        if rc:
            with open(os.path.join(tmp, "server.log")) as f:
                for line in f.readlines()[-10:]:
                    print("# server: " + line.rstrip())
        subprocess.run(["rm", "-rf", tmp])
    return rc


if __name__ == "__main__":
    sys.exit(main())
