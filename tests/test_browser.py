"""Every app in a real browser: Debian's chromium driven by Selenium through Debian's chromedriver (never a
downloaded browser), headless, on localhost, one browser session for all. Each app is loaded, its example is
submitted and the result read from the page, a file is uploaded, and a screenshot is saved under the test's
temporary folder (``screenshots/``); the report is rendered once and screenshotted too. The ARIA widget
scores with the test suite's tiny backbones (its offline backbones are exercised by test_aria_app.py). Every
figure of a report is screenshotted on its own and checked from the page: no text element's box (its SVG
bounding box, rotated as drawn) overlaps another's in the figure, and none falls outside the figure."""

import importlib.util
import json
import os
import re
import shutil
from pathlib import Path

import numpy as np
import pytest

CHROMIUM, CHROMEDRIVER = "/usr/bin/chromium", "/usr/bin/chromedriver"
ROOT = Path(__file__).resolve().parents[1]
FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--window-size=1400,1800",
)

pytestmark = pytest.mark.skipif(
    not (Path(CHROMIUM).is_file() and Path(CHROMEDRIVER).is_file()),
    reason="needs Debian's chromium and chromium-driver (install.sh)",
)


@pytest.fixture(scope="module")
def browser():
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in FLAGS:
        options.add_argument(flag)
    driver = webdriver.Chrome(options=options, service=Service(CHROMEDRIVER))
    driver.set_page_load_timeout(60)
    yield driver
    driver.quit()


@pytest.fixture(scope="module")
def shots(tmp_path_factory):
    return tmp_path_factory.mktemp("screenshots")


# Each figure's <svg> box and its text elements' getBBox corners in page coordinates (a rotated tick label
# is a rotated rectangle, not its axis-aligned hull).
FIGURE_TEXT_BOXES = """
return Array.from(document.querySelectorAll('figure')).map(f => {
  const svg = f.querySelector('svg'), box = svg.getBoundingClientRect();
  const texts = Array.from(svg.querySelectorAll('text')).filter(t => t.textContent.trim()).map(t => {
    const b = t.getBBox(), m = t.getScreenCTM();
    const corners = [[b.x, b.y], [b.x + b.width, b.y], [b.x + b.width, b.y + b.height], [b.x, b.y + b.height]]
      .map(([x, y]) => [m.a * x + m.c * y + m.e, m.b * x + m.d * y + m.f]);
    return {text: t.textContent, corners: corners};
  });
  return {id: f.id, box: [box.left, box.top, box.right, box.bottom], texts: texts};
});
"""
TOLERANCE_PX = 1.0  # a touch (a line's box against the next line's) is not an overlap


def _penetration(a, b) -> float:
    """How deep two convex quadrilaterals overlap (separating axis theorem; <= 0: apart)."""
    depth = float("inf")
    for poly in (a, b):
        for (x0, y0), (x1, y1) in zip(poly, poly[1:] + poly[:1]):
            axis = (y0 - y1, x1 - x0)
            norm = (axis[0] ** 2 + axis[1] ** 2) ** 0.5 or 1.0
            pa = [(x * axis[0] + y * axis[1]) / norm for x, y in a]
            pb = [(x * axis[0] + y * axis[1]) / norm for x, y in b]
            depth = min(depth, min(max(pa), max(pb)) - max(min(pa), min(pb)))
    return depth


def figure_text_problems(driver) -> list[str]:
    """Every overlap of two text boxes within a figure and every text box outside its figure, as lines."""
    problems = []
    for figure in driver.execute_script(FIGURE_TEXT_BOXES):
        left, top, right, bottom = figure["box"]
        texts = figure["texts"]
        for t in texts:
            if any(
                x < left - TOLERANCE_PX
                or x > right + TOLERANCE_PX
                or y < top - TOLERANCE_PX
                or y > bottom + TOLERANCE_PX
                for x, y in t["corners"]
            ):
                problems.append(f"{figure['id']}: {t['text']!r} falls outside the figure")
        for i, a in enumerate(texts):
            for b in texts[i + 1 :]:
                if _penetration(a["corners"], b["corners"]) > TOLERANCE_PX:
                    problems.append(f"{figure['id']}: {a['text']!r} overlaps {b['text']!r}")
    return problems


def figure_shots(driver, folder: Path, prefix: str) -> list[Path]:
    """A screenshot of each figure of the page open in ``driver`` (the window made tall enough for all)."""
    from selenium.webdriver.common.by import By

    height = driver.execute_script("return document.body.scrollHeight")
    driver.set_window_size(1400, min(max(height, 900), 16000))
    paths = []
    for figure in driver.find_elements(By.TAG_NAME, "figure"):
        path = folder / f"{prefix}-{figure.get_attribute('id')}.png"
        assert figure.screenshot(str(path)) and path.stat().st_size > 5_000
        paths.append(path)
    return paths


def load_app(folder: str):
    spec = importlib.util.spec_from_file_location(f"app_{Path(folder).name}", ROOT / folder / "app.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class Page:
    """One app served on localhost and opened in the browser."""

    def __init__(self, driver, demo=None, url=None):
        os.environ["GRADIO_ANALYTICS_ENABLED"] = "False"
        self.driver, self.demo = driver, demo
        if demo is not None:
            demo.launch(server_name="127.0.0.1", prevent_thread_lock=True, quiet=True)
            url = demo.local_url
        driver.get(url)

    def text(self) -> str:
        from selenium.webdriver.common.by import By

        return self.driver.find_element(By.TAG_NAME, "body").text

    def wait_for(self, *needles: str, timeout: float = 60) -> str:
        """The page's text once every needle is on it (whitespace ignored: a JSON view puts each token on a line)."""
        from selenium.webdriver.support.ui import WebDriverWait

        compact = [re.sub(r"\s+", "", n) for n in needles]
        WebDriverWait(self.driver, timeout).until(
            lambda d: all(n in re.sub(r"\s+", "", self.text()) for n in compact), f"{needles} not on the page"
        )
        return self.text()

    def wait(self, condition, what: str, timeout: float = 60) -> None:
        from selenium.webdriver.support.ui import WebDriverWait

        WebDriverWait(self.driver, timeout).until(lambda d: condition(), what)

    def click(self, label: str, n: int = 0, role: str = "") -> None:
        from selenium.webdriver.common.by import By

        having = f"@role='{role}' and " if role else ""

        def shown():
            return [
                b
                for b in self.driver.find_elements(By.XPATH, f"//button[{having}normalize-space()='{label}']")
                if b.is_displayed()
            ]

        self.wait(lambda: len(shown()) > n, f"a {label!r} button")
        self.driver.execute_script("arguments[0].click()", shown()[n])  # no overlay can take the click

    def upload(self, path: Path, accepts: str) -> None:
        """Into the first file input whose accepted types name ``accepts`` (tables have .csv inputs of their own)."""
        from selenium.webdriver.common.by import By

        def inputs():
            return [
                e
                for e in self.driver.find_elements(By.CSS_SELECTOR, "input[type=file]")
                if accepts in (e.get_attribute("accept") or "")
            ]

        self.wait(lambda: inputs(), f"a file input accepting {accepts}")
        inputs()[0].send_keys(str(path))

    def textarea(self, n: int = 0) -> str:
        from selenium.webdriver.common.by import By

        return self.driver.find_elements(By.TAG_NAME, "textarea")[n].get_attribute("value")

    def clear_textarea(self, n: int = 0) -> None:
        from selenium.webdriver.common.by import By
        from selenium.webdriver.common.keys import Keys

        box = self.driver.find_elements(By.TAG_NAME, "textarea")[n]
        box.send_keys(Keys.CONTROL, "a")
        box.send_keys(Keys.DELETE)

    def shot(self, folder: Path, name: str) -> Path:
        path = folder / f"{name}.png"
        height = self.driver.execute_script("return document.body.scrollHeight")
        self.driver.set_window_size(1400, min(max(height, 900), 4000))
        assert self.driver.save_screenshot(str(path)) and path.stat().st_size > 10_000
        return path

    def close(self) -> None:
        if self.demo is not None:
            self.demo.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def _wav(path: Path, seconds: float = 2.0, rate: int = 16000) -> Path:
    import soundfile as sf

    t = np.arange(int(seconds * rate)) / rate
    sf.write(path, 0.3 * np.sin(2 * np.pi * 440 * t), rate)
    return path


def test_text_box_widgets(browser, shots, tmp_path):
    cases = [  # (folder, text on the page once its example is scored)
        ("metrics/anchor_chain", '"chain": 0.5'),
        ("metrics/audiospan_rubric", '"rubric"'),
        ("metrics/mmar_rubrics", "0.3667"),
    ]
    for folder, scored in cases:
        app = load_app(folder)
        with Page(browser, app.build_demo()) as page:
            page.wait_for("Score")
            example = page.textarea()
            assert example.strip(), f"{folder} opens with an empty input"
            page.click("Score")
            page.wait_for(scored)
            # An upload fills the box; an empty box is a readable error, not a red badge.
            upload = tmp_path / f"{Path(folder).name}.jsonl"
            upload.write_text(example.splitlines()[0] + "\n")
            page.upload(upload, ".jsonl")
            page.wait(lambda: page.textarea() == example.splitlines()[0] + "\n", "the upload fills the box")
            page.shot(shots, Path(folder).name)
            page.clear_textarea()
            page.click("Score")
            page.wait_for("Paste at least one")


def test_text_prior_widget_scores_and_cuts_an_upload(browser, shots, tmp_path):
    app = load_app("metrics/text_prior_decomposition")
    with Page(browser, app.build_demo()) as page:
        page.click("Score")
        page.wait_for("TS", "R_")
        page.shot(shots, "text_prior_scores")
        page.click("Fragments", role="tab")
        page.upload(_wav(tmp_path / "tone.wav"), "audio/")
        page.click("Cut")
        page.wait_for("frag:2:0", "frag:5:4")
        page.shot(shots, "text_prior_fragments")


def test_aria_widget(browser, shots, tmp_path, tiny_backbones):
    app = load_app("metrics/aria")
    real = app.AriaScorer
    app.AriaScorer = lambda backbones, m3_mode: real(backbones=tiny_backbones, m3_mode=m3_mode)
    with Page(browser, app.build_demo()) as page:
        page.upload(_wav(tmp_path / "dog.wav"), "audio/")
        page.wait(lambda: "0:02" in page.text(), "the uploaded 2 s clip in the player")
        page.click("Score")
        text = page.wait_for('"M2"', '"aria_metrics"')
        assert '"M1":null' not in re.sub(r"\s+", "", text)  # M1 scored the uploaded audio
        page.shot(shots, "aria")


def _choose(page, label: str, option: str) -> None:
    """Pick ``option`` in the Gradio dropdown labelled ``label`` (type it, then click the listed option)."""
    from selenium.webdriver.common.by import By

    box = page.driver.find_element(By.CSS_SELECTOR, f"input[aria-label='{label}']")
    box.click()
    box.clear()
    box.send_keys(option)

    def listed():
        return [
            o
            for o in page.driver.find_elements(By.CSS_SELECTOR, "[role=option]")
            if o.is_displayed() and o.text.strip() == option
        ]

    page.wait(lambda: listed(), f"{option!r} listed under {label!r}")
    listed()[0].click()


def _header_heights(page) -> list:
    return page.driver.execute_script(
        "return Array.from(document.querySelectorAll('table th')).filter(t => t.offsetParent)"
        ".map(t => t.getBoundingClientRect().height)"
    )


def test_explorer_compares_two_runs_side_by_side(browser, shots, tmp_path):
    from fixtures.explorer_pair import write_pair

    a, b = write_pair(tmp_path / "runs")
    app = load_app("spaces/explorer")
    with Page(browser, app.build_demo([str(a), str(b)])) as page:
        # The leaderboard: each headline with its interval (none recorded for model-b), and the legend.
        text = page.wait_for(
            "Leaderboard",
            "0.6667 [0.2077, 0.9385] (official MMAR/MMAU scorer)",
            "0.6667 (official MMAR/MMAU scorer)",
            "[lo, hi]",
        )
        assert "Answer per rule" in text and "Rubric verdicts" in text and "model-a names it" in text
        assert '["model-a"' not in text  # items are named by id, model and condition, not by the record's key
        heights = _header_heights(page)
        assert heights and max(heights) < 60, f"table headers {max(heights)} px high"  # one line each
        # The raw JSON is behind a closed accordion.
        assert "output record (outputs.jsonl)" not in re.sub(r"\s+", " ", text)
        page.shot(shots, "explorer")
        _choose(page, "Second run, side by side", "model-b")
        page.wait_for("second run: correct", "Audio (second run)")
        page.wait(lambda: "Choose a second run" not in page.text(), "the second run's column")
        page.wait_for("(B) cat meowing")  # model-b's reply on q1 beside model-a's
        from selenium.webdriver.common.by import By

        radio = browser.find_element(By.XPATH, '//label[normalize-space()="disagree on the benchmark\'s rule"]')
        browser.execute_script("arguments[0].click()", radio)
        # q2 (category Counting) agrees on the official scorer: only q1 and q3 are listed, with what differs.
        page.wait(
            lambda: "Counting" not in page.text() and "official scorer, aria" in page.text(), "only q1 and q3 listed"
        )
        page.shot(shots, "explorer_side_by_side")
        accordion = browser.find_element(By.XPATH, "//*[contains(@class, 'label-wrap')][contains(., 'Raw JSON')]")
        browser.execute_script("arguments[0].click()", accordion)
        page.wait_for("output record (outputs.jsonl)")
        page.shot(shots, "explorer_raw")
        # An upload adds a run.
        results = tmp_path / "results.json"
        shutil.copyfile(a / "results.json", results)
        page.upload(results, ".json")
        page.click("Open")
        page.wait_for("uploaded-run")


def test_report_app_and_the_report_page(browser, shots, demo_session, tmp_path):
    from audioreason.report import build_report
    from audioreason.scorers.anchor_chain.scorer import demo_items, score_anchor_chain

    run = demo_session[0] / "cascade-run"
    app = load_app("spaces/report")
    with Page(browser, app.build_demo([str(run)])) as page:
        text = page.wait_for("ARIA-Rubrics profile M1-M6", "4 figures")
        assert "Anchor Chain ladder" not in text
        # A scorer's own output (anchor_chain's compute with its per-chain outcomes) adds its own section.
        anchor, replies, _, _ = demo_items()
        upload = tmp_path / "anchor_chain_output.json"
        upload.write_text(json.dumps(score_anchor_chain(anchor, replies, return_items=True)))
        page.upload(upload, ".json")
        page.click("Report on the uploaded files")
        page.wait_for("Anchor Chain ladder and per-link accuracy", "uniform guess (4 options)")
        page.shot(shots, "report_app")
    out = tmp_path / "report.html"
    build_report([run], out)
    page = Page(browser, url=out.as_uri())
    page.wait_for("Accuracy", "MMAR-Rubrics per modality and category")
    page.shot(shots, "report")
    assert len(figure_shots(browser, shots, "demo")) == 4
    assert figure_text_problems(browser) == []


def test_report_figures_of_many_sets_are_readable(browser, shots, tmp_path):
    """16 sets (8 models with long names x 2 conditions) in every figure: no text overlaps, none is cut."""
    from report_sets import write_many_sets_run

    from audioreason.report import build_report

    out = tmp_path / "report.html"
    summary = build_report([write_many_sets_run(tmp_path / "run")], out)
    assert summary["figures"] == [
        "accuracy",
        "aria_radar",
        "aria_modes",
        "retention",
        "decomposition",
        "anchor_chain",
        "audiospan_rubric",
        "mmar_rubrics",
        "correlations",
    ]
    page = Page(browser, url=out.as_uri())
    page.wait_for("Accuracy", "MMAR-Rubrics per modality and category")
    assert sorted(p.name for p in figure_shots(browser, shots, "many-sets")) == sorted(
        f"many-sets-figure-{key}.png" for key in summary["figures"]
    )
    assert figure_text_problems(browser) == []
