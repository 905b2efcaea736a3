"""The web monitor in a real browser: fieldbrain-server and two simulated robots, the page in
headless Chromium (Debian's chromium + chromium-driver, driven by python3-selenium). Asserts,
from the rendered page, that both robots are listed with growing cycle counts, that the motor
plot has points and that the field heat map has non-uniform pixels; saves a screenshot.

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


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    stack = Stack(args.bin, args.out, resolution=8)
    driver = None
    try:
        stack.start_robots(2)
        options = webdriver.ChromeOptions()
        options.binary_location = "/usr/bin/chromium"
        for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                     "--window-size=1360,1100", "--hide-scrollbars"):
            options.add_argument(flag)
        options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
        driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
        driver.set_page_load_timeout(30)
        driver.get(stack.url)
        assert "fieldbrain" in driver.title, driver.title

        first = wait_for("two robots in the table", lambda: (lambda r: r if len(r) == 2 else None)(
            rows(driver)), 60)
        print("robots on the page:", first)
        time.sleep(2.0)
        second = rows(driver)
        print("two seconds later:", second)
        assert set(second) == set(first), (first, second)
        for key in first:
            assert second[key] > first[key], f"{key}: cycle did not grow ({first[key]} -> {second[key]})"

        points = wait_for("points in the motor plot", lambda: (lambda n: n if n >= 20 else None)(
            driver.execute_script("return window.fieldbrainMonitor.motorPoints()")), 30)
        print("motor plot points:", points)
        heat = wait_for("a non-uniform heat map", lambda: (lambda h: h if h["colours"] > 1 else None)(
            driver.execute_script(HEATMAP_COLOURS_JS)), 30)
        print(f"heat map: {heat['width']}x{heat['width']} pixels, {heat['colours']} colours")
        assert heat["width"] == 8, heat  # R = 8: one canvas pixel per field cell
        legend = driver.find_element(By.ID, "t-brain-calls").text
        assert legend not in ("", "–"), "server totals not shown"

        # Clicking the other robot's row plots that robot and maps its field.
        other = sorted(second)[1]
        driver.execute_script(
            "document.querySelector(`#robots tr[data-robot='${arguments[0]}']`).click()", other)
        wait_for(f"the plot and the map to switch to {other}", lambda: driver.find_element(
            By.ID, "plot-robot").text == other and driver.find_element(
            By.ID, "field-caption").text.startswith(other + " "), 15)
        wait_for("points of the other robot", lambda: driver.execute_script(
            "return window.fieldbrainMonitor.motorPoints()") >= 5, 15)
        first_key = sorted(second)[0]
        driver.execute_script(
            "document.querySelector(`#robots tr[data-robot='${arguments[0]}']`).click()", first_key)

        errors = [e for e in driver.get_log("browser") if e["level"] == "SEVERE"]
        assert not errors, f"the page logged errors: {errors}"

        time.sleep(2.5)  # let the plots fill again for the picture
        shot = os.path.join(args.out, "monitor.png")
        driver.save_screenshot(shot)
        print("screenshot:", shot)
    finally:
        if driver is not None:
            driver.quit()
        stack.close()
    print("browser test passed")


if __name__ == "__main__":
    sys.exit(main())
