"""The partner dashboard in a real headless Chromium against the real server process.

The flow of a partner user: the operator invites (`grantmatch partner user add`) → the
one-time link → set a password → sign in → the quota on the overview → create an API
token → the token works against `GET /api/v1/grants` → revoke it → the API answers 401;
matching requests crossing 90 % of the quota show the notice; a user of another
partner neither sees nor revokes the tokens; a form posted without its CSRF token is
refused. Every page is asserted on its content and saved as a screenshot
(`GRANTMATCH_SCREENSHOTS`, default `<target>/dashboard-screenshots`).

The server runs on the tiny test catalogue (12 programmes, embedded at import) so that
matching works without the 1,434-programme import.
"""

from __future__ import annotations

import re
import time
from typing import Iterator

import pytest
from selenium.common.exceptions import StaleElementReferenceException, WebDriverException
from selenium.webdriver.support.ui import WebDriverWait

from conftest import TINY
from dashboard_browser import Service, chromium, close, screenshot_dir

PASSWORD = "correct horse battery"
PROFILE = {
    "organization_id": "verein-42",
    "organization_profile": {
        "description": "Gemeinnütziger Sportverein in Bayern mit Jugendarbeit, "
        "wir wollen unser Vereinsheim energetisch sanieren und digitalisieren.",
        "locale": "de",
    },
}


@pytest.fixture(scope="module")
def service(tmp_path_factory, cli_binary, model_dir) -> Iterator[Service]:
    data = tmp_path_factory.mktemp("dashboard") / "data"
    data.mkdir()
    svc = Service(cli_binary, data, model_dir)
    svc.cli("import", str(TINY))
    svc.cli("partner", "create", "--name", "Verbund A", "--tier", "starter")
    svc.cli("partner", "create", "--name", "Verbund B", "--tier", "starter")
    svc.start()
    try:
        yield svc
    finally:
        svc.stop()


@pytest.fixture()
def browser() -> Iterator[object]:
    driver, profile = chromium()
    try:
        yield driver
    finally:
        close(driver, profile)


def shoot(driver, name: str) -> None:
    path = screenshot_dir() / f"{name}.png"
    assert driver.save_screenshot(str(path)), path


def wait_title(driver, title: str) -> None:
    """Waits for the page titled `title` (forms navigate after the click returns)."""
    try:
        WebDriverWait(driver, 15).until(lambda d: d.title == f"{title} · grantmatch")
    except Exception:
        raise AssertionError(
            f"expected the page {title!r}, got {driver.title!r} at {driver.current_url}:\n"
            + driver.find_element("tag name", "body").text
        )


def text(driver) -> str:
    return driver.find_element("tag name", "body").text


def fill(driver, name: str, value: str) -> None:
    field = driver.find_element("name", name)
    field.clear()
    field.send_keys(value)


def gone(element):
    """A wait condition: true once `element` has left the document. Chromium reports a
    replaced node as a stale element or, while the next page is being built, as "Node
    with given id does not belong to the document"; both mean the page was left."""

    def check(_driver) -> bool:
        try:
            element.is_enabled()
            return False
        except StaleElementReferenceException:
            return True
        except WebDriverException as e:
            if "does not belong to the document" in str(e):
                return True
            raise

    return check


def click(driver, button_text: str, within: str = "main") -> None:
    """Clicks the submit button labelled `button_text` inside `within` and waits until
    the browser has left the page (the next page may have the same title)."""
    buttons = [
        b
        for b in driver.find_elements("css selector", f"{within} button")
        if b.text.strip() == button_text
    ]
    assert buttons, f"no button {button_text!r} on {driver.current_url}:\n{text(driver)}"
    old = driver.find_element("tag name", "html")
    buttons[0].click()
    WebDriverWait(driver, 15).until(gone(old), f"{button_text!r} did not submit")


def sign_up(service: Service, driver, partner: str, email: str) -> None:
    """Invite through the CLI, set the password from the link, sign in."""
    link = service.cli("partner", "user", "add", "--partner", partner, "--email", email)
    assert link.startswith("/dashboard/invite/"), link
    driver.get(service.base + link)
    wait_title(driver, "Set your password")
    assert email in text(driver)
    shoot(driver, "invite")
    fill(driver, "password", PASSWORD)
    click(driver, "Set password")
    wait_title(driver, "Sign in")
    shoot(driver, "sign-in")
    fill(driver, "email", email)
    fill(driver, "password", PASSWORD)
    click(driver, "Sign in")
    wait_title(driver, "Overview")


def create_token(driver) -> str:
    driver.find_element("link text", "API tokens").click()
    wait_title(driver, "API tokens")
    click(driver, "Create token")
    wait_title(driver, "API tokens")
    token = driver.find_element("id", "new-token").get_attribute("value")
    assert token and token.startswith("gm_"), token
    return token


def token_ids(driver) -> list:
    return [
        row.get_attribute("data-token")
        for row in driver.find_elements("css selector", "tr[data-token]")
    ]


def test_partner_flow_in_the_browser(service: Service, browser) -> None:
    d = browser
    sign_up(service, d, "Verbund A", "anna@example.org")
    body = text(d)
    assert "Verbund A" in body
    assert "Matching requests: 0 / 10" in body, body
    assert re.search(r"Quarter \d{4}-Q[1-4]", body), body
    assert not d.find_elements("css selector", "[role=alert]"), body
    shoot(d, "overview")

    token = create_token(d)
    assert "shown only now" in text(d)
    copy = d.find_element("css selector", "button[data-copy=new-token]")
    assert copy.is_displayed(), "the copy script did not show its button"
    copy.click()
    # The clipboard answers asynchronously.
    WebDriverWait(d, 10).until(lambda _: copy.text == "Copied", f"button says {copy.text!r}")
    shoot(d, "token-created")
    status, answer = service.api("GET", "/api/v1/grants", token)
    assert status == 200, answer
    assert answer["meta"]["total_count"] == 12, answer["meta"]

    # Nine matchings of ten: the overview shows the 90 % notice.
    for _ in range(9):
        status, answer = service.match(token, PROFILE)
        assert status == 200, answer
    d.find_element("link text", "Overview").click()
    wait_title(d, "Overview")
    notice = d.find_element("css selector", "[role=alert]").text
    assert "90 %" in notice, notice
    assert "Matching requests: 9 / 10" in text(d)
    shoot(d, "overview-warning")
    d.get(service.base + "/dashboard?lang=de")
    wait_title(d, "Übersicht")
    assert "Warnung: 90 %" in text(d)
    d.get(service.base + "/dashboard?lang=en")
    wait_title(d, "Overview")

    # The matching history lists the nine requests; a result leads to its programme.
    d.find_element("link text", "Matching history").click()
    wait_title(d, "Matching history")
    rows = d.find_elements("css selector", "tr[data-matching]")
    assert len(rows) == 9, text(d)
    assert "verein-42" in rows[0].text and "completed" in rows[0].text, rows[0].text
    shoot(d, "matching-history")
    link = rows[0].find_element("css selector", "ol a")
    title = link.text
    link.click()
    wait_title(d, title)
    assert "Provider" in text(d) and "Back to the matching history" in text(d)
    shoot(d, "grant")

    # Usage: the figures of /usage/stats.
    d.find_element("link text", "Usage").click()
    wait_title(d, "Usage")
    figure = lambda name: d.find_element("css selector", f"tr[data-figure={name}] td").text
    assert figure("matching_requests") == "9", text(d)
    assert figure("grants_requests") == "1", text(d)
    assert figure("active_organizations") == "1", text(d)
    assert "POST /api/v1/matching" in text(d)
    assert d.find_element("link text", "Download as CSV").get_attribute("href").endswith(
        "/dashboard/usage.csv?period=quarter"
    )
    shoot(d, "usage")
    d.get(service.base + "/dashboard/usage?lang=de")
    wait_title(d, "Nutzung")
    assert "Nach Endpunkt" in text(d) and "Als CSV herunterladen" in text(d)
    shoot(d, "usage-de")
    d.get(service.base + "/dashboard/usage?lang=en")
    wait_title(d, "Usage")

    # Qualification: the prompt as read, the assessment running in the server, categories.
    d.find_element("link text", "Qualification").click()
    wait_title(d, "Qualification and categories")
    assert "No prompt set" in text(d)
    fill(
        d,
        "prompt",
        "Programme, die gemeinnützige Vereine in Sachsen für Jugendarbeit und soziale "
        "Projekte nutzen können; keine Kredite.",
    )
    click(d, "Save prompt")
    wait_title(d, "Qualification and categories")
    reading = d.find_element("css selector", "ul.reading").text
    assert "Sachsen" in reading, reading
    deadline = time.monotonic() + 120
    while "Qualification: 12 / 12 programmes assessed" not in text(d):
        assert time.monotonic() < deadline, text(d)
        time.sleep(1)
        d.refresh()
    fill(d, "name", "Klimaschutz")
    fill(d, "name_en", "Climate protection")
    fill(d, "keywords", "Klima, CO2")
    click(d, "Add category")
    wait_title(d, "Qualification and categories")
    rows = d.find_elements("css selector", "tr[data-category]")
    assert len(rows) == 1 and "Climate protection" in rows[0].text, text(d)
    shoot(d, "qualification")
    click(d, "Remove", within="tr[data-category]")
    wait_title(d, "Qualification and categories")
    assert not d.find_elements("css selector", "tr[data-category]")

    # Revoke: the row says so and the API refuses the token.
    d.find_element("link text", "API tokens").click()
    wait_title(d, "API tokens")
    assert token not in d.page_source
    ids = token_ids(d)
    assert len(ids) == 1, ids
    click(d, "Revoke", within=f"tr[data-token='{ids[0]}']")
    wait_title(d, "API tokens")
    row = d.find_element("css selector", f"tr[data-token='{ids[0]}']")
    assert "revoked" in row.text, row.text
    shoot(d, "tokens")
    status, answer = service.api("GET", "/api/v1/grants", token)
    assert status == 401, answer

    # Sign out: the pages lead back to the sign-in form.
    click(d, "Sign out", within="nav")
    wait_title(d, "Sign in")
    d.get(service.base + "/dashboard/tokens")
    wait_title(d, "Sign in")


def test_phone_width_has_no_horizontal_scrolling(service: Service, browser) -> None:
    d = browser
    sign_up(service, d, "Verbund A", "phone@example.org")
    d.set_window_size(390, 844)
    for path, title in [
        ("/dashboard", "Overview"),
        ("/dashboard/tokens", "API tokens"),
        ("/dashboard/usage", "Usage"),
        ("/dashboard/matching", "Matching history"),
        ("/dashboard/qualification", "Qualification and categories"),
    ]:
        d.get(service.base + path)
        wait_title(d, title)
        overflow = d.execute_script(
            "return document.documentElement.scrollWidth - document.documentElement.clientWidth"
        )
        assert overflow <= 0, f"{path} is {overflow}px wider than a phone"
    shoot(d, "phone-qualification")


def test_another_partner_neither_sees_nor_revokes_the_tokens(service: Service, browser) -> None:
    d = browser
    a_token = service.cli(
        "token", "create", "--partner", "Verbund A", "--scopes", "grants:read"
    )
    a_id = service.cli("token", "list", "--partner", "Verbund A").splitlines()[-1].split("\t")[0]
    sign_up(service, d, "Verbund B", "bert@example.org")
    assert "Verbund B" in text(d) and "Verbund A" not in text(d)
    d.find_element("link text", "API tokens").click()
    wait_title(d, "API tokens")
    assert a_id not in d.page_source
    assert token_ids(d) == []
    # A forged revoke with B's own session and CSRF token: 404, the token still works.
    csrf = d.find_element("css selector", "input[name=csrf]").get_attribute("value")
    cookie = f"gm_session={d.get_cookie('gm_session')['value']}"
    status, body = service.form_post(f"/dashboard/tokens/{a_id}/revoke", cookie, {"csrf": csrf})
    assert status == 404, body
    status, answer = service.api("GET", "/api/v1/grants", a_token)
    assert status == 200, answer


def test_a_form_without_its_csrf_token_is_refused(service: Service, browser) -> None:
    d = browser
    sign_up(service, d, "Verbund B", "berta@example.org")
    before = service.cli("token", "list", "--partner", "Verbund B")
    d.find_element("link text", "API tokens").click()
    wait_title(d, "API tokens")
    field = d.find_element("css selector", "form[action='/dashboard/tokens'] input[name=csrf]")
    d.execute_script("arguments[0].remove()", field)
    click(d, "Create token")
    WebDriverWait(d, 15).until(lambda drv: "CSRF" in text(drv))
    assert "403" in text(d), text(d)
    assert service.cli("token", "list", "--partner", "Verbund B") == before
