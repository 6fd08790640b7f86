"""`/ui` in a real headless Chromium (Debian's `chromium` + `chromium-driver`, driven by Selenium)
against a real `nfvplace serve` on 127.0.0.1: sign in through the form, check the DOM of every page,
and keep screenshots (in the test's tmp dir and under `test-output/`, which git ignores)."""

from __future__ import annotations

import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from selenium import webdriver
from selenium.common.exceptions import WebDriverException
from selenium.webdriver.chrome.service import Service as DriverService
from selenium.webdriver.common.by import By
from selenium.webdriver.remote.webelement import WebElement
from selenium.webdriver.support.ui import WebDriverWait
from service_support import TOKENS, Server, auth
from ui_support import ROOT, du_document, du_yaml, host_documents

pytestmark = pytest.mark.slow  # real servers and processes: not in the quick subset

OUTPUT = ROOT / "test-output"


def _binary(*names: str) -> str:
    for name in names:
        found = shutil.which(name)
        if found:
            return found
    pytest.fail(
        f"{names[0]} not found: scripts/setup.sh installs Debian's chromium and chromium-driver"
    )


@pytest.fixture
def browser(tmp_path: Path) -> Iterator[webdriver.Chrome]:
    options = webdriver.ChromeOptions()
    options.binary_location = _binary("chromium", "chromium-browser")
    for flag in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu"):
        options.add_argument(flag)
    options.add_argument("--window-size=1500,1100")
    options.add_argument(f"--user-data-dir={tmp_path / 'profile'}")
    driver = webdriver.Chrome(options=options, service=DriverService(_binary("chromedriver")))
    driver.set_page_load_timeout(60)
    try:
        yield driver
    finally:
        driver.quit()


@pytest.fixture
def server(serve: Callable[..., Server], sqlite_url: str) -> tuple[Server, dict[str, Any]]:
    running = serve(sqlite_url)
    with httpx.Client(base_url=running.url, timeout=60) as http:
        for doc in host_documents():
            assert http.put(
                f"/v1/hosts/{doc['id']}", json=doc, headers=auth("host-agent")
            ).is_success
        answer = http.post("/v1/placements", json={"vm": du_document()}, headers=auth("placer"))
        assert answer.status_code == 201, answer.text
    return running, answer.json()


def _follow(browser: webdriver.Chrome, element: WebElement) -> None:
    """Click something that loads a page, and wait for the new page: a click returns before the
    browser has navigated, so reading the URL or the DOM at once may still see the old page."""
    old = browser.find_element(By.TAG_NAME, "html")
    element.click()

    def new_page_loaded(driver: webdriver.Chrome) -> bool:
        try:
            old.is_enabled()  # the old page's root: still there means not navigated yet
            return False
        except WebDriverException:  # stale (Chromium also says "does not belong to the document")
            return bool(driver.execute_script("return document.readyState") == "complete")

    WebDriverWait(browser, 60).until(new_page_loaded)


def _shot(driver: webdriver.Chrome, tmp_path: Path, name: str) -> Path:
    path = tmp_path / f"ui-{name}.png"
    assert driver.save_screenshot(str(path))
    OUTPUT.mkdir(exist_ok=True)
    shutil.copy(path, OUTPUT / path.name)
    assert path.read_bytes().startswith(b"\x89PNG")
    return path


def test_sign_in_and_browse(
    browser: webdriver.Chrome, server: tuple[Server, dict[str, Any]], tmp_path: Path
) -> None:
    running, placement = server
    config = placement["configurations"][0]
    browser.get(running.url + "/ui")
    assert browser.current_url == running.url + "/ui/signin"  # redirected: not signed in
    browser.find_element(By.ID, "token").send_keys("not-a-token")
    _follow(browser, browser.find_element(By.ID, "submit"))
    assert "unknown token" in browser.find_element(By.ID, "error").text
    browser.find_element(By.ID, "token").send_keys(TOKENS["reader"][0])
    _follow(browser, browser.find_element(By.ID, "submit"))

    # Fleet: the Secure cookie was kept over plain http on 127.0.0.1 (a secure context for Chromium)
    assert browser.current_url == running.url + "/ui"
    assert browser.find_element(By.ID, "title").text == "Fleet"
    cookie = browser.get_cookie("nfvplace_ui")
    assert cookie is not None
    assert (cookie["secure"], cookie["httpOnly"], cookie["sameSite"]) == (True, True, "Strict")
    assert browser.execute_script("return document.cookie") == ""  # HttpOnly: no script sees it
    cells = browser.find_elements(By.CSS_SELECTOR, "#heatmap g.cell")
    assert {c.get_attribute("data-host") for c in cells} == {d["id"] for d in host_documents()}
    _shot(browser, tmp_path, "fleet")

    # The host of the placement, with its pins overlaid
    _follow(browser, browser.find_element(By.LINK_TEXT, config["host"]))
    assert browser.find_element(By.ID, "title").text == f"Host {config['host']}"
    for pu in config["cpu_sets"][0]["vcpu_pins"].values():
        classes = browser.find_element(By.ID, f"pu-{pu}").get_attribute("class") or ""
        assert {"dedicated", "vm-0"} <= set(classes.split())
    assert placement["id"] in browser.find_element(By.ID, "placements").text
    _shot(browser, tmp_path, "host")

    # Placements list, then a dry run that fits and shows the picture
    _follow(browser, browser.find_element(By.LINK_TEXT, "Placements"))
    assert placement["id"] in browser.find_element(By.ID, "placements").text
    _follow(browser, browser.find_element(By.LINK_TEXT, "Dry run"))
    browser.find_element(By.ID, "descriptor").send_keys(du_yaml())
    _follow(browser, browser.find_element(By.ID, "place"))
    assert "nothing claimed" in browser.find_element(By.ID, "outcome").text
    assert browser.find_elements(By.CSS_SELECTOR, "#picture svg g.pu.vm-0")
    _shot(browser, tmp_path, "dry-run")

    # Signing out drops the cookie: back to the form
    _follow(browser, browser.find_element(By.CSS_SELECTOR, "header form button"))
    assert browser.current_url == running.url + "/ui/signin"
    assert browser.get_cookie("nfvplace_ui") is None
    browser.get(running.url + "/ui")
    assert browser.current_url == running.url + "/ui/signin"
