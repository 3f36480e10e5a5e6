"""The warm interpreter (privtext.runtime.warm): a job delegated to it runs in a forked worker with the job's own
folder, environment, streams and exit status; a job whose process dies takes its worker with it; with no
server a job runs in its own process. Its results against jobs run alone: tests/test_grid_invariants.py."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from privtext.runtime.warm import SOCKET_ENV

WARM = [sys.executable, "-m", "privtext.runtime.warm", "--"]
# A job script as Snakemake runs one: delegate first, then the work. It prints where it ran and exits with $CODE,
# through finish_job when $FINISH is set, raising when $RAISE is set.
JOB = """
from privtext.runtime.warm import delegate

delegate()
import os
import sys
from pathlib import Path

from privtext.runtime.logs import finish_job, setup_logging

setup_logging(os.environ.get("LOG"))
Path("pid").write_text(str(os.getpid()))
print("ran in", "worker" if os.environ.get("PRIVTEXT_WARM_WORKER") else "own process", os.getcwd(),
      os.environ.get("X"), "torch already imported" if "torch" in sys.modules else "torch not imported", flush=True)
if os.environ.get("SLEEP"):
    import time
    time.sleep(float(os.environ["SLEEP"]))
if os.environ.get("RAISE"):
    raise RuntimeError("the job failed")
if os.environ.get("FINISH"):
    finish_job()
sys.exit(int(os.environ.get("CODE", "0")))
"""


def _with_server(tmp_path: Path, shell: str) -> subprocess.CompletedProcess:
    """Run the shell commands ``shell`` (which start jobs) beside a warm server, in ``tmp_path``."""
    (tmp_path / "job.py").write_text(JOB)
    (tmp_path / "jobs.sh").write_text(shell)
    return subprocess.run([*WARM, "sh", str(tmp_path / "jobs.sh")], cwd=tmp_path, capture_output=True, text=True,
                          timeout=300)


def test_a_delegated_job_runs_in_a_worker_with_its_own_folder_environment_streams_and_status(tmp_path):
    job = f"{sys.executable} {tmp_path / 'job.py'}"
    (tmp_path / "elsewhere").mkdir()
    result = _with_server(tmp_path, f"""
X=first CODE=3 {job}; echo "status $?"
cd elsewhere && X=second FINISH=1 LOG=job.log {job}; echo "status $?"
X=third RAISE=1 LOG=failed.log {job}; echo "status $?"
""")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == f"ran in worker {tmp_path} first torch already imported"
    assert lines[1] == "status 3"
    assert lines[2] == f"ran in worker {tmp_path / 'elsewhere'} second torch already imported"
    assert lines[3] == "status 0"  # finish_job reports before it leaves without teardown
    assert lines[5] == "status 1"
    assert "running in a warm worker" in (tmp_path / "elsewhere" / "job.log").read_text()
    assert "RuntimeError: the job failed" in (tmp_path / "elsewhere" / "failed.log").read_text()  # the job's hook


def test_without_a_server_a_job_runs_in_its_own_process(tmp_path):
    (tmp_path / "job.py").write_text(JOB)
    for environment in ({}, {SOCKET_ENV: str(tmp_path / "no-such-socket")}):
        result = subprocess.run([sys.executable, "job.py"], cwd=tmp_path, capture_output=True, text=True,
                                env={**os.environ, **environment, "X": "alone", "CODE": "4"})
        assert result.returncode == 4
        assert result.stdout == f"ran in own process {tmp_path} alone torch not imported\n"


def test_a_slurm_job_runs_in_its_own_process_even_beside_a_server(tmp_path):
    job = f"{sys.executable} {tmp_path / 'job.py'}"
    result = _with_server(tmp_path, f"SLURM_JOB_ID=7 X=cluster {job}; echo \"status $?\"")
    assert result.stdout.splitlines() == [f"ran in own process {tmp_path} cluster torch not imported", "status 0"]


def test_a_job_killed_takes_its_worker_with_it(tmp_path):
    (tmp_path / "job.py").write_text(JOB)
    # The job's process is killed once its worker has started; the worker must not outlive it.
    script = f"""
SLEEP=60 {sys.executable} job.py & job=$!
while [ ! -s pid ]; do sleep 0.05; done
kill -KILL $job; wait $job; echo "job status $?"
"""
    started = time.monotonic()
    result = _with_server(tmp_path, script)
    worker = int((tmp_path / "pid").read_text())
    assert result.stdout.strip().endswith("job status 137"), result.stdout + result.stderr
    deadline = time.monotonic() + 10
    while _alive(worker) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _alive(worker)
    assert time.monotonic() - started < 50  # the 60 s sleep did not run out


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return Path(f"/proc/{pid}").exists() and "zombie" not in Path(f"/proc/{pid}/status").read_text().lower()


@pytest.mark.parametrize("argv", [[], ["snakemake"], ["--serve"]])
def test_the_command_line_says_how_to_use_it(argv):
    result = subprocess.run([sys.executable, "-m", "privtext.runtime.warm", *argv], capture_output=True, text=True)
    assert result.returncode == 2 and "usage" in result.stderr


def _job_beside_a_fake_server(tmp_path: Path, answer, **env: str) -> subprocess.CompletedProcess:
    """Run the job script with ``env`` against a socket whose one connection ``answer(connection)`` handles (in a
    thread) in place of the warm server's."""
    import socket
    import threading

    (tmp_path / "job.py").write_text(JOB)
    path = str(tmp_path / "socket")
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    listener.listen(1)
    server = threading.Thread(target=lambda: answer(listener.accept()[0]))
    server.start()
    result = subprocess.run([sys.executable, "job.py"], cwd=tmp_path, capture_output=True, text=True, timeout=60,
                            env={**os.environ, SOCKET_ENV: path, **env})
    server.join()
    listener.close()
    return result


def test_a_server_that_closes_before_forking_leaves_the_job_to_run_in_its_own_process(tmp_path):
    """A job that connects as the server exits (its idle timeout) is not lost: it runs where it started."""
    result = _job_beside_a_fake_server(tmp_path, lambda connection: connection.close(), X="left", CODE="5")
    assert result.returncode == 5
    assert result.stdout == f"ran in own process {tmp_path} left torch not imported\n"


# --- Issue 43: nothing a client does stalls the server; a job never waits without limit --------------------------

@pytest.fixture
def bare_server(tmp_path):
    """A warm server without preloads, its socket and its pid."""
    path = tmp_path / "socket"
    server = subprocess.Popen([sys.executable, "-c", "import sys; from privtext.runtime.warm import serve; "
                               "serve(sys.argv[1], preload=())", str(path)])
    deadline = time.monotonic() + 30
    while not path.exists() and time.monotonic() < deadline:
        time.sleep(0.01)
    yield path, server.pid
    server.terminate()
    server.wait()


def _open_fds(pid: int) -> int:
    return len(os.listdir(f"/proc/{pid}/fd"))


def test_a_request_cut_short_or_malformed_is_dropped_and_the_next_job_still_runs(tmp_path, bare_server):
    import socket
    import struct

    path, pid = bare_server
    (tmp_path / "job.py").write_text(JOB)
    job = dict(cwd=tmp_path, capture_output=True, text=True, timeout=60, env={**os.environ, SOCKET_ENV: str(path)})
    assert subprocess.run([sys.executable, "job.py"], **job).stdout.startswith("ran in worker")
    before = _open_fds(pid)
    for message, fds in ((struct.pack("!I", 100) + b"0123456789", []),  # says 100 bytes, sends 10, closes
                         (b"", []), (struct.pack("!I", 5) + b"{bad", []),
                         (struct.pack("!I", 8) + b"not json", [0, 1, 2]),  # bad JSON with descriptors
                         (struct.pack("!I", 2) + b"{}", [0, 1, 2])):  # JSON that is not a job's request
        client = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        client.connect(str(path))
        if fds:
            socket.send_fds(client, [message], fds)
        else:
            client.sendall(message)
        client.close()
    started = time.monotonic()
    result = subprocess.run([sys.executable, "job.py"], **{**job, "env": {**job["env"], "CODE": "4"}})
    assert result.returncode == 4 and result.stdout.startswith("ran in worker")
    assert time.monotonic() - started < 10  # no request held the server
    assert _open_fds(pid) == before  # the descriptors of the dropped requests are closed


def test_a_stalled_client_holds_the_server_only_for_its_request_limit(tmp_path, bare_server):
    import socket

    from privtext.runtime import warm

    path, _ = bare_server
    (tmp_path / "job.py").write_text(JOB)
    staller = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    staller.connect(str(path))  # connects, sends nothing, keeps the connection open
    started = time.monotonic()
    result = subprocess.run([sys.executable, "job.py"], cwd=tmp_path, capture_output=True, text=True, timeout=120,
                            env={**os.environ, SOCKET_ENV: str(path)})
    staller.close()
    assert result.stdout.startswith("ran in worker")
    assert time.monotonic() - started < warm.REQUEST_SECONDS + 10


def test_a_job_without_a_worker_in_time_runs_in_its_own_process_and_never_twice(tmp_path):
    """A server that answers after the job gave up gets no go-ahead: its worker would run nothing."""
    after_late_start: list[bytes] = []

    def answer_late(connection) -> None:
        time.sleep(3)  # past the job's 1 s
        try:
            connection.sendall(b"S")
            after_late_start.append(connection.recv(1))
        except OSError:
            after_late_start.append(b"")
        connection.close()

    result = _job_beside_a_fake_server(tmp_path, answer_late, PRIVTEXT_WARM_START_SECONDS="1", CODE="6")
    assert result.returncode == 6 and result.stdout.startswith("ran in own process")
    assert "no worker started within 1 s" in result.stderr
    assert after_late_start == [b""]  # no go-ahead: the late worker would have run nothing
