"""Neo4j Browser in a real headless Chromium: the zero-setup local server applies our style and plays our guide.

The test starts its own local Neo4j (``kg-neo4j neo4j start`` with its own KG_NEO4J_HOME and free
ports): Browser reads ``browser.post_connect_cmd`` from the server it connects to, which needs the
setting in that server's neo4j.conf, and the shared test server must not be restarted.  It writes a
small memory through MCP tools, logs into the Browser, checks that the guide was played and the style
loaded on connect, runs the guide's first query from its slide, and checks node colours and
captions in the rendered SVG against ``memory.grass``.  Chromium and its driver are Debian's
``chromium`` and ``chromium-driver`` (``.ci/run`` installs them); nothing is downloaded.  Without
them, or if Chromium cannot start, the test fails saying so.

``KG_NEO4J_BROWSER_SCREENSHOT=FILE`` saves the screenshot to FILE too (docs/browser.png, the README's,
is it cropped to the graph).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from test_knowledge_tools import call as kcall

from kg_neo4j.browser import style_text
from kg_neo4j.localdb.process import port_open
from support.kg import ent, rel
from support.servers import KG, Neo4jInfo, free_port, server_env, stdio_session

TIMEOUT = 180  # seconds for Browser to connect and play the guide on a loaded 2-core machine


def grass_rules(text: str) -> dict[str, dict[str, str]]:
    """``selector -> {property: value}`` of a GraSS sheet (values unquoted)."""
    rules = {}
    for selector, body in re.findall(r"([\w.]+)\s*\{([^}]*)\}", text):
        props = dict(re.findall(r"([\w-]+):\s*([^;]+);", body))
        rules[selector] = {k: v.strip().strip("'\"") for k, v in props.items()}
    return rules


@pytest.fixture(scope="module")
def own_neo4j(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Neo4jInfo, dict[str, str]]]:
    home = tmp_path_factory.mktemp("browser-neo4j")
    bolt, http, guide = free_port(), free_port(), free_port()
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("NEO4J_", "KG_NEO4J_"))
        or k in ("KG_NEO4J_LOCAL_NEO4J_VERSION", "KG_NEO4J_LOCAL_NEO4J_JAVA")
    }
    env.update(
        KG_NEO4J_HOME=str(home),
        KG_NEO4J_LOCAL_BOLT_PORT=str(bolt),
        KG_NEO4J_LOCAL_HTTP_PORT=str(http),
        KG_NEO4J_LOCAL_GUIDE_PORT=str(guide),
        KG_NEO4J_LOCAL_HEAP="512m",
        KG_NEO4J_LOCAL_PAGECACHE="128m",
    )
    started = subprocess.run([KG, "neo4j", "start"], env=env, capture_output=True, text=True, timeout=600)
    try:
        assert started.returncode == 0, started.stderr
        assert f"Browser style and guide served at http://127.0.0.1:{guide}" in started.stderr
        password = json.loads((home / "neo4j" / "credentials.json").read_text())["password"]
        info = Neo4jInfo(f"bolt://127.0.0.1:{bolt}", "neo4j", password, "neo4j", "own")
        yield info, {"http": str(http), "guide": str(guide), "home": str(home)}
    finally:
        stopped = subprocess.run([KG, "neo4j", "stop"], env=env, capture_output=True, text=True, timeout=120)
        assert stopped.returncode == 0, stopped.stderr
        assert not port_open(guide) and not port_open(bolt)  # the endpoint stops with the server


def chromium() -> Any:
    """Headless Debian Chromium through its own chromedriver; a failure says what is missing."""
    binary, driver = shutil.which("chromium"), shutil.which("chromedriver")
    if binary is None or driver is None:
        pytest.fail(
            "Debian's chromium and chromium-driver are needed (apt-get install chromium chromium-driver; "
            f".ci/run installs them): chromium={binary}, chromedriver={driver}"
        )
    from selenium import webdriver
    from selenium.common.exceptions import WebDriverException
    from selenium.webdriver.chrome.service import Service

    os.environ["SE_OFFLINE"] = "true"  # Selenium Manager must never fetch a browser or driver
    options = webdriver.ChromeOptions()
    options.binary_location = binary
    for arg in (
        "--headless=new",
        "--no-sandbox",
        "--disable-dev-shm-usage",
        "--disable-gpu",
        "--window-size=1400,1100",
    ):
        options.add_argument(arg)
    try:
        return webdriver.Chrome(service=Service(driver), options=options)
    except WebDriverException as exc:
        pytest.fail(f"headless Chromium ({binary}) did not start through {driver}: {exc.msg}")


async def write_memory(info: Neo4jInfo) -> None:
    env = server_env(info)
    async with stdio_session(info, "--tools", "all", "--namespace", "default", env=env) as s:
        await s.call_tool(
            "create_entities",
            {
                "entities": [
                    ent("Alice", "person", ["works on the search team"]),
                    ent("Bob", "person"),
                    ent("Acme", "organization", ["builds rockets"]),
                    ent("Rocket", "project"),
                ]
            },
        )
        await s.call_tool(
            "create_relations",
            {
                "relations": [
                    rel("Alice", "Acme", "works_at"),
                    rel("Bob", "Acme", "works_at"),
                    rel("Bob", "Alice", "manages"),
                    rel("Alice", "Rocket", "works_on"),
                ]
            },
        )
        await kcall(
            s,
            "store_knowledge",
            {
                "name": "Ship Mondays",
                "content": "Ship releases on Mondays",
                "type": "rule",
                "trust": "principle",
                "quote": "We ship on Mondays.",
                "category": "creative",
            },
        )
        await s.call_tool("create_relations", {"relations": [rel("Ship Mondays", "Rocket", "aligns_to")]})


def frame_commands(d: Any) -> list[str]:
    from selenium.webdriver.common.by import By

    return [
        (e.get_attribute("textContent") or "").strip()
        for e in d.find_elements(By.CSS_SELECTOR, '[data-testid="frameCommand"]')
    ]


def frame_for(d: Any, command: str) -> Any:
    from selenium.webdriver.common.by import By

    for frame in d.find_elements(By.CSS_SELECTOR, '[data-testid="frame"]'):
        heads = frame.find_elements(By.CSS_SELECTOR, '[data-testid="frameCommand"]')
        if heads and (heads[0].get_attribute("textContent") or "").strip() == command:
            return frame
    raise AssertionError(f"no frame of {command!r} among {frame_commands(d)}")


def click(wait: Any, find: Callable[[], Any]) -> None:
    """Click what ``find`` returns once nothing lies over it: the Browser's forms and frames animate in,
    and a click that lands while another element still covers the target (or while the target is not
    yet interactable: seen on a guide block's play icon in CI) is refused, so it is tried again until
    the wait's timeout."""
    from selenium.common.exceptions import (
        ElementClickInterceptedException,
        ElementNotInteractableException,
        StaleElementReferenceException,
    )

    def attempt(_: Any) -> bool:
        try:
            find().click()
        except (
            ElementClickInterceptedException,
            ElementNotInteractableException,
            StaleElementReferenceException,
        ):
            return False
        return True

    wait.until(attempt)


def play(d: Any, wait: Any, query: str, command: str) -> None:
    """Run a guide's code block by its play icon, and wait for its frame.  A frame sliding in above
    can move the icon between Selenium finding it and the click landing: the click then lands on the
    block's text, which only copies the command into the editor (seen on 5.26 in CI).  So the click is
    tried again, at most three times, until the frame is there (:param is idempotent)."""
    from selenium.common.exceptions import TimeoutException
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    for _ in range(3):
        click(wait, lambda: d.find_element(By.CSS_SELECTOR, f'pre[data-query="{query}"] i'))
        try:
            WebDriverWait(d, 20).until(lambda drv: command in frame_commands(drv))
            return
        except TimeoutException:
            continue
    pytest.fail(f"{command!r} did not run after three clicks on its play icon; frames {frame_commands(d)}")


async def test_browser_shows_the_memory_in_our_style(
    own_neo4j: tuple[Neo4jInfo, dict[str, str]], tmp_path: Path
) -> None:
    from selenium.common.exceptions import TimeoutException
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as ec
    from selenium.webdriver.support.ui import WebDriverWait

    info, ports = own_neo4j
    await write_memory(info)
    rules = grass_rules(style_text())
    guide = f"http://127.0.0.1:{ports['guide']}"
    d = chromium()
    try:
        bolt_port = info.uri.rsplit(":", 1)[1]
        d.get(f"http://127.0.0.1:{ports['http']}/browser/?dbms=bolt://neo4j@127.0.0.1:{bolt_port}")
        wait = WebDriverWait(d, TIMEOUT)
        password = wait.until(ec.presence_of_element_located((By.CSS_SELECTOR, '[data-testid="password"]')))
        password.send_keys(info.password)
        # on connect: the style is loaded and the guide played (browser.post_connect_cmd).  A click that
        # lands while the form is still being wired up does nothing (seen locally: the form stayed,
        # filled in, for 180 s): while the form is still there, click Connect again.
        guide_shown = ec.presence_of_element_located((By.CSS_SELECTOR, 'pre[data-query="param_ns"] i'))
        try:
            for _ in range(3):
                click(wait, lambda: d.find_element(By.CSS_SELECTOR, '[data-testid="connect"]'))
                try:
                    WebDriverWait(d, TIMEOUT / 3).until(guide_shown)
                    break
                except TimeoutException:
                    if not d.find_elements(By.CSS_SELECTOR, '[data-testid="connect"]'):
                        raise  # connected, but the guide never came: no retry can help
            wait.until(guide_shown)
        except TimeoutException:
            # what Browser showed instead (a connection error, a frame that never ran) names the cause
            shot = tmp_path / "browser-timeout.png"
            d.save_screenshot(str(shot))
            pytest.fail(
                f"the guide was not played within {TIMEOUT} s; frames {frame_commands(d)}; "
                f"page text: {d.find_element(By.TAG_NAME, 'body').text[:1500]!r}; screenshot {shot}"
            )
        commands = frame_commands(d)
        assert f":style {guide}/memory.grass" in commands and f":play {guide}/guide.html" in commands, (
            commands
        )
        style_frame = frame_for(d, f":style {guide}/memory.grass")
        shown = style_frame.get_attribute("textContent") or ""
        assert "node.person" in shown and "Could not" not in shown, shown[:500]

        # the first slide sets the parameters, the second runs the whole memory
        for name, command in (
            ("param_ns", ":param ns => 'default'"),
            ("param_name", ":param name => 'Alice'"),
        ):
            play(d, wait, name, command)
        guide_frame = frame_for(d, f":play {guide}/guide.html")
        click(wait, lambda: guide_frame.find_element(By.CSS_SELECTOR, "button.next-slide"))
        click(wait, lambda: d.find_element(By.CSS_SELECTOR, 'pre[data-query="guide_whole_memory"] i'))
        wait.until(lambda drv: len(drv.find_elements(By.CSS_SELECTOR, "svg.neod3viz g.node")) == 5)
        time.sleep(3)  # let the force layout settle for the screenshot

        nodes = {}
        for g in d.find_elements(By.CSS_SELECTOR, "svg.neod3viz g.node"):
            caption = " ".join(
                t.text.strip() for t in g.find_elements(By.CSS_SELECTOR, "text.caption")
            ).strip()
            circle = g.find_element(By.CSS_SELECTOR, "circle.b-outline")
            nodes[caption] = (circle.get_attribute("fill").upper(), circle.get_attribute("stroke").upper())
        want = {
            "Alice": "node.person",
            "Bob": "node.person",
            "Acme": "node.organization",
            "Rocket": "node.project",
            "Ship Mondays": "node.TrustPrinciple",
        }
        assert set(nodes) == set(want), nodes  # captions: the entity names
        for name, selector in want.items():
            rule = rules[selector]
            assert nodes[name] == (rule["color"].upper(), rule["border-color"].upper()), (
                name,
                nodes[name],
                rule,
            )
        assert len({nodes[n][0] for n in want}) == 4  # person, organization, project, principle: four colours
        rel_captions = [
            t.text.strip() for t in d.find_elements(By.CSS_SELECTOR, "svg.neod3viz g.relationship text")
        ]
        assert rel_captions.count("works_at 1.0") == 2 and "manages 1.0" in rel_captions, rel_captions
        assert any(c.startswith("aligns_to ") for c in rel_captions), rel_captions
    finally:
        shot = tmp_path / "browser.png"
        d.save_screenshot(str(shot))
        print(f"screenshot: {shot}")
        if os.environ.get("KG_NEO4J_BROWSER_SCREENSHOT"):
            shutil.copyfile(shot, os.environ["KG_NEO4J_BROWSER_SCREENSHOT"])
        d.quit()
