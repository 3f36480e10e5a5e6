"""A warm interpreter for local runs: torch and privtext imported once, one forked process per job.

Every train job spends about 1.5 s importing torch before it trains for a few seconds (docs/performance.md,
"After the profile"); a claims run has hundreds of them. ``python -m privtext.runtime.warm -- COMMAND ...``
starts a server that imports the job modules once and listens on a Unix socket in a private folder, runs
COMMAND (Snakemake) with ``PRIVTEXT_WARM_SOCKET`` pointing at it, and stops the server when COMMAND ends.

A workflow script calls :func:`delegate` before its imports. With no server (SLURM jobs, tests, a plain
``snakemake``) it returns and the job runs in its own process, as before. With one, the job's process hands
the server its script (the one Snakemake generated: preamble and body), working folder, environment and its
stdin, stdout and stderr, and waits. The server forks a worker, which runs the whole script again in a process
that already holds the imports, with its own folder, environment and streams, and reports the script's exit
status; the job's process exits with it. So a job computes exactly what it computes alone: the same code on
the same inputs, with the thread counts the job sets itself (privtext.runtime.threads).

Lifetimes are tied together: a worker whose job process dies (Snakemake killing a job, SIGKILL included)
kills itself at once, and a worker that dies without reporting (a crash, the OOM killer) fails its job.
The server exits with its command, or after ``IDLE_SECONDS`` without a job, or when its parent is gone.

Nothing a client does stalls the server: a request is read within ``REQUEST_SECONDS`` (a connection that stops
mid-request or closes early is dropped, with the descriptors it passed), and is checked before a worker forks.
A job that gets no worker within ``START_SECONDS`` (``PRIVTEXT_WARM_START_SECONDS``) says why on its stderr
and runs in its own process; a worker starts the job only on the job's go-ahead, so a job is never run twice.
Snakemake's benchmark files still hold each job's wall seconds; its CPU and memory columns then count only
the waiting process.

Why not a library: multiprocessing's forkserver does the same for child processes of one Python program;
these jobs are separate programs started by Snakemake.
"""

from __future__ import annotations

import importlib
import json
import os
import runpy
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Sequence

SOCKET_ENV = "PRIVTEXT_WARM_SOCKET"
WORKER_ENV = "PRIVTEXT_WARM_WORKER"  # set in a worker: the script it runs must not delegate again
IDLE_SECONDS = 600
# What the delegating jobs import (train, attack, MDL; fairness jobs import little and run alone), once;
# scikit-learn's logistic regression for the `linear` attacker (2.5 s cold on an AVX2 machine); identification's
# scorers for a text point's attack job (0.3 s).
PRELOAD = ("torch", "snakemake.script", "safetensors.torch", "privtext.jobs.train_job", "privtext.jobs.runs",
           "privtext.methods", "privtext.attack.attackers", "privtext.measures.mdl", "privtext.claims.attackers",
           "privtext.standins.allocator", "sklearn.linear_model", "privtext.attack.identification", "sacrebleu",
           "rapidfuzz.distance", "rouge_score.tokenize")
START_ENV = "PRIVTEXT_WARM_START_SECONDS"
START_SECONDS = 120.0  # a job's wait for its worker: the server answers at once, once its imports are done
REQUEST_SECONDS = 10.0  # the server's limit on reading one request (an environment of a few KiB)
MAX_REQUEST_BYTES = 64 << 20
_HEADER = struct.Struct("!I")
_STARTED = b"S"  # a worker's first byte to its job process; its exit status follows
_GO = b"G"  # the job process's answer: it waits for this worker (it has not given up and run alone)
_FAILED = 1

_report_to: socket.socket | None = None  # a worker's connection to its job process


def delegate() -> None:
    """Run this job in the warm server if there is one (and exit with its status); else return."""
    path = os.environ.get(SOCKET_ENV)
    # A SLURM job stays in its allocation (sbatch passes the environment on, the socket with it).
    if not path or os.environ.get(WORKER_ENV) or os.environ.get("SLURM_JOB_ID"):
        return
    connection = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        connection.connect(path)
    except OSError:  # no server (any more): run here
        connection.close()
        return
    request = json.dumps({"script": os.path.abspath(sys.argv[0]), "cwd": os.getcwd(),
                          "env": dict(os.environ)}).encode()
    sys.stdout.flush()
    sys.stderr.flush()
    wait = float(os.environ.get(START_ENV, START_SECONDS))
    connection.settimeout(wait)
    try:
        socket.send_fds(connection, [_HEADER.pack(len(request)) + request], [0, 1, 2])
        started = connection.recv(1)
        if started == _STARTED:
            connection.sendall(_GO)  # from here on this process waits for the worker, however long the job
    except socket.timeout:
        print(f"privtext.runtime.warm: no worker started within {wait:g} s ({START_ENV}); running this job in "
              "its own process", file=sys.stderr, flush=True)
        started = b""
    except OSError:
        started = b""
    if started != _STARTED:  # the server went away before forking a worker (e.g. its idle exit): run here
        connection.close()
        return
    connection.settimeout(None)
    try:
        status = connection.recv(1)  # the worker's exit status, or nothing if it died without one
    except OSError:
        status = b""
    os._exit(status[0] if status else _FAILED)


def report_exit(status: int) -> None:
    """In a worker, tell the job process how its script ended (privtext.runtime.logs.finish_job calls this
    before it leaves without the interpreter's teardown); anywhere else, nothing."""
    global _report_to
    if _report_to is not None:
        try:
            _report_to.sendall(bytes([status & 0xFF]))
        except OSError:
            pass
        _report_to = None


def serve(path: str | Path, preload: Sequence[str] = PRELOAD, idle_seconds: float = IDLE_SECONDS) -> None:
    """Listen on ``path``, import ``preload``, then fork a worker for each job until idle or orphaned."""
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(str(path))
    server.listen(64)  # jobs that connect while the imports run wait for them
    for name in preload:
        importlib.import_module(name)
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # workers are reaped by the kernel
    parent = os.getppid()
    server.settimeout(5.0)
    idle = 0.0
    while idle < idle_seconds and os.getppid() == parent:
        try:
            connection, _ = server.accept()
        except socket.timeout:
            idle += 5.0
            continue
        idle = 0.0
        fds: list[int] = []
        try:
            connection.settimeout(REQUEST_SECONDS)
            message, fds, _, _ = socket.recv_fds(connection, 1 << 20, 3)
            request = _read_request(connection, message, fds)
        except (OSError, ValueError, struct.error):  # cut short, stalled, malformed: drop it, close what it sent
            connection.close()
            for fd in fds:
                os.close(fd)
            continue
        if os.fork() == 0:
            server.close()
            _work(connection, fds, request)  # never returns
        connection.close()
        for fd in fds:
            os.close(fd)


def _read_request(connection: socket.socket, message: bytes, fds: Sequence[int]) -> dict:
    """The rest of a request whose first bytes are ``message``, checked; OSError or ValueError if the connection
    closes or stalls first (an empty ``recv`` is a close), or the request is not one a job sends."""
    if len(message) < _HEADER.size:
        raise ConnectionError("closed before its request")
    size, = _HEADER.unpack_from(message)
    if size > MAX_REQUEST_BYTES:
        raise ValueError(f"a request of {size} bytes")
    while len(message) < _HEADER.size + size:
        chunk = connection.recv(1 << 20)
        if not chunk:
            raise ConnectionError("closed mid-request")
        message += chunk
    request = json.loads(message[_HEADER.size:_HEADER.size + size])
    if (len(fds) != 3 or not isinstance(request, dict) or not isinstance(request.get("script"), str)
            or not isinstance(request.get("cwd"), str) or not isinstance(request.get("env"), dict)
            or not all(isinstance(k, str) and isinstance(v, str) for k, v in request["env"].items())):
        raise ValueError("not a job's request")
    return request


def _work(connection: socket.socket, fds: Sequence[int], request: dict) -> None:
    """In a forked worker: become the job (streams, folder, environment, argv), run its script, report."""
    global _report_to
    try:
        connection.sendall(_STARTED)
        go = connection.recv(1)
    except OSError:
        go = b""
    if go != _GO:  # the job process gave up waiting and runs in its own process: run nothing
        os._exit(0)
    connection.settimeout(None)
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)  # the job may wait for processes of its own
    for target, fd in zip((0, 1, 2), fds):
        os.dup2(fd, target)
        os.close(fd)
    os.chdir(request["cwd"])
    os.environ.clear()
    os.environ.update(request["env"])
    os.environ[WORKER_ENV] = "1"
    sys.argv = [request["script"]]
    _report_to = connection

    def die_with_job() -> None:
        while connection.recv(1):  # the job process sends nothing: this returns b"" when it is gone
            pass
        os.kill(os.getpid(), signal.SIGKILL)

    threading.Thread(target=die_with_job, daemon=True).start()
    status = 0
    try:
        runpy.run_path(request["script"], run_name="__main__")
    except SystemExit as ended:
        status = ended.code if isinstance(ended.code, int) else (0 if ended.code is None else _FAILED)
    except BaseException:
        sys.excepthook(*sys.exc_info())  # the job's own hook: the rule's log (privtext.runtime.logs)
        status = _FAILED
    sys.stdout.flush()
    sys.stderr.flush()
    report_exit(status)
    os._exit(status)


def run_with_server(command: Sequence[str]) -> int:
    """Run ``command`` with a warm server beside it; its exit status."""
    with tempfile.TemporaryDirectory(prefix="privtext-warm-") as folder:  # mode 0700: this user's jobs only
        path = os.path.join(folder, "socket")
        server = subprocess.Popen([sys.executable, "-m", "privtext.runtime.warm", "--serve", path])
        try:
            # The server binds before it imports anything heavy: wait for that (a tenth of a second), so that no
            # early job finds no socket and runs alone; jobs that come during its imports wait in its queue.
            deadline = time.monotonic() + 30
            while not os.path.exists(path) and server.poll() is None and time.monotonic() < deadline:
                time.sleep(0.01)
            process = subprocess.Popen(list(command), env={**os.environ, SOCKET_ENV: path})
            # Ctrl-C reaches the command (and the server) directly; this process only waits for it to end.
            signal.signal(signal.SIGINT, signal.SIG_IGN)
            return process.wait()
        finally:
            server.terminate()
            server.wait()


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if len(argv) == 2 and argv[0] == "--serve":
        try:
            serve(argv[1])
        except KeyboardInterrupt:  # Ctrl-C of the run: the command stops its jobs itself
            pass
        return 0
    if argv[:1] == ["--"] and len(argv) > 1:
        return run_with_server(argv[1:])
    print("usage: python -m privtext.runtime.warm -- COMMAND [ARG ...]", file=sys.stderr)
    return 2


if __name__ == "__main__":
    # As the imported module, not this __main__ copy: a worker keeps its connection where finish_job looks for it.
    from privtext.runtime import warm

    sys.exit(warm.main())
