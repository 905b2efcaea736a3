"""A WebSocket client that connects to the web monitor and never reads must not slow the
robots: their cycle rate with it stays >= 80% of the rate without it (the median of 5 adjacent
pairs of windows, so one window a busy machine starves does not decide), the server's memory
stays bounded, and the server reports the updates the client lost.

    stall_test.py --bin build/bin --out build/test-output/web-stall
"""
import argparse
import base64
import json
import os
import socket
import sys
import time

from web_harness import Stack, monitor_request, rss_kib, wait_for

WINDOW_S = 2.0
ROUNDS = 5
MIN_RATIO = 0.8
RSS_GROWTH_LIMIT_KIB = 16 * 1024


def stalled_client(port, robot):
    """Completes the WebSocket handshake, selects `robot` (so its plot points are pushed too),
    then never reads again."""
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)  # before connect: a small window
    s.connect(("127.0.0.1", port))
    key = base64.b64encode(os.urandom(16)).decode()
    s.sendall((f"GET /ws HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUpgrade: websocket\r\n"
               f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\n"
               "Sec-WebSocket-Version: 13\r\n\r\n").encode())
    # A client may send frames only after the server's 101 (RFC 6455 4.1): read up to it.
    s.settimeout(10)
    reply = b""
    while b"\r\n\r\n" not in reply:
        chunk = s.recv(1)
        if not chunk:
            raise AssertionError("web monitor closed the WebSocket handshake")
        reply += chunk
    assert reply.startswith(b"HTTP/1.1 101"), reply
    payload = json.dumps({"type": "select", "robot": robot, "channel": 0, "z": -1}).encode()
    mask = os.urandom(4)
    frame = bytes([0x81, 0x80 | len(payload)]) + mask + bytes(
        b ^ mask[i % 4] for i, b in enumerate(payload))
    s.sendall(frame)
    return s


def dropped_updates(stack):
    return monitor_request(stack.monitor_port, "performance_metrics")["subscriber_lines_dropped"]


def cycles_over(stack, seconds, rss_samples=None):
    before = sum(stack.robot_cycles().values())
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if rss_samples is not None:
            rss_samples.append(rss_kib(stack.server.pid))
        time.sleep(0.25)
    return sum(stack.robot_cycles().values()) - before


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    stack = Stack(args.bin, args.out, resolution=8, extra_server_args=("--subscriber-queue", "32"))
    try:
        stack.start_robots(2)
        wait_for("two robots cycling", lambda: len(stack.robot_cycles()) == 2 and min(
            stack.robot_cycles().values()) > 50, 60)
        robot = sorted(stack.robot_cycles())[0]

        # Each round measures a window with the stalled client and, right after it is gone,
        # one without: adjacent windows, so load from elsewhere on the machine falls on both
        # sides alike.
        base, stalled, drops, rss, ratios = 0, 0, 0, [], []
        for round_ in range(ROUNDS):
            client = stalled_client(stack.web_port, robot)
            # Measure only once the stall is complete: the kernel buffers and the bounded
            # queue are full and updates are being dropped.
            start, t0 = dropped_updates(stack), time.monotonic()
            wait_for("the stalled client's queue to overflow",
                     lambda: dropped_updates(stack) > start, 120, poll_s=0.25)
            fill = time.monotonic() - t0
            start = dropped_updates(stack)
            s = cycles_over(stack, WINDOW_S, rss)
            drops += dropped_updates(stack) - start
            client.close()
            time.sleep(0.3)
            b = cycles_over(stack, WINDOW_S)
            stalled += s
            base += b
            ratios.append(s / b if b > 0 else 0.0)
            print(f"round {round_ + 1}: {s} robot-cycles with the stalled client, {b} without "
                  f"(its queue overflowed {fill:.1f} s after it connected)")

        base_rate = base / (ROUNDS * WINDOW_S)
        stall_rate = stalled / (ROUNDS * WINDOW_S)
        growth = max(rss) - rss[0]
        print(f"robot-cycles/s without a web client: {base_rate:.1f} ({base} in {ROUNDS} x "
              f"{WINDOW_S} s)")
        print(f"robot-cycles/s with a stalled web client: {stall_rate:.1f} ({stalled} in "
              f"{ROUNDS} x {WINDOW_S} s), ratio {stall_rate / base_rate:.2f}")
        print(f"server RSS in the stalled windows: {rss[0] / 1024:.1f} MiB at the first, "
              f"{growth} KiB more at most; updates the "
              f"stalled clients lost in those windows: {drops}")
        assert base_rate > 0, "the robots did not cycle"
        # Judged by the median round: load from elsewhere on a busy machine can starve one
        # window of a pair; a stalled client that slowed the robots would slow every round.
        median_ratio = sorted(ratios)[len(ratios) // 2]
        print(f"per-round ratios: {', '.join(f'{r:.2f}' for r in ratios)}; median "
              f"{median_ratio:.2f}")
        assert median_ratio >= MIN_RATIO, (
            f"a stalled web client slowed the robots: median round ratio {median_ratio:.2f} < "
            f"{MIN_RATIO} (overall {stall_rate:.1f} vs {base_rate:.1f} robot-cycles/s)")
        assert growth <= RSS_GROWTH_LIMIT_KIB, f"server RSS grew {growth} KiB during the stall"
        assert drops > 0, "the stalled client stopped losing updates: was it really stalled?"
    finally:
        stack.close()
    print("stall test passed")


if __name__ == "__main__":
    sys.exit(main())
