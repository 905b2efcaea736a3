"""Shared helpers of the web monitor's tests: a real fieldbrain-server on loopback ephemeral
ports (web monitor on), simulated PiCar-Xs (fieldbrain-sim), the monitor port, RSS.

Every process started here is stopped by `Stack.close()` (SIGTERM, then SIGKILL after 10 s);
every wait is bounded."""
import json
import os
import signal
import socket
import subprocess
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def wait_for(what, predicate, timeout_s, poll_s=0.1):
    """Polls predicate() until it returns something truthy; raises naming `what` on timeout."""
    deadline = time.monotonic() + timeout_s
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout_s} s waiting for {what}")
        time.sleep(poll_s)


def rss_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise RuntimeError(f"no VmRSS for pid {pid}")


def monitor_request(port, command, timeout_s=10):
    """One request on the monitor port; returns the reply's `data`."""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout_s) as s:
        f = s.makefile("rb")
        f.readline()  # welcome line
        s.sendall((command + "\n").encode())
        reply = json.loads(f.readline())
    if reply.get("status") != "success":
        raise AssertionError(f"monitor '{command}' failed: {reply}")
    return reply["data"]


class Stack:
    """fieldbrain-server (with the web monitor) and fieldbrain-sim robots."""

    def __init__(self, bin_dir, out_dir, resolution=8, extra_server_args=()):
        self.bin_dir = bin_dir
        self.out_dir = out_dir
        os.makedirs(out_dir, exist_ok=True)
        self.tmp = tempfile.TemporaryDirectory(prefix="fieldbrain-web-")
        self.procs = []
        self.robots = []
        self.log_path = os.path.join(out_dir, "server.log")
        self.log = open(self.log_path, "w")
        self.server = self._spawn(
            [os.path.join(bin_dir, "fieldbrain-server"), "--config",
             os.path.join(REPO, "configs", "default.json"), "--host", "127.0.0.1", "--port", "0",
             "--monitor-port", "0", "--web-port", "0", "--state-dir", self.tmp.name,
             "--save-every", "0", "--resolution", str(resolution),
             "--ready-file", os.path.join(self.tmp.name, "ready.json"), *extra_server_args],
            self.log)
        ports = wait_for("the server's ports in " + self.log_path, self._ports, 120)
        self.port, self.monitor_port, self.web_port = ports

    def _spawn(self, argv, log):
        # One OpenMP thread: on a loaded 2-core machine LibTorch's spinning OpenMP workers
        # made an R = 8 cycle ~10x slower (240 ms vs 24 ms measured), which tells nothing
        # about the web monitor.
        env = dict(os.environ, OMP_NUM_THREADS="1")
        p = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, env=env)
        self.procs.append(p)
        return p

    def _ports(self):
        if self.server.poll() is not None:
            raise AssertionError(f"fieldbrain-server exited ({self.server.returncode}); "
                                 f"see {self.log_path}")
        # The ready line (written whole, atomically) names the ports the server bound.
        try:
            with open(os.path.join(self.tmp.name, "ready.json")) as f:
                ready = json.load(f)
        except FileNotFoundError:
            return None
        return ready["port"], ready["monitor_port"], ready["web_port"]

    @property
    def url(self):
        return f"http://127.0.0.1:{self.web_port}/"

    def start_robots(self, count, cycles=1_000_000):
        """Simulated PiCar-Xs (framing B, with reward) that cycle until close()."""
        sim_out = os.path.join(self.out_dir, "sim")
        os.makedirs(sim_out, exist_ok=True)
        self.robots.append(self._spawn([os.path.join(self.bin_dir, "fieldbrain-sim"), "--server",
                     f"127.0.0.1:{self.port}", "--robots", str(count), "--cycles", str(cycles),
                     "--reward", "--out", sim_out],
                    open(os.path.join(self.out_dir, "sim.log"), "w")))

    def stop_robots(self):
        """Stops the simulated robots (SIGTERM: the sim ends its run cleanly and disconnects)."""
        for p in self.robots:
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
        for p in self.robots:
            p.wait(timeout=30)

    def robot_cycles(self):
        """{robot key: brain cycle} from the monitor port."""
        data = monitor_request(self.monitor_port, "brain_stats")
        return {k: v["cycles_processed"] for k, v in data["sessions"].items()}

    def close(self):
        for p in reversed(self.procs):
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
        for p in reversed(self.procs):
            try:
                p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
        self.log.close()
        self.tmp.cleanup()
