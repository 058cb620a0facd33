"""The HTML report in a real browser: headless Chromium (Debian's `chromium`, which scripts/test.sh installs) renders
report.html, and the tests read the DOM it rendered: the grid's cells, links that resolve, sections that open when
a link leads into them or their summary is clicked, plots with ticks, program text that stays text."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import pytest
from show_support import COMMITTED, HOSTILE, REPO, fresh_bench_run

BROWSER = next(filter(None, map(shutil.which, ("chromium", "chromium-browser", "google-chrome"))), None)
pytestmark = pytest.mark.skipif(BROWSER is None, reason="no Chromium (scripts/test.sh installs Debian's chromium)")


class Dom(HTMLParser):
    """The rendered DOM as elements: (tag, attributes, the text inside), and the ids."""

    def __init__(self, text: str):
        super().__init__()
        self.elements: list[tuple[str, dict[str, str], list[str]]] = []
        self.open: list[int] = []
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        self.elements.append((tag, {k: v or "" for k, v in attrs}, []))
        if tag not in ("br", "img", "meta", "link", "input", "hr", "line", "rect", "circle"):
            self.open.append(len(self.elements) - 1)

    def handle_endtag(self, tag):
        while self.open and self.elements[self.open.pop()][0] != tag:
            pass

    def handle_data(self, data):
        for index in self.open:
            self.elements[index][2].append(data)

    def find(self, tag: str, css: str = "") -> list[tuple[dict[str, str], str]]:
        return [(attrs, "".join(text)) for name, attrs, text in self.elements
                if name == tag and (not css or css in attrs.get("class", "").split())]

    def ids(self) -> set[str]:
        return {attrs["id"] for _, attrs, _ in self.elements if "id" in attrs}


def render(page: Path, fragment: str = "") -> Dom:
    """The DOM Chromium builds for `page` (opened at `#fragment` when given), after it ran and laid out."""
    done = subprocess.run([BROWSER, "--headless", "--no-sandbox", "--disable-gpu", "--dump-dom",
                           page.as_uri() + (f"#{fragment}" if fragment else "")],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and "<body" in done.stdout, done.stderr[-2000:]
    return Dom(done.stdout)


def report(run_dir: Path, target: Path) -> Path:
    done = subprocess.run([sys.executable, "-m", "solidcoder", "report", str(run_dir), "--html", str(target)],
                          capture_output=True, text=True, timeout=120, cwd=REPO)
    assert done.returncode == 0, done.stderr
    return target


@pytest.fixture(scope="module")
def committed(tmp_path_factory) -> Path:
    return report(COMMITTED, tmp_path_factory.mktemp("report") / "report.html")


@pytest.fixture(scope="module")
def fresh(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("fresh")
    return report(fresh_bench_run(folder / "run"), folder / "report.html")


def grid_links(dom: Dom) -> dict[str, str]:
    """Each grid cell's link target, by the cell's verdict and position."""
    cells = [(attrs, text) for attrs, text in dom.find("td") if attrs.get("class") in ("pass", "fail", "none")]
    links = [attrs["href"] for attrs, _ in dom.find("a") if attrs.get("href", "").startswith("#p-")]
    assert len(cells) == len(links)
    return {f"{i}:{text}": href[1:] for i, ((_, text), href) in enumerate(zip(cells, links, strict=True))}


def test_the_grid_has_a_cell_per_problem_and_configuration_each_linking_to_a_view_that_exists(committed):
    dom = render(committed)
    rows = [text for attrs, text in dom.find("td", "problem")]
    assert len(rows) == 40 and rows[0] == "HumanEval/0" and rows[-1] == "HumanEval/39"
    links = grid_links(dom)
    assert len(links) == 80 and sum(key.endswith(":pass") for key in links) == 33 + 35  # 82.5 % and 87.5 % of 40
    assert set(links.values()) <= dom.ids()
    assert {attrs["id"] for attrs, _ in dom.find("section", "problem")} == set(links.values())
    assert dom.find("script") == []  # the report itself runs nothing


def test_following_a_cells_link_opens_the_section_it_leads_into(committed):
    target = grid_links(render(committed))["0:pass"]  # HumanEval/0 under the first configuration
    dom = render(committed, f"{target}-program")
    finals = [attrs for attrs, _ in dom.find("details", "final")]
    assert len(finals) == 80 and sum("open" in attrs for attrs in finals) == 1
    program = next(text for attrs, text in dom.find("pre") if attrs.get("id") == f"{target}-program")
    assert "def has_close_elements" in program


def test_clicking_a_summary_expands_its_section_and_lays_out_its_content(committed, tmp_path):
    probe = ("<script>const d = document.querySelector('section.problem details.phase');"
             "const before = d.open; d.querySelector('summary').click();"
             "const call = d.querySelector('details.call');"
             "document.body.dataset.before = before; document.body.dataset.after = d.open;"
             "document.body.dataset.height = call.getBoundingClientRect().height;</script>")
    page = tmp_path / "clicked.html"
    page.write_text(committed.read_text(encoding="utf-8").replace("</body>", probe + "</body>"), encoding="utf-8")
    body = next(attrs for attrs, _ in render(page).find("body"))
    assert body["data-before"] == "false" and body["data-after"] == "true" and float(body["data-height"]) > 0


def test_nested_sections_are_indented_under_their_summaries(committed, tmp_path):
    """A phase's calls sit right of the phase's summary, and a call's reply right of the call's summary."""
    probe = ("<script>const phase = document.querySelector('section.problem details.phase'); phase.open = true;"
             "const call = phase.querySelector('details.call'); call.open = true;"
             "const left = e => String(e.getBoundingClientRect().left); const data = document.body.dataset;"
             "data.phase = left(phase.querySelector('summary')); data.call = left(call.querySelector('summary'));"
             "data.reply = left(call.querySelector('pre'));</script>")
    page = tmp_path / "indented.html"
    page.write_text(committed.read_text(encoding="utf-8").replace("</body>", probe + "</body>"), encoding="utf-8")
    body = next(attrs for attrs, _ in render(page).find("body"))
    assert float(body["data-phase"]) + 8 < float(body["data-call"]) < float(body["data-reply"]) - 8


def test_bar_labels_show_one_decimal(committed):
    labels = [text for attrs, text in render(committed).find("text") if re.fullmatch(r"[0-9.]+", text)]
    assert "82.5" in labels and "87.5" in labels  # 33 and 35 of 40, not rounded to 82 and 88


def test_plots_have_ticks_on_every_axis_and_legends_outside_the_drawing(committed):
    dom = render(committed)
    texts = [text for attrs, text in dom.find("text")]
    assert texts.count("100") == 2 and texts.count("0") == 2  # the pass@1 axis of both plots
    assert "humaneval" in texts and len([t for t in texts if re.fullmatch(r"[0-9],[0-9]{3}", t)]) >= 3
    assert [text for attrs, text in dom.find("li") if "solidcoder-routed" in text][:2] == [
        "solidcoder-routed (qwen2.5-coder-0.5b-instruct-q4_k_m.gguf)",
        "solidcoder-routed:oracle=shared (qwen2.5-coder-0.5b-instruct-q4_k_m.gguf)"]


def test_a_fresh_runs_problem_view_renders_its_executions_and_keeps_program_text_as_text(fresh):
    dom = render(fresh)
    target = grid_links(dom)["0:fail"]  # HumanEval/0, answered wrongly
    section = render(fresh, f"{target}-program")
    failures = [text for attrs, text in section.find("div", "failure")]
    assert any("has_close_elements([1.0, 2.0, 3.0], 0.5)" in text for text in failures)
    assert len(section.find("details", "execution")) >= 4 and section.find("script") == []
    assert any(HOSTILE in text for attrs, text in section.find("pre") if attrs.get("id") == f"{target}-program")
    assert next(text for attrs, text in section.find("title")) == "solidcoder report"


def test_a_screenshot_of_the_report_is_a_picture(committed, tmp_path):
    shot = tmp_path / "report.png"
    done = subprocess.run([BROWSER, "--headless", "--no-sandbox", "--disable-gpu", f"--screenshot={shot}",
                           "--window-size=1000,1400", committed.as_uri()], capture_output=True, timeout=120)
    assert done.returncode == 0 and shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and shot.stat().st_size > 20_000
