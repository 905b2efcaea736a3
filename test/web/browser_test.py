"""The web monitor in a real browser: fieldbrain-server and two simulated robots, the page in
headless Chromium (Debian's chromium + chromium-driver, driven by python3-selenium). Checks
what a user sees, from the rendered page, after realistic waits:
  1. a first browser, after ~8 s: both robots listed with growing cycle counts, a full motor
     plot, a heat map drawn x to the right and y upwards with its colour scale stated and no
     value beyond it, the totals; clicking the other robot switches plot and map;
  2. a second browser opened later: current cycle counts and full plots at once (the server
     sends the recent points on selection), not seconds later;
  3. every browser closed, robots still cycling, a new browser: its first table shows the
     cycles of now, not those of when the last browser left;
  4. the robots leave: the page says they left (not "no robot connected yet").
Saves monitor.png, monitor-second.png and monitor-left.png.

    browser_test.py --bin build/bin --out build/test-output/web
"""
import argparse
import os
import sys
import time

from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By

from web_harness import Stack, wait_for

# Distinct colours in the heat map canvas (computed in the page).
HEATMAP_COLOURS_JS = """
const c = document.getElementById('heatmap');
const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
const seen = new Set();
for (let i = 0; i < d.length; i += 4) seen.add(d[i] + ',' + d[i + 1] + ',' + d[i + 2]);
return {width: c.width, colours: seen.size};
"""

# The field cell of largest |value|, and the canvas pixel where the page should have drawn it
# (x to the right, y upwards: row R-1-y), with the stated scale.
ORIENTATION_JS = """
const m = window.fieldbrainMonitor, c = document.getElementById('heatmap'), R = c.width;
let best = null;
for (let x = 0; x < R; x++) for (let y = 0; y < R; y++) {
  const v = m.fieldValue(x, y);
  if (best === null || Math.abs(v) > Math.abs(best.v)) best = {x, y, v};
}
const px = c.getContext('2d').getImageData(best.x, R - 1 - best.y, 1, 1).data;
return {x: best.x, y: best.y, v: best.v, rgb: [px[0], px[1], px[2]],
        legendMax: document.getElementById('legend-max').textContent,
        stats: document.getElementById('slice-stats').textContent};
"""

# {robot key: cycle} as the table shows it, read in one go (the table is redrawn 4x a second,
# so element handles would go stale between calls).
ROWS_JS = """
const out = {};
for (const tr of document.querySelectorAll('#robots tbody tr[data-robot]')) {
  if (tr.querySelector('.state').textContent !== 'refused') out[tr.dataset.robot] = Number(tr.dataset.cycle);
}
return out;
"""


def rows(driver):
    return driver.execute_script(ROWS_JS)


def points(driver):
    return driver.execute_script("return window.fieldbrainMonitor.motorPoints()")


def open_browser(url):
    options = webdriver.ChromeOptions()
    options.binary_location = "/usr/bin/chromium"
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                 "--window-size=1360,1100", "--hide-scrollbars"):
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
    driver.set_page_load_timeout(30)
    driver.get(url)
    assert "fieldbrain" in driver.title, driver.title
    return driver


def no_errors(driver):
    errors = [e for e in driver.get_log("browser") if e["level"] == "SEVERE"]
    assert not errors, f"the page logged errors: {errors}"


def check_orientation_and_scale(driver):
    o = driver.execute_script(ORIENTATION_JS)
    print("heat map extreme cell:", o)
    scale = float(o["legendMax"].lstrip("+"))
    assert f"colour scale ±" in o["stats"], o["stats"]
    assert abs(o["v"]) <= scale * (1 + 1e-6), f"|{o['v']}| beyond the stated scale ±{scale}"
    if abs(o["v"]) > 0.5 * scale:  # a strong cell: red if positive, blue if negative, there
        r, g, b = o["rgb"]
        assert (r > b) if o["v"] > 0 else (b > r), f"cell ({o['x']},{o['y']}) = {o['v']} drawn {o['rgb']}"


def open_fresh(stack, drivers, who):
    """Opens a browser and checks that the first robot table it got is of now: no cycle below
    what the monitor port said just before it opened."""
    before = stack.robot_cycles()
    driver = open_browser(stack.url)
    drivers.append(driver)
    # firstRobots() is null until the page's first robots message: keep polling (under load
    # the first poll can come before it).
    shown = wait_for(f"robots in {who}", lambda: (lambda r: r if r and len(r) == 2 else None)(
        driver.execute_script("return window.fieldbrainMonitor.firstRobots()")), 10)
    print(f"{who}: first table {shown}, monitor port just before: {before}")
    for key, cycle in shown.items():
        assert cycle >= before[key], f"{who}: {key}: stale cycle {cycle} < {before[key]}"
    return driver


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    stack = Stack(args.bin, args.out, resolution=8)
    drivers = []
    try:
        stack.start_robots(2)
        wait_for("two robots cycling", lambda: len(stack.robot_cycles()) == 2, 60)

        # 1. A first browser, looked at after a realistic wait.
        first_browser = open_browser(stack.url)
        drivers.append(first_browser)
        time.sleep(8.0)
        first = rows(first_browser)
        print("robots on the page after 8 s:", first)
        assert len(first) == 2, first
        time.sleep(2.0)
        second = rows(first_browser)
        print("two seconds later:", second)
        assert set(second) == set(first), (first, second)
        for key in first:
            assert second[key] > first[key], f"{key}: cycle did not grow ({first[key]} -> {second[key]})"
        n_first = points(first_browser)
        print("motor plot points:", n_first)
        assert n_first >= 20, n_first
        heat = wait_for("a non-uniform heat map", lambda: (lambda h: h if h["colours"] > 1 else None)(
            first_browser.execute_script(HEATMAP_COLOURS_JS)), 30)
        print(f"heat map: {heat['width']}x{heat['width']} pixels, {heat['colours']} colours")
        assert heat["width"] == 8, heat  # R = 8: one canvas pixel per field cell
        check_orientation_and_scale(first_browser)
        for axis in ("x", "y"):
            ticks = first_browser.execute_script(
                f"return [...document.querySelectorAll('#heat-{axis}-ticks span')].map(s => s.textContent)")
            assert ticks == ["0", "4", "7"], (axis, ticks)
        assert first_browser.find_element(By.ID, "t-brain-calls").text not in ("", "–")

        # Clicking the other robot's row plots that robot and maps its field.
        other = sorted(second)[1]
        first_browser.execute_script(
            "document.querySelector(`#robots tr[data-robot='${arguments[0]}']`).click()", other)
        wait_for(f"the plot and the map to switch to {other}", lambda: first_browser.find_element(
            By.ID, "plot-robot").text == other and first_browser.find_element(
            By.ID, "field-caption").text.startswith(other + " "), 15)
        wait_for("points of the other robot", lambda: points(first_browser) >= 5, 15)
        first_key = sorted(second)[0]
        first_browser.execute_script(
            "document.querySelector(`#robots tr[data-robot='${arguments[0]}']`).click()", first_key)
        no_errors(first_browser)
        time.sleep(1.0)
        first_browser.save_screenshot(os.path.join(args.out, "monitor.png"))

        # 2. A second browser opened later: current numbers and full plots at once.
        t0 = time.monotonic()
        later = open_fresh(stack, drivers, "the second browser")
        full = wait_for("the second browser's plot to start full", lambda: (
            lambda n: n if n >= min(100, n_first) else None)(points(later)), 3)
        print(f"second browser: {full} plot points {time.monotonic() - t0:.1f} s after opening")
        wait_for("the second browser's heat map", lambda: later.execute_script(
            "return window.fieldbrainMonitor.fieldShown()"), 10)
        check_orientation_and_scale(later)
        no_errors(later)
        later.save_screenshot(os.path.join(args.out, "monitor-second.png"))

        # 3. No browser for a while, then a new one: the first table is of now.
        for d in drivers:
            d.quit()
        drivers.clear()
        time.sleep(3.0)
        fresh = open_fresh(stack, drivers, "a browser after 3 s without one")

        # 4. The robots leave: the page says so.
        stack.stop_robots()
        text = wait_for("the empty table's text", lambda: fresh.execute_script(
            "return window.fieldbrainMonitor.emptyText()"), 15)
        print("after the robots left:", text)
        assert "left" in text and "yet" not in text, text
        no_errors(fresh)
        fresh.save_screenshot(os.path.join(args.out, "monitor-left.png"))
    finally:
        for d in drivers:
            d.quit()
        stack.close()
    print("browser test passed")


if __name__ == "__main__":
    sys.exit(main())
